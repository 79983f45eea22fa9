// The connection limits of `serveHttp({connections})`: handed to the core and in effect (a bare
// connect is closed past the header timeout), and bad limits rejected with code USAGE.

import assert from 'node:assert/strict'
import net from 'node:net'
import { test } from 'node:test'
import { mcpaxle } from './helpers.mjs'

const { Server } = mcpaxle

function echoServer() {
  return new Server({ name: 'conn-test', version: '1' }).tool({ name: 'echo' }, async () => 'ok')
}

/** Milliseconds until the server closes a connection that sends nothing (null: not in `within`). */
function closedAfter(port, within) {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const socket = net.connect(port, '127.0.0.1')
    const timer = setTimeout(() => {
      socket.destroy()
      resolve(null)
    }, within)
    socket.on('error', reject)
    socket.on('data', () => {})
    socket.on('close', () => {
      clearTimeout(timer)
      resolve(Date.now() - started)
    })
  })
}

test('connection limits reach the core: a bare connect is closed past headerReadTimeoutMs', async () => {
  const handle = await echoServer().serveHttp({ port: 0, connections: { headerReadTimeoutMs: 200, http2KeepAliveIntervalMs: 0, maxConnections: 50 } })
  try {
    const ms = await closedAfter(handle.port, 5000)
    assert.ok(ms !== null && ms >= 150, `closed after ${ms} ms`)
  } finally {
    await handle.close()
  }
})

test('bad connection limits reject with USAGE, naming the field', async () => {
  for (const [connections, message] of [
    [{ maxConnections: 0 }, /maxConnections must be at least 1/],
    [{ idleTimeout: 5 }, /unknown field `idleTimeout`/],
    [{ idleTimeoutMs: -5 }, /invalid value/],
    ['fast', /connections: invalid type: string "fast", expected struct ConnectionLimits/],
  ]) {
    await assert.rejects(echoServer().serveHttp({ port: 0, connections }), { kind: 'usage', message })
  }
})

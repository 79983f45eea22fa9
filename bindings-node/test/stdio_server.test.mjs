// A JavaScript server over stdio: the bound on what waits to be written (maxOutboundQueue) stops
// the server reading a client that does not read its stdout, and a bad value is refused.

import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import path from 'node:path'
import { describe, test } from 'node:test'
import { pkg, runNode, sleep } from './helpers.mjs'

const INDEX = JSON.stringify(path.join(pkg, 'index.js'))

const SERVER = `
  import { createRequire } from 'node:module'
  const { Server } = createRequire(import.meta.url)(${INDEX})
  const server = new Server({ name: 'backpressure', version: '1' }).tool({ name: 'big' }, async () => {
    process.stderr.write('called\\n')
    return 'x'.repeat(65536)
  })
  const queue = process.argv.at(-1) === 'default' ? {} : { maxOutboundQueue: Number(process.argv.at(-1)) }
  await server.serveStdio(queue).closed
`

const call = (id) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name: 'big',
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
      },
    },
  }) + '\n'

/** Sends `n` calls answering 64 KiB each without reading stdout: the calls started after a
 * pause, and the answers that arrive once stdout is read. */
async function callsWhileStdoutUnread(queue, n) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', SERVER, queue], { stdio: ['pipe', 'pipe', 'pipe'] })
  let started = 0
  child.stderr.on('data', (d) => (started += String(d).split('called').length - 1))
  child.stdout.pause()
  for (let i = 1; i <= n; i++) child.stdin.write(call(i))
  await sleep(1500)
  const before = started
  let answered = 0
  let buffered = ''
  await new Promise((resolve, reject) => {
    child.on('error', reject)
    child.stdout.on('data', (d) => {
      buffered += d
      let nl
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl)
        buffered = buffered.slice(nl + 1)
        if (JSON.parse(line).id !== undefined && ++answered === n) resolve()
      }
    })
    child.stdout.resume()
  })
  child.stdin.end()
  await new Promise((resolve) => child.on('exit', resolve))
  return { started: before, answered }
}

describe('stdio server', () => {
  test('maxOutboundQueue stops reading a client that does not read', async () => {
    const bounded = await callsWhileStdoutUnread('2', 40)
    assert.ok(bounded.started <= 8, `${bounded.started} calls started with maxOutboundQueue 2 and stdout unread`)
    assert.equal(bounded.answered, 40)
    // The default (1024) takes all 40 in: the option is what made the difference.
    const unbounded = await callsWhileStdoutUnread('default', 40)
    assert.equal(unbounded.started, 40)
    assert.equal(unbounded.answered, 40)
  })

  test('maxOutboundQueue 0 is a usage error', async () => {
    const r = await runNode(
      `
      import { createRequire } from 'node:module'
      const { Server } = createRequire(import.meta.url)(${INDEX})
      try {
        await new Server({ name: 's', version: '1' }).serveStdio({ maxOutboundQueue: 0 }).closed
      } catch (e) {
        console.log('refused: ' + e.message)
      }
    `,
    )
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stdout, /refused: .*maxOutboundQueue: must be at least 1/)
  })
})

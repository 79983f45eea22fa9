// setLogHandler: the core's log events (here: a tool handler failing unexpectedly, which the core
// logs as an error) reach the application's handler with level, target, message and fields, on
// the JavaScript thread; nothing after `setLogHandler(null)`; a handler that throws is reported
// and keeps receiving; NODE_DEBUG=mcpaxle prints them to stderr with no handler set.

import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { test } from 'node:test'
import { mcpaxle, pkg } from './helpers.mjs'

const { Client, Server, setLogHandler } = mcpaxle

function failingServer() {
  return new Server({ name: 'logs', version: '1.0.0' }).tool({ name: 'fails' }, () => {
    throw new Error('the disk is full')
  })
}

async function until(predicate, what) {
  for (let i = 0; i < 200 && !predicate(); i++) await new Promise((r) => setTimeout(r, 25))
  assert.ok(predicate(), what)
}

test('the core\'s log events reach the handler', async () => {
  const records = []
  let throws = true
  const warnings = []
  const onWarning = (w) => warnings.push(String(w.message))
  process.on('warning', onWarning)
  setLogHandler((r) => {
    records.push(r)
    if (throws) {
      throws = false
      throw new Error('a broken logger')
    }
  })
  const client = await Client.connectInMemory(failingServer())
  try {
    const failing = () => records.filter((r) => r.target === 'mcpaxle::server::dispatch')
    await client.callTool('fails')
    await until(() => failing().length === 1, 'an error record from the dispatcher')
    const [r] = failing()
    assert.equal(r.level, 'error')
    assert.match(r.message, /the disk is full/)
    assert.match(r.fields.handler, /fails/)
    await until(() => warnings.some((w) => w.includes('a broken logger')), 'the handler\'s throw reported')

    // It threw once and still receives the next.
    await client.callTool('fails')
    await until(() => failing().length === 2, 'a second record after the handler threw')

    setLogHandler(null)
    await client.callTool('fails')
    await new Promise((r) => setTimeout(r, 300))
    assert.equal(failing().length, 2, 'nothing after setLogHandler(null)')
  } finally {
    setLogHandler(null)
    process.off('warning', onWarning)
    await client.close()
  }
  assert.throws(() => setLogHandler('console'), TypeError)
})

test('NODE_DEBUG=mcpaxle prints them with no handler set', () => {
  const script = `
    const { Client, Server } = require(${JSON.stringify(pkg)})
    const server = new Server({ name: 'debug', version: '1.0.0' }).tool({ name: 'fails' }, () => { throw new Error('the disk is full') })
    Client.connectInMemory(server).then(async (c) => { await c.callTool('fails'); await new Promise((r) => setTimeout(r, 300)); await c.close() })
  `
  for (const [env, shown] of [[{ NODE_DEBUG: 'mcpaxle' }, true], [{}, false]]) {
    const out = spawnSync(process.execPath, ['-e', script], { env: { ...process.env, NODE_DEBUG: '', ...env }, encoding: 'utf8', timeout: 30_000 })
    assert.equal(out.status, 0, out.stderr)
    assert.equal(/MCPAXLE \d+: ERROR mcpaxle::server::dispatch: .*the disk is full/.test(out.stderr), shown, out.stderr)
  }
})

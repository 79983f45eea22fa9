// Legacy (2025-11-25) session limits set from JavaScript reach the core: a server with a quota
// of 2 sessions per peer address and a 300 ms handshake timeout, driven over raw HTTP.

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { mcpaxle, sleep } from './helpers.mjs'

const { Server } = mcpaxle

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }
const PING = { jsonrpc: '2.0', id: 2, method: 'ping' }

describe('legacy session limits', () => {
  let handle

  before(async () => {
    const server = new Server({ name: 'limits', version: '1', legacy: { maxSessionsPerPeer: 2, uninitializedTimeoutMs: 300 } })
    handle = await server.serveHttp({ host: '127.0.0.1', port: 0 })
  })

  after(async () => {
    await handle.close()
  })

  async function post(body, session) {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
    if (session) Object.assign(headers, { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' })
    const r = await fetch(handle.url, { method: 'POST', headers, body: JSON.stringify(body) })
    await r.arrayBuffer()
    return { status: r.status, session: r.headers.get('mcp-session-id') }
  }

  test('the per-peer quota and the handshake timeout are the ones set', async () => {
    const sids = []
    for (let i = 0; i < 3; i++) {
      const r = await post(INIT)
      assert.equal(r.status, 200)
      assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, r.session)).status, 202)
      sids.push(r.session)
    }
    // Two per peer address: the third session made room by ending the first.
    const statuses = []
    for (const s of sids) statuses.push((await post(PING, s)).status)
    assert.deepEqual(statuses, [404, 200, 200])
    // A handshake that stops at initialize ends after 300 ms, not after the 30-minute idle
    // timeout that keeps the initialized sessions.
    const halfOpen = await post(INIT)
    assert.equal(halfOpen.status, 200)
    await sleep(1000)
    assert.equal((await post(PING, halfOpen.session)).status, 404)
    assert.equal((await post(PING, sids[2])).status, 200)
  })

  test('a duration that is not a positive number of milliseconds is a usage error', () => {
    assert.throws(() => new Server({ name: 'x', version: '1', legacy: { idleTimeoutMs: -1 } }), /legacy\.idleTimeoutMs: invalid value: integer `-1`, expected u64/)
  })
})

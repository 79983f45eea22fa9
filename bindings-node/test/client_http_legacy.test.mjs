// The client over Streamable HTTP in the legacy era (a 2025-11-25 session against the same
// Rust server), and an HTTP server that dies in the middle of a call.

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { handlers, mcpaxle, sleep, startEverything, startJsServer, text } from './helpers.mjs'

const { Client } = mcpaxle

describe('client over HTTP, legacy era (Rust everything server)', () => {
  let server
  before(async () => {
    server = await startEverything()
  })
  after(async () => {
    await server?.stop()
  })

  test('a 2025-11-25 session: initialize, session id, requests from the server', async () => {
    const h = handlers()
    const client = await Client.connectHttp(server.url, { ...h, protocolVersions: ['2025-11-25'] })
    try {
      assert.equal(client.era, 'legacy')
      assert.equal(client.protocolVersion, '2025-11-25')
      assert.ok(client.sessionId, 'a legacy HTTP session has an Mcp-Session-Id')
      assert.equal(client.serverInfo.name, 'mcpaxle-everything-server')
      assert.equal(text(await client.callTool('test_simple_text', {})), 'This is a simple text response for testing.')
      assert.match(text(await client.callTool('test_elicitation', { message: 'Who?' })), /action=accept/)
      assert.equal(text(await client.callTool('test_sampling', { prompt: 'Capital?' })), 'LLM response: Paris')
      assert.equal(text(await client.callTool('test_input_required_result_list_roots', {})), 'The client has 2 root(s)')
      assert.deepEqual(h.calls, { elicitation: 1, sampling: 1, roots: 1 })
      const seen = []
      await client.callTool('test_tool_with_progress', {}, { onProgress: (p) => seen.push(p.progress) })
      assert.deepEqual(seen, [0, 50, 100])
      const sub = await client.subscribe({ toolsListChanged: true, resourceSubscriptions: ['test://watched-resource'] })
      await client.callTool('test_trigger_resource_update', {})
      const n = await sub.next()
      assert.equal(n.value.method, 'notifications/resources/updated')
      sub.close()
      await assert.rejects(client.callTool('no_such_tool', {}), { kind: 'invalid_params', code: -32602 })
    } finally {
      await client.close()
    }
  })

  test('era detection prefers the modern revision when the server speaks both', async () => {
    const client = await Client.connectHttp(server.url, { protocolVersions: ['2026-07-28', '2025-11-25'] })
    try {
      assert.equal(client.era, 'modern')
    } finally {
      await client.close()
    }
  })
})

describe('an HTTP server that dies in the middle of a call', () => {
  test('the call rejects promptly with TRANSPORT', async () => {
    const server = await startJsServer()
    const client = await Client.connectHttp(server.url)
    try {
      let started
      const progressed = new Promise((resolve) => (started = resolve))
      const call = client.callTool('slow', { ms: 30_000 }, { onProgress: started })
      await progressed
      const t0 = Date.now()
      server.proc.kill('SIGKILL')
      await assert.rejects(call, { kind: 'transport' })
      assert.ok(Date.now() - t0 < 1000, `rejected after ${Date.now() - t0} ms`)
      await assert.rejects(client.callTool('echo', { text: 'x' }), { kind: 'transport' })
    } finally {
      await client.close()
      await server.stop()
    }
  })

  test('connecting to nothing fails with TRANSPORT', async () => {
    const server = await startJsServer()
    const url = server.url
    await server.stop()
    await sleep(50)
    await assert.rejects(Client.connectHttp(url), { kind: 'transport' })
  })
})

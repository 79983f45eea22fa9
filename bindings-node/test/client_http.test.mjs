// The client against the Rust everything server over Streamable HTTP, modern era (2026-07-28):
// every method, MRTR through the input handlers, progress, logs, subscriptions, errors.

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { handlers, mcpaxle, startEverything, text } from './helpers.mjs'

const { Client, McpError, ErrorKind } = mcpaxle

describe('client over HTTP, modern era (Rust everything server)', () => {
  let server
  let client
  let h

  before(async () => {
    server = await startEverything()
    h = handlers()
    client = await Client.connectHttp(server.url, {
      clientInfo: { name: 'node-test', version: '1.0.0' },
      onElicitation: h.onElicitation,
      onSampling: h.onSampling,
      onRoots: h.onRoots,
    })
  })

  after(async () => {
    await client?.close()
    await server?.stop()
  })

  test('connects in the modern era and knows the server', async () => {
    assert.equal(client.era, 'modern')
    assert.equal(client.protocolVersion, '2026-07-28')
    assert.equal(client.serverInfo.name, 'mcpaxle-everything-server')
    assert.match(client.instructions, /every fixture/)
    assert.equal(client.sessionId, undefined)
    const d = await client.discover()
    assert.ok(d.supportedVersions.includes('2026-07-28'))
    assert.ok(d.capabilities.tools)
  })

  test('lists tools, resources, templates and prompts', async () => {
    const page = await client.listTools()
    assert.ok(Array.isArray(page.tools))
    const all = await client.listAllTools()
    assert.ok(all.some((t) => t.name === 'test_simple_text'))
    assert.ok((await client.listAllResources()).some((r) => r.uri === 'test://static-text'))
    assert.ok((await client.listResources()).resources.length > 0)
    assert.ok((await client.listAllResourceTemplates()).some((t) => t.uriTemplate === 'test://template/{id}/data'))
    assert.ok((await client.listResourceTemplates()).resourceTemplates.length > 0)
    assert.ok((await client.listAllPrompts()).some((p) => p.name === 'test_simple_prompt'))
    assert.ok((await client.listPrompts()).prompts.length > 0)
  })

  test('calls tools', async () => {
    const r = await client.callTool('test_simple_text', {})
    assert.equal(text(r), 'This is a simple text response for testing.')
    assert.equal(r.resultType, 'complete')
    const e = await client.callTool('test_error_handling')
    assert.equal(e.isError, true)
  })

  test('reads resources and templates, gets prompts, completes', async () => {
    const r = await client.readResource('test://static-text')
    assert.equal(r.contents[0].text, 'This is the content of the static text resource.')
    const t = await client.readResource('test://template/42/data')
    assert.equal(JSON.parse(t.contents[0].text).id, '42')
    const p = await client.getPrompt('test_prompt_with_arguments', { arg1: 'a', arg2: 'b' })
    assert.match(p.messages[0].content.text, /arg1='a', arg2='b'/)
    const c = await client.complete({ type: 'ref/prompt', name: 'test_prompt_with_arguments' }, { name: 'arg1', value: 'te' })
    assert.deepEqual(c.completion.values, ['test', 'testing', 'tested'])
    const raw = await client.request('tools/call', { name: 'test_simple_text', arguments: {} })
    assert.equal(raw.content[0].type, 'text')
  })

  test('server errors reject with a code and the JSON-RPC code', async () => {
    await assert.rejects(client.callTool('no_such_tool', {}), (e) => {
      assert.ok(e instanceof McpError)
      assert.ok(e instanceof Error)
      assert.equal(e.kind, ErrorKind.INVALID_PARAMS)
      assert.equal(e.code, -32602)
      return true
    })
    await assert.rejects(client.readResource('test://nothing-here'), (e) => e.kind === 'invalid_params' || e.kind === 'remote')
    await assert.rejects(client.callTool('test_simple_text', 'not an object'), { kind: 'usage' })
  })

  test('MRTR: elicitation, sampling and roots through the input handlers', async () => {
    const before = { ...h.calls }
    assert.equal(text(await client.callTool('test_input_required_result_elicitation', {})), 'Hello, Ada!')
    assert.match(text(await client.callTool('test_input_required_result_sampling', {})), /Paris/)
    assert.equal(text(await client.callTool('test_input_required_result_list_roots', {})), 'The client has 2 root(s)')
    assert.equal(text(await client.callTool('test_input_required_result_multiple_inputs', {})), 'Hello, Ada; 2 root(s)')
    assert.equal(text(await client.callTool('test_input_required_result_multi_round', {})), 'Rounds done: Ada and Ada')
    assert.match(text(await client.callTool('test_input_required_result_request_state', {})), /Hello, Ada \(state \{"started":true\}\)/)
    const p = await client.getPrompt('test_input_required_result_prompt', {})
    assert.match(p.messages[0].content.text, /poem for Ada/)
    assert.equal(h.calls.elicitation - before.elicitation, 6)
    assert.equal(h.calls.sampling - before.sampling, 2)
    assert.equal(h.calls.roots - before.roots, 2)
  })

  test('MRTR: concurrent calls never mix', async () => {
    const names = [
      'test_input_required_result_elicitation',
      'test_input_required_result_sampling',
      'test_input_required_result_list_roots',
      'test_input_required_result_multi_round',
    ]
    const results = await Promise.all([...names, ...names].map((n) => client.callTool(n, {})))
    const texts = results.map(text)
    for (let i = 0; i < names.length; i++) assert.equal(texts[i], texts[i + names.length])
    assert.deepEqual(texts.slice(0, 4).map((t) => t.slice(0, 5)), ['Hello', 'The m', 'The c', 'Round'])
  })

  test('MRTR: a failing input handler fails the call with its code', async () => {
    const c = await Client.connectHttp(server.url, {
      onElicitation: async () => {
        throw new McpError('invalid_params', 'no name today')
      },
    })
    try {
      await assert.rejects(c.callTool('test_input_required_result_elicitation', {}), (e) => {
        assert.equal(e.kind, 'invalid_params')
        assert.match(e.message, /no name today/)
        return true
      })
      // A plain Error is an internal error.
      c.onElicitation(() => {
        throw new Error('boom')
      })
      await assert.rejects(c.callTool('test_input_required_result_elicitation', {}), { kind: 'internal' })
      // Replaced handler.
      c.onElicitation(async () => ({ action: 'accept', content: { name: 'Grace' } }))
      assert.equal(text(await c.callTool('test_input_required_result_elicitation', {})), 'Hello, Grace!')
    } finally {
      await c.close()
    }
  })

  test('capabilities: declared by the handlers given when connecting', async () => {
    const c = await Client.connectHttp(server.url, { onRoots: async () => ({ roots: [] }) })
    try {
      await assert.rejects(c.callTool('test_missing_capability', {}), (e) => {
        assert.equal(e.kind, 'missing_required_client_capability')
        assert.equal(e.code, -32021)
        return true
      })
      assert.equal(text(await c.callTool('test_input_required_result_capabilities', {})), 'Listed roots')
      assert.throws(() => c.onSampling(async () => ({})), { kind: 'usage' })
    } finally {
      await c.close()
    }
  })

  test('progress notifications arrive in order, before the result', async () => {
    const seen = []
    const r = await client.callTool('test_tool_with_progress', {}, { onProgress: (p) => seen.push(p.progress) })
    assert.equal(text(r), 'Progress tool completed')
    assert.deepEqual(seen, [0, 50, 100])
  })

  test('log messages go to the call that asked for them', async () => {
    const logs = []
    await client.callTool('test_logging_tool', {}, { logLevel: 'info', onLog: (m) => logs.push(m) })
    assert.deepEqual(logs.map((m) => m.data), ['Tool execution started', 'Tool processing data', 'Tool execution completed'])
    assert.equal(logs[0].level, 'info')
  })

  test('a signal aborted before the call rejects at once', async () => {
    const controller = new AbortController()
    controller.abort(new Error('never mind'))
    await assert.rejects(client.callTool('test_simple_text', {}, { signal: controller.signal }), (e) => {
      assert.equal(e.kind, 'cancelled')
      assert.equal(e.cause.message, 'never mind')
      return true
    })
  })

  test('AbortSignal cancels a call waiting for input', async () => {
    const controller = new AbortController()
    let entered
    const waiting = new Promise((resolve) => (entered = resolve))
    const c = await Client.connectHttp(server.url, {
      onElicitation: () => {
        entered()
        return new Promise(() => {})
      },
    })
    try {
      const call = c.callTool('test_input_required_result_elicitation', {}, { signal: controller.signal })
      await waiting
      const t0 = Date.now()
      controller.abort()
      await assert.rejects(call, { kind: 'cancelled' })
      assert.ok(Date.now() - t0 < 1000)
    } finally {
      await c.close()
    }
  })

  test('subscriptions deliver list changes and resource updates', async () => {
    const sub = await client.subscribe({ toolsListChanged: true, resourceSubscriptions: ['test://watched-resource'] })
    assert.equal(sub.acknowledged.toolsListChanged, true)
    await client.callTool('test_trigger_tool_change', {})
    const first = await sub.next()
    assert.equal(first.done, false)
    assert.equal(first.value.method, 'notifications/tools/list_changed')
    const tools = await client.listAllTools()
    assert.ok(tools.some((t) => t.name === 'test_dynamic_tool'))
    await client.callTool('test_trigger_resource_update', {})
    for await (const n of sub) {
      assert.equal(n.method, 'notifications/resources/updated')
      assert.equal(n.params.uri, 'test://watched-resource')
      break // closes the subscription
    }
    assert.deepEqual(await sub.next(), { value: undefined, done: true })
    await client.callTool('test_trigger_tool_change', {}) // back to the original list
  })

  test('headers can be changed after connecting', async () => {
    client.setHeader('X-Test', 'yes')
    client.setHeader('X-Test', null)
    assert.equal(text(await client.callTool('test_simple_text', {})), 'This is a simple text response for testing.')
  })
})

// A JavaScript server served over HTTP (in this process) and called by the JavaScript client:
// handlers and their results, errors, MRTR asks, progress, cancellation, dynamic registries,
// caching (expiry and invalidation), a legacy session, and a response stream closed mid-call.

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { handlers, mcpaxle, sleep, text } from './helpers.mjs'

const { Client, Server, McpError, ToolError } = mcpaxle

describe('JavaScript server over HTTP, JavaScript client', () => {
  let server
  let handle
  let client
  const counts = { reads: 0, rounds: 0, cancelled: 0 }
  const h = handlers()

  before(async () => {
    server = new Server({
      name: 'js-test',
      version: '2.0.0',
      instructions: 'Test instructions',
      cache: { tools: { ttlMs: 60_000, cacheScope: 'public' } },
    })
    server
      .tool(
        { name: 'add', description: 'Adds', inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] } },
        async ({ a, b }) => String(a + b),
      )
      .tool({ name: 'structured' }, async () => ({ content: [{ type: 'text', text: '{"x":1}' }], structuredContent: { x: 1 } }))
      .tool({ name: 'tool_error' }, async () => {
        throw new ToolError('the model should read this')
      })
      .tool({ name: 'plain_error' }, async () => {
        throw new Error('unexpected')
      })
      .tool({ name: 'params_error' }, async () => {
        throw new McpError('invalid_params', 'bad input', { data: { field: 'a' } })
      })
      .tool({ name: 'sync_tool' }, () => 'sync result')
      .tool({ name: 'whoami' }, async (_args, ctx) =>
        JSON.stringify({ method: ctx.method, version: ctx.protocolVersion, client: ctx.clientInfo?.name, id: typeof ctx.requestId }),
      )
      .tool({ name: 'progress' }, async (_args, ctx) => {
        for (let i = 1; i <= 3; i++) ctx.progress(i, 3, `step ${i}`)
        return 'progressed'
      })
      .tool({ name: 'log' }, async (_args, ctx) => {
        ctx.log('info', { hello: 'world' }, 'js')
        ctx.log('debug', 'not sent at info')
        return String(ctx.logEnabled('info'))
      })
      .tool({ name: 'ask_all' }, async (_args, ctx) => {
        counts.rounds++
        const [name, sample, roots] = await Promise.all([
          ctx.elicit('name', { message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } }),
          ctx.sample('sample', { messages: [{ role: 'user', content: { type: 'text', text: 'Capital of France?' } }], maxTokens: 10 }),
          ctx.listRoots(),
        ])
        return `${name.content.name}/${sample.content.text}/${roots.roots.length}`
      })
      .tool({ name: 'stateful' }, async (_args, ctx) => {
        if (ctx.requestState === undefined) ctx.setRequestState({ step: 1 })
        const a = await ctx.elicit('first', { message: 'First?', requestedSchema: { type: 'object' } })
        const b = await ctx.elicit('second', { message: 'Second?', requestedSchema: { type: 'object' } })
        return `${a.action},${b.action},${JSON.stringify(ctx.requestState)}`
      })
      .tool({ name: 'wait_cancel' }, async (_args, ctx) => {
        await new Promise((resolve) => (ctx.signal.aborted ? resolve() : ctx.signal.addEventListener('abort', resolve)))
        counts.cancelled++
        return 'cancelled'
      })
      .tool({ name: 'poll' }, async (_args, ctx) => {
        ctx.progress(1, 3, 'before the close')
        ctx.closeStream(50)
        await sleep(150)
        ctx.progress(2, 3, 'while parked')
        await sleep(100)
        ctx.progress(3, 3, 'after the resume')
        return 'polled'
      })
      .tool({ name: 'slow' }, async ({ ms }) => {
        await sleep(ms)
        return 'slow done'
      })
      .resource({ uri: 'test://counted', name: 'counted', mimeType: 'text/plain' }, async (uri) => `read ${++counts.reads} of ${uri}`, {
        cache: { ttlMs: 300, cacheScope: 'public' },
      })
      .resourceTemplate({ uriTemplate: 'test://items/{id}', name: 'items' }, async (uri, vars) => ({
        contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(vars) }],
      }))
      .resourceTemplate({ uriTemplate: 'test://raw/{id}', name: 'raw' }, async (uri, vars) => ({
        contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(vars) }],
      }), { allowPathTraversal: true })
      .prompt({ name: 'greet', arguments: [{ name: 'who', required: true }] }, async ({ who }) => `Hello, ${who}!`)
      .completion({ type: 'ref/prompt', name: 'greet' }, async ({ argument, value }) => ['Ada', 'Alan', 'Grace'].filter((n) => n.startsWith(value) && argument === 'who'))
    handle = await server.serveHttp({ host: '127.0.0.1', port: 0 })
    client = await Client.connectHttp(handle.url, { onElicitation: h.onElicitation, onSampling: h.onSampling, onRoots: h.onRoots })
  })

  after(async () => {
    await client?.close()
    await handle?.close()
    await handle?.closed
  })

  test('serves its identity', async () => {
    assert.match(handle.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    assert.equal(client.era, 'modern')
    assert.deepEqual(client.serverInfo, { name: 'js-test', version: '2.0.0' })
    assert.equal(client.instructions, 'Test instructions')
  })

  test('tools: results, plain strings, structured content, sync handlers', async () => {
    assert.equal(text(await client.callTool('add', { a: 2, b: 3 })), '5')
    const s = await client.callTool('structured')
    assert.deepEqual(s.structuredContent, { x: 1 })
    assert.equal(text(await client.callTool('sync_tool')), 'sync result')
    const who = JSON.parse(text(await client.callTool('whoami', {})))
    assert.deepEqual(who, { method: 'tools/call', version: '2026-07-28', client: 'mcpaxle-node', id: 'number' })
  })

  test('tools: arguments are validated against the input schema', async () => {
    const r = await client.callTool('add', { a: 'x' })
    assert.equal(r.isError, true)
  })

  test('tools: ToolError and plain errors are isError results, protocol errors are JSON-RPC errors', async () => {
    const r = await client.callTool('tool_error')
    assert.equal(r.isError, true)
    assert.equal(text(r), 'the model should read this')
    const p = await client.callTool('plain_error')
    assert.equal(p.isError, true)
    assert.match(text(p), /unexpected/)
    await assert.rejects(client.callTool('params_error'), (e) => {
      assert.ok(e instanceof McpError)
      assert.equal(e.kind, 'invalid_params')
      assert.equal(e.code, -32602)
      assert.equal(e.message, 'bad input')
      assert.deepEqual(e.data, { field: 'a' })
      return true
    })
  })

  test('progress and logs reach the client', async () => {
    const seen = []
    assert.equal(text(await client.callTool('progress', {}, { onProgress: (p) => seen.push([p.progress, p.message]) })), 'progressed')
    assert.deepEqual(seen, [[1, 'step 1'], [2, 'step 2'], [3, 'step 3']])
    const logs = []
    assert.equal(text(await client.callTool('log', {}, { logLevel: 'info', onLog: (m) => logs.push(m) })), 'true')
    assert.deepEqual(logs.map((l) => [l.level, l.logger, l.data]), [['info', 'js', { hello: 'world' }]])
  })

  test('MRTR: concurrent asks share one round', async () => {
    counts.rounds = 0
    assert.equal(text(await client.callTool('ask_all', {})), 'Ada/Paris/2')
    assert.equal(counts.rounds, 2)
  })

  test('MRTR: several rounds and request state', async () => {
    assert.equal(text(await client.callTool('stateful', {})), 'accept,accept,{"step":1}')
  })

  test('cancellation reaches the handler as an AbortSignal', async () => {
    const controller = new AbortController()
    const call = client.callTool('wait_cancel', {}, { signal: controller.signal })
    await sleep(100)
    controller.abort()
    await assert.rejects(call, { kind: 'cancelled' })
    for (let i = 0; i < 50 && counts.cancelled === 0; i++) await sleep(20)
    assert.equal(counts.cancelled, 1)
  })

  test('a per-call timeout rejects with TIMEOUT', async () => {
    await assert.rejects(client.callTool('slow', { ms: 2000 }, { timeoutMs: 100 }), { kind: 'timeout' })
  })

  test('resources, templates, prompts, completions', async () => {
    assert.ok((await client.listAllResources()).some((r) => r.uri === 'test://counted'))
    const t = await client.readResource('test://items/7')
    assert.deepEqual(JSON.parse(t.contents[0].text), { id: '7' })
    // Path traversal in a variable is refused before the handler runs, unless the template opts out.
    await assert.rejects(client.readResource('test://items/..%2Fsecret'), { kind: 'invalid_params', message: /path traversal/ })
    const raw = await client.readResource('test://raw/..%2Fsecret')
    assert.deepEqual(JSON.parse(raw.contents[0].text), { id: '../secret' })
    const p = await client.getPrompt('greet', { who: 'Ada' })
    assert.equal(p.messages[0].content.text, 'Hello, Ada!')
    await assert.rejects(client.getPrompt('greet', {}), { kind: 'invalid_params' })
    const c = await client.complete({ type: 'ref/prompt', name: 'greet' }, { name: 'who', value: 'A' })
    assert.deepEqual(c.completion.values, ['Ada', 'Alan'])
  })

  test('cache: a read is served from the cache until its ttlMs expires', async () => {
    counts.reads = 0
    const a = await client.readResource('test://counted')
    const b = await client.readResource('test://counted')
    assert.equal(a.contents[0].text, b.contents[0].text)
    assert.equal(counts.reads, 1)
    await client.readResource('test://counted', { bypassCache: true })
    assert.equal(counts.reads, 2)
    await sleep(400)
    await client.readResource('test://counted')
    assert.equal(counts.reads, 3)
  })

  test('cache: an updated notification invalidates the cached read', async () => {
    counts.reads = 0
    await client.readResource('test://counted', { bypassCache: true })
    await client.readResource('test://counted')
    assert.equal(counts.reads, 1)
    const sub = await client.subscribe({ resourceSubscriptions: ['test://counted'] })
    try {
      server.notifyResourceUpdated('test://counted')
      const n = await sub.next()
      assert.equal(n.value.method, 'notifications/resources/updated')
      await client.readResource('test://counted')
      assert.equal(counts.reads, 2)
    } finally {
      sub.close()
    }
  })

  test('cache: the tool list stays cached until tools/list_changed', async () => {
    const before = await client.listAllTools()
    server.tool({ name: 'late' }, async () => 'late')
    const cached = await client.listAllTools()
    assert.equal(cached.length, before.length) // ttlMs 60 s: still the cached list
    const sub = await client.subscribe({ toolsListChanged: true })
    try {
      assert.equal(server.removeTool('late'), true)
      const n = await sub.next()
      assert.equal(n.value.method, 'notifications/tools/list_changed')
      server.tool({ name: 'later' }, async () => 'later')
      assert.equal((await sub.next()).value.method, 'notifications/tools/list_changed')
      const fresh = await client.listAllTools()
      assert.ok(fresh.some((t) => t.name === 'later'))
      assert.equal(text(await client.callTool('later')), 'later')
    } finally {
      sub.close()
      server.removeTool('later')
    }
  })

  test('notifyListChanged announces a list by name; another name is a usage error', async () => {
    const sub = await client.subscribe({ resourcesListChanged: true })
    try {
      assert.throws(() => server.notifyListChanged('templates'), { kind: 'usage', message: /"templates"/ })
      server.notifyListChanged('resources')
      assert.equal((await sub.next()).value.method, 'notifications/resources/list_changed')
    } finally {
      sub.close()
    }
  })

  test('cache: turned off, every call reaches the server', async () => {
    const c = await Client.connectHttp(handle.url, { cache: false })
    try {
      counts.reads = 0
      await c.readResource('test://counted')
      await c.readResource('test://counted')
      assert.equal(counts.reads, 2)
    } finally {
      await c.close()
    }
  })

  test('a legacy (2025-11-25) session: the asks become real requests', async () => {
    const lh = handlers()
    const c = await Client.connectHttp(handle.url, { protocolVersions: ['2025-11-25'], ...lh })
    try {
      assert.equal(c.era, 'legacy')
      assert.equal(c.protocolVersion, '2025-11-25')
      assert.ok(c.sessionId)
      counts.rounds = 0
      assert.equal(text(await c.callTool('ask_all', {})), 'Ada/Paris/2')
      assert.equal(counts.rounds, 1)
      assert.deepEqual(lh.calls, { elicitation: 1, sampling: 1, roots: 1 })
      assert.equal(text(await c.callTool('add', { a: 1, b: 1 })), '2')
    } finally {
      await c.close()
    }
  })

  test('closeStream: a legacy client resumes the closed stream and gets what followed; elsewhere a no-op', async () => {
    for (const protocolVersions of [['2025-11-25'], ['2026-07-28']]) {
      const c = await Client.connectHttp(handle.url, { protocolVersions })
      try {
        const seen = []
        const r = await c.callTool('poll', {}, { onProgress: (p) => seen.push(p.message) })
        assert.equal(text(r), 'polled', protocolVersions[0])
        assert.deepEqual(seen, ['before the close', 'while parked', 'after the resume'], protocolVersions[0])
      } finally {
        await c.close()
      }
    }
  })

  test('closeStream on the wire: the POST stream ends with its retry; a GET with Last-Event-ID resumes it', async () => {
    const signal = AbortSignal.timeout(5000)
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
    const post = (body, extra) => fetch(handle.url, { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(body), signal })
    const clientInfo = { name: 'raw', version: '1' }
    const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo } })
    await init.text()
    const session = { 'mcp-session-id': init.headers.get('mcp-session-id'), 'mcp-protocol-version': '2025-11-25' }
    await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).text()
    const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'poll', arguments: {}, _meta: { progressToken: 'p' } } }
    const closed = await (await post(call, session)).text()
    assert.match(closed, /^retry: 50$/m)
    assert.match(closed, /before the close/)
    assert.doesNotMatch(closed, /"result"/)
    const lastEventId = [...closed.matchAll(/^id: (.+)$/gm)].at(-1)[1]
    const resumed = await fetch(handle.url, { headers: { accept: 'text/event-stream', ...session, 'last-event-id': lastEventId }, signal })
    const rest = await resumed.text()
    assert.match(rest, /while parked[\s\S]*after the resume[\s\S]*"id":2,"result".*"polled"/)
    await fetch(handle.url, { method: 'DELETE', headers: session, signal })
  })

  test('closeStream: a bad retry is a usage error', async () => {
    server.tool({ name: 'bad_close' }, async (_args, ctx) => {
      ctx.closeStream(-1)
      return 'unreachable'
    })
    try {
      const r = await client.callTool('bad_close')
      assert.equal(r.isError, true)
      assert.match(text(r), /retryMs/)
    } finally {
      server.removeTool('bad_close')
    }
  })

  test('bad definitions are usage errors', () => {
    assert.throws(() => server.tool({ description: 'no name' }, async () => ''), { kind: 'usage' })
    assert.throws(() => server.tool({ name: 'bad', inputSchema: { $ref: 'https://example.com/schema' } }, async () => ''), { kind: 'usage' })
    assert.throws(() => new Server({ name: 'x' }), { kind: 'usage' })
  })
})

describe('handler timeouts (handlerTimeoutMs, a tool\'s timeoutMs)', () => {
  let handle
  let client
  let aborted = 0

  before(async () => {
    const server = new Server({ name: 'timeouts', version: '1.0.0', handlerTimeoutMs: 150 })
    server
      .tool({ name: 'stuck' }, async (_args, ctx) => {
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))
        aborted++
        return 'too late'
      }, { timeoutMs: 100 })
      .tool({ name: 'forever' }, () => new Promise(() => {}))
      .tool({ name: 'patient' }, async () => {
        await sleep(300)
        return 'patient done'
      }, { timeoutMs: 5000 })
    handle = await server.serveHttp({ host: '127.0.0.1', port: 0 })
    client = await Client.connectHttp(handle.url)
  })

  after(async () => {
    await client?.close()
    await handle?.close()
    await handle?.closed
  })

  test('a tool past its own timeout ends with an isError result naming it; its signal aborts', async () => {
    const r = await client.callTool('stuck', {})
    assert.equal(r.isError, true)
    assert.match(text(r), /tool "stuck" handler did not finish within 100 ms \(its own timeout\)/)
    for (let i = 0; i < 50 && aborted === 0; i++) await sleep(20)
    assert.equal(aborted, 1)
  })

  test('the server-wide timeout, and a tool timeout that overrides it', async () => {
    const r = await client.callTool('forever', {})
    assert.equal(r.isError, true)
    assert.match(text(r), /tool "forever" handler did not finish within 150 ms \(the server's handler timeout\)/)
    assert.equal(text(await client.callTool('patient', {})), 'patient done')
  })

  test('a timeout that is not a positive number is a usage error', () => {
    assert.throws(() => new Server({ name: 'x', version: '1', handlerTimeoutMs: 0 }), { kind: 'usage' })
    assert.throws(() => new Server({ name: 'x', version: '1' }).tool({ name: 't' }, async () => '', { timeoutMs: -5 }), { kind: 'usage' })
  })
})

// server.use(async (req, next) => ...) in both eras over HTTP with bearer tokens: per-principal
// rate limiting, the order of two audit middlewares, tool-level authorization rejecting with a
// chosen code, a result rewrite, a list through middleware, timing, what a middleware sees, and the request's headers and
// token claims on the handler's ctx.

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { mcpaxle, sleep, text } from './helpers.mjs'

const { Client, ErrorKind, McpError, Server } = mcpaxle

const TOKENS = {
  alice: { subject: 'alice', scopes: ['mcp'], claims: { tenant: 'acme', roles: ['admin'] } },
  bob: { subject: 'bob', scopes: ['mcp'], claims: { tenant: 'globex', roles: [] } },
}

function makeServer() {
  return new Server({ name: 'middleware-test', version: '1.0.0' })
    .tool({ name: 'whoami' }, async (_args, ctx) => JSON.stringify({ principal: ctx.principal, tenantHeader: ctx.headers['x-tenant'], claims: ctx.claims, scopes: ctx.scopes }))
    .tool({ name: 'slow' }, async () => {
      await sleep(30)
      return 'done'
    })
    .tool({ name: 'admin_reset' }, () => 'reset')
    .tool({ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, ({ text }) => text ?? 'hi')
}

/** Serves `server` behind bearer auth, runs `body(connect)`, closes everything. */
async function withServer(server, version, body) {
  const auth = { resource: 'http://127.0.0.1/mcp', authorizationServers: ['http://127.0.0.1:9/as'], verify: async (t) => TOKENS[t] ?? null }
  const handle = await server.serveHttp({ port: 0, auth })
  const clients = []
  const connect = async (token) => {
    const c = await Client.connectHttp(handle.url, { headers: { Authorization: `Bearer ${token}`, 'X-Tenant': `${token}-corp` }, protocolVersions: [version] })
    clients.push(c)
    return c
  }
  try {
    await body(connect)
  } finally {
    for (const c of clients) await c.close()
    await handle.close()
  }
}

for (const [version, era] of [['2026-07-28', 'modern'], ['2025-11-25', 'legacy']]) {
  describe(`middleware, ${era} era`, () => {
    test('handlers read the headers and the token claims', async () => {
      await withServer(makeServer(), version, async (connect) => {
        const alice = await connect('alice')
        assert.deepEqual(JSON.parse(text(await alice.callTool('whoami'))), {
          principal: 'alice',
          tenantHeader: 'alice-corp',
          claims: { tenant: 'acme', roles: ['admin'] },
          scopes: ['mcp'],
        })
      })
    })

    test('a rate limit per principal', async () => {
      const calls = new Map()
      const server = makeServer().use(async (req, next) => {
        if (req.method === 'tools/call') {
          const n = (calls.get(req.principal) ?? 0) + 1
          calls.set(req.principal, n)
          if (n > 2) throw new McpError(ErrorKind.INVALID_REQUEST, `Rate limited: ${req.principal} may make 2 tool calls`, { data: { retryAfterMs: 1000 } })
        }
        return next()
      })
      await withServer(server, version, async (connect) => {
        const alice = await connect('alice')
        const bob = await connect('bob')
        for (let i = 0; i < 2; i++) assert.equal(text(await alice.callTool('echo')), 'hi')
        await assert.rejects(alice.callTool('echo'), { code: -32600, message: 'Rate limited: alice may make 2 tool calls', data: { retryAfterMs: 1000 } })
        assert.equal(text(await bob.callTool('echo', { text: 'own budget' })), 'own budget')
      })
    })

    test('two audit middlewares run in the order added', async () => {
      const log = []
      const audit = (tag) => async (req, next) => {
        log.push(`${tag} > ${req.method} ${req.name} ${req.era} ${req.principal}`)
        try {
          const r = await next()
          log.push(`${tag} < ok`)
          return r
        } catch (e) {
          log.push(`${tag} < ${e.kind}`)
          throw e
        }
      }
      await withServer(makeServer().use(audit('outer')).use(audit('inner')), version, async (connect) => {
        const bob = await connect('bob')
        log.length = 0
        await bob.callTool('echo')
        await assert.rejects(bob.callTool('nope'), { message: /Unknown tool: nope/ })
        assert.deepEqual(log.slice(0, 4), [`outer > tools/call echo ${era} bob`, `inner > tools/call echo ${era} bob`, 'inner < ok', 'outer < ok'])
        assert.deepEqual(log.slice(4, 8), [`outer > tools/call nope ${era} bob`, `inner > tools/call nope ${era} bob`, 'inner < invalid_params', 'outer < invalid_params'])
      })
    })

    test('tool-level authorization rejects with the code it chose', async () => {
      const server = makeServer().use(async (req, next) => {
        const admin = (req.claims?.roles ?? []).includes('admin')
        if (req.method === 'tools/call' && req.name.startsWith('admin_') && !admin) {
          throw new McpError(ErrorKind.INVALID_REQUEST, `Forbidden: ${req.name} needs the admin role`, { code: -32003 })
        }
        return next()
      })
      await withServer(server, version, async (connect) => {
        const alice = await connect('alice')
        const bob = await connect('bob')
        assert.equal(text(await alice.callTool('admin_reset')), 'reset')
        await assert.rejects(bob.callTool('admin_reset'), { code: -32003, message: 'Forbidden: admin_reset needs the admin role' })
        assert.equal(text(await bob.callTool('echo')), 'hi')
      })
    })

    test('a result rewrite and timing', async () => {
      const timings = []
      const server = makeServer()
        .use(async (req, next) => {
          const started = performance.now()
          try {
            return await next()
          } finally {
            timings.push([req.name ?? req.method, performance.now() - started])
          }
        })
        .use(async (req, next) => {
          const r = await next()
          if (req.method === 'tools/call') {
            r.content[0].text = r.content[0].text.toUpperCase()
            r._meta = { ...r._meta, 'example.com/rewritten': true }
          }
          return r
        })
      await withServer(server, version, async (connect) => {
        const bob = await connect('bob')
        timings.length = 0
        const r = await bob.callTool('slow')
        assert.equal(text(r), 'DONE')
        assert.equal(r._meta['example.com/rewritten'], true)
        assert.deepEqual(timings.map(([n]) => n), ['slow'])
        assert.ok(timings[0][1] >= 29, `the timing covers the handler: ${timings[0][1]}`)
      })
    })

    test('a list reaches a middleware whole, and one can rewrite it', async () => {
      const seen = []
      const server = makeServer()
        .use(async (req, next) => {
          const r = await next()
          if (req.method === 'tools/list') seen.push(r.tools.map((t) => t.name).sort())
          return r
        })
        .use(async (req, next) => {
          const r = await next()
          if (req.method === 'tools/list' && req.principal !== 'alice') r.tools = r.tools.filter((t) => !t.name.startsWith('admin_'))
          return r
        })
      await withServer(server, version, async (connect) => {
        const alice = await connect('alice')
        const bob = await connect('bob')
        assert.deepEqual((await alice.listAllTools()).map((t) => t.name).sort(), ['admin_reset', 'echo', 'slow', 'whoami'])
        assert.deepEqual((await bob.listAllTools()).map((t) => t.name).sort(), ['echo', 'slow', 'whoami'])
        assert.deepEqual(seen, [['admin_reset', 'echo', 'slow', 'whoami'], ['echo', 'slow', 'whoami']])
      })
    })

    test('what a middleware sees, and its bugs', async () => {
      const seen = []
      const server = makeServer().use(async function spy(req, next) {
        seen.push(req)
        if (req.name === 'admin_reset') throw new Error('a bug in the middleware')
        if (req.name === 'slow') return 'not an object'
        return next()
      })
      await withServer(server, version, async (connect) => {
        const alice = await connect('alice')
        await alice.callTool('echo', { text: 'x' })
        const r = seen.at(-1)
        assert.deepEqual([r.method, r.name, r.principal, r.era, r.scopes], ['tools/call', 'echo', 'alice', era, ['mcp']])
        assert.equal(r.headers['x-tenant'], 'alice-corp')
        assert.deepEqual(r.claims, { tenant: 'acme', roles: ['admin'] })
        assert.deepEqual(r.params.arguments, { text: 'x' })
        assert.equal(r.sessionId != null, era === 'legacy')
        await assert.rejects(alice.callTool('admin_reset'), { code: -32603, message: /a bug in the middleware/ })
        await assert.rejects(alice.callTool('slow'), { code: -32603, message: /spy returned "not an object"|spy returned string/ })
        assert.equal(text(await alice.callTool('echo')), 'hi', 'the server goes on')
      })
    })
  })
}

test('a middleware must be a function', () => {
  assert.throws(() => new Server({ name: 's', version: '1' }).use(42), { kind: 'usage', message: /a middleware must be a function/ })
})

const adminOnly = (item, req) => (req.claims?.roles ?? []).includes('admin') || !item.name.startsWith('admin_')

for (const [version, era] of [['2026-07-28', 'modern'], ['2025-11-25', 'legacy']]) {
  test(`visibility per principal, ${era} era`, async () => {
    const asked = []
    const server = makeServer().visibility(async (item, req) => {
      asked.push([req.method, item.kind])
      return adminOnly(item, req)
    })
    await withServer(server, version, async (connect) => {
      const alice = await connect('alice')
      const bob = await connect('bob')
      assert.deepEqual((await bob.listAllTools()).map((t) => t.name).sort(), ['echo', 'slow', 'whoami'])
      assert.deepEqual((await alice.listAllTools()).map((t) => t.name).sort(), ['admin_reset', 'echo', 'slow', 'whoami'])
      const hidden = await bob.callTool('admin_reset').catch((e) => e)
      const unknown = await bob.callTool('admin_nothing').catch((e) => e)
      assert.equal(hidden.message, 'Unknown tool: admin_reset')
      assert.deepEqual([hidden.code, hidden.kind], [unknown.code, unknown.kind])
      assert.equal(text(await alice.callTool('admin_reset')), 'reset')
      assert.ok(asked.some(([m, k]) => m === 'tools/call' && k === 'tool'))
      server.visibility(null)
      assert.equal(text(await bob.callTool('admin_reset')), 'reset')
    })
  })
}

test('a visibility predicate that throws fails the request', async () => {
  const server = makeServer().visibility((item) => {
    if (item.name === 'slow') throw new Error('a bug in the predicate')
    return true
  })
  await withServer(server, '2026-07-28', async (connect) => {
    const bob = await connect('bob')
    await assert.rejects(bob.callTool('slow'), { code: -32603, message: /a bug in the predicate/ })
    assert.equal(text(await bob.callTool('echo')), 'hi')
  })
})

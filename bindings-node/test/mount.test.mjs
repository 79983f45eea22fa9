// The server mounted in the application's own HTTP server: `nodeHandler()` in Express (the
// pinned dev dependency) and `fetchHandler()` served by `node:http` through the small adapter
// below (Node has no fetch server of its own). Against each: the package's Client in both eras,
// SSE progress, a listen stream, a client that disconnects (its request is cancelled), bearer
// auth with the JavaScript verifier, a body already parsed by express.json(), and the statuses
// of bad requests, which must be serveHttp's. Last, the README's "Mount in Express" quick start
// runs as pasted.

import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fetchListener } from '../examples/fetch_listener.mjs'
import { mcpaxle, pkg, require, root, text } from './helpers.mjs'

const express = require('express')
const { Client, Server } = mcpaxle

const PATH = '/apps/notes/mcp'

/** A server whose `wait` tool records its context, then waits until it is cancelled. */
function notesServer() {
  const waits = []
  const server = new Server({ name: 'mounted', version: '1.0.0' })
    .tool({ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, ({ text }) => `echo: ${text}`)
    .tool({ name: 'whoami' }, (_args, ctx) => `principal ${ctx.principal}`)
    .tool({ name: 'progress' }, async (_args, ctx) => {
      for (let i = 1; i <= 3; i++) ctx.progress(i, 3, `step ${i}`)
      return 'progressed'
    })
    .tool({ name: 'wait', inputSchema: { type: 'object', properties: { stream: { type: 'boolean' } } } }, ({ stream }, ctx) => {
      // With `stream`, a progress notification first: the response is then an SSE stream
      // already under way when the client goes away.
      if (stream) ctx.progress(1, 2, 'waiting')
      return new Promise((resolve) => {
        const aborted = new Promise((r) => ctx.signal.addEventListener('abort', () => r(true), { once: true }))
        waits.push(aborted)
        aborted.then(() => resolve('cancelled'))
      })
    })
  server.waits = waits
  return server
}

/** Listens on a free loopback port: `{url, close()}`. */
function listen(server, path) {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      resolve({
        url: `http://127.0.0.1:${port}${path}`,
        close: () =>
          new Promise((r) => {
            server.closeAllConnections?.()
            server.close(() => r())
          }),
      })
    })
  })
}

/** The handler mounted in Express at PATH, with a JSON body parser for the other routes. */
function inExpress(mcp, options) {
  const app = express()
  const handler = mcp.nodeHandler(options)
  app.use(PATH, handler)
  app.use(express.json())
  app.post('/other', (req, res) => res.json({ got: req.body }))
  return listen(http.createServer(app), PATH)
}

function inFetch(mcp, options) {
  return listen(http.createServer(fetchListener(mcp.fetchHandler(options))), PATH)
}

/** A raw request (Host and all headers as given): `{status, headers, body}`. */
function raw(url, { method = 'POST', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

const MODERN = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/list',
}

function toolsList(id = 1) {
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': {},
  }
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: { _meta } })
}

/** The bad requests of the status comparison, and the good ones around them. */
const CASES = [
  ['a modern request', {}],
  ['a notification', { body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) }],
  ['GET without a session', { method: 'GET', body: undefined }],
  ['PUT', { method: 'PUT' }],
  ['DELETE of an unknown session', { method: 'DELETE', headers: { 'mcp-session-id': 'nope' }, body: undefined }],
  ['a text/plain body', { headers: { 'content-type': 'text/plain' } }],
  ['an Accept of text/html only', { headers: { accept: 'text/html' } }],
  ['a body that is not JSON', { body: '{"jsonrpc": ' }],
  ['a body past maxBody', { body: JSON.stringify({ pad: 'x'.repeat(5000) }) }],
  ['a foreign Host', { headers: { host: 'evil.example' } }],
  ['a foreign Origin', { headers: { origin: 'https://evil.example' } }],
  ['a POST in an unknown session', { headers: { 'mcp-session-id': 'nope' } }],
  ['a header mirror that disagrees', { headers: { 'mcp-method': 'tools/call' } }],
]

function requestOf([, c]) {
  return { method: c.method ?? 'POST', headers: { ...MODERN, ...c.headers }, body: 'body' in c ? c.body : toolsList() }
}

/** The JSON-RPC error code of an answer, if it is one. */
function codeOf(r) {
  try {
    return JSON.parse(r.body).error?.code ?? null
  } catch {
    return null
  }
}

for (const [kind, mount] of [
  ['nodeHandler in Express', inExpress],
  ['fetchHandler behind node:http', inFetch],
]) {
  describe(`server mounted: ${kind}`, () => {
    let mcp
    let app
    before(async () => {
      mcp = notesServer()
      app = await mount(mcp, { maxBody: 4096 })
    })
    after(async () => {
      await app?.close()
    })

    for (const era of ['modern', 'legacy']) {
      const versions = era === 'modern' ? ['2026-07-28'] : ['2025-11-25']

      test(`${era} era: calls, SSE progress, a listen stream`, async () => {
        const client = await Client.connectHttp(app.url, { protocolVersions: versions })
        try {
          assert.equal(client.era, era)
          assert.equal(Boolean(client.sessionId), era === 'legacy')
          assert.deepEqual(
            (await client.listAllTools()).map((t) => t.name),
            ['echo', 'progress', 'wait', 'whoami'],
          )
          assert.equal(text(await client.callTool('echo', { text: 'hi' })), 'echo: hi')
          const seen = []
          const r = await client.callTool('progress', {}, { onProgress: (p) => seen.push([p.progress, p.message]) })
          assert.equal(text(r), 'progressed')
          assert.deepEqual(seen, [
            [1, 'step 1'],
            [2, 'step 2'],
            [3, 'step 3'],
          ])
          const sub = await client.subscribe({ toolsListChanged: true })
          try {
            mcp.tool({ name: `added_${era}` }, () => 'new')
            const n = await sub.next()
            assert.equal(n.value.method, 'notifications/tools/list_changed')
          } finally {
            sub.close()
            mcp.removeTool(`added_${era}`)
          }
        } finally {
          await client.close()
        }
      })
    }

    for (const stream of [false, true]) {
      const what = stream ? 'from an SSE stream' : 'before the response starts'
      test(`a client that disconnects ${what} cancels its request`, { timeout: 10_000 }, async () => {
        const client = await Client.connectHttp(app.url, { protocolVersions: ['2026-07-28'] })
        try {
          const before = mcp.waits.length
          const controller = new AbortController()
          const progressed = new Promise((resolve) => {
            const call = client.callTool('wait', { stream }, { signal: controller.signal, onProgress: resolve })
            call.catch(() => {})
            if (!stream) resolve()
          })
          await progressed
          while (mcp.waits.length === before) await new Promise((r) => setImmediate(r))
          // In the modern era aborting a call only closes its HTTP stream: what the server sees
          // is the client going away.
          controller.abort()
          assert.equal(await mcp.waits[before], true)
        } finally {
          await client.close()
        }
      })
    }

    test('the statuses of bad requests are those of serveHttp', async () => {
      const own = await notesServer().serveHttp({ maxBody: 4096 })
      try {
        for (const c of CASES) {
          const [mounted, served] = await Promise.all([raw(app.url, requestOf(c)), raw(own.url, requestOf(c))])
          assert.deepEqual([mounted.status, codeOf(mounted)], [served.status, codeOf(served)], c[0])
        }
        const statuses = await Promise.all(CASES.map((c) => raw(app.url, requestOf(c)).then((r) => r.status)))
        assert.deepEqual(statuses, [200, 202, 405, 405, 404, 415, 406, 400, 413, 403, 403, 404, 400])
      } finally {
        await own.close()
      }
    })

    test('allowedHosts admits the names the application is reached by', async () => {
      const named = await mount(notesServer(), { allowedHosts: ['notes.example'] })
      try {
        const r = await raw(named.url, { headers: { ...MODERN, host: 'notes.example' }, body: toolsList() })
        assert.equal(r.status, 200, r.body)
        assert.equal((await raw(named.url, { headers: { ...MODERN, host: 'other.example' }, body: toolsList() })).status, 403)
      } finally {
        await named.close()
      }
    })

    test('bearer auth with the JavaScript verifier', async () => {
      const verify = async (token) => (token === 'good' ? { subject: 'alice', scopes: ['notes:read'] } : null)
      const auth = { resource: 'http://127.0.0.1/apps/notes/mcp', authorizationServers: ['https://auth.example.com'], verify }
      const guarded = await mount(notesServer(), { path: PATH, auth })
      try {
        const none = await raw(guarded.url, { headers: MODERN, body: toolsList() })
        assert.equal(none.status, 401)
        assert.match(none.headers['www-authenticate'], /resource_metadata="[^"]*\/\.well-known\/oauth-protected-resource\/apps\/notes\/mcp"/)
        assert.equal((await raw(guarded.url, { headers: { ...MODERN, authorization: 'Bearer bad' }, body: toolsList() })).status, 401)
        const client = await Client.connectHttp(guarded.url, { headers: { authorization: 'Bearer good' } })
        try {
          assert.equal(text(await client.callTool('whoami', {})), 'principal alice')
        } finally {
          await client.close()
        }
      } finally {
        await guarded.close()
      }
    })
  })
}

describe('nodeHandler after a body parser', () => {
  test('a body express.json() already read is served as the parsed JSON', async () => {
    const appServer = express()
    appServer.use(express.json())
    appServer.use(PATH, notesServer().nodeHandler())
    const app = await listen(http.createServer(appServer), PATH)
    try {
      for (const versions of [['2026-07-28'], ['2025-11-25']]) {
        const client = await Client.connectHttp(app.url, { protocolVersions: versions })
        try {
          assert.equal(text(await client.callTool('echo', { text: 'parsed' })), 'echo: parsed')
        } finally {
          await client.close()
        }
      }
    } finally {
      await app.close()
    }
  })

  test('a bad option is a USAGE error at mount time', () => {
    assert.throws(() => notesServer().nodeHandler({ port: 80 }), { kind: 'usage', message: /port/ })
    assert.throws(() => notesServer().fetchHandler({ maxBody: 'big' }), { kind: 'usage', message: /maxBody/ })
  })
})

describe('the README quick start', () => {
  test('mount_express.mjs runs as pasted', { timeout: 30_000 }, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpaxle-mount-'))
    try {
      execFileSync('python3', [path.join(root, 'packaging', 'quickstarts.py'), dir])
      // `mcpaxle` and `express` resolve as in an application that installed both.
      fs.mkdirSync(path.join(dir, 'node_modules'))
      fs.symlinkSync(pkg, path.join(dir, 'node_modules', 'mcpaxle'), 'dir')
      fs.symlinkSync(path.join(pkg, 'node_modules', 'express'), path.join(dir, 'node_modules', 'express'), 'dir')
      const out = execFileSync(process.execPath, ['mount_express.mjs'], { cwd: dir, timeout: 25_000, encoding: 'utf8' })
      assert.equal(out, 'Sunny in Paris\n')
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})

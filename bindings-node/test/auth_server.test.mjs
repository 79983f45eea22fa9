// A JavaScript server protected by OAuth bearer tokens (`serveHttp({auth})`), in this process:
// the protected resource metadata, the 401/403/503 answers and their challenges (fetch), the
// token's subject as ctx.principal, the package's Client with a bearer header in both eras, a
// verifier that fails, and option checking. (oauth.test.mjs runs the client's flows against the
// Rust OAuth server: getting tokens needs an authorization server, which this server is not.)

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { AUTH_CASES, mcpaxle, overlay, says, text } from './helpers.mjs'

const { Client, Server } = mcpaxle

const RESOURCE = 'https://mcp.example.com/mcp'
const ISSUER = 'https://auth.example.com'
const METADATA_URL = 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp'

const TOKENS = {
  reader: { subject: 'alice', scopes: ['notes:read'] },
  writer: { subject: 'bob', scopes: ['notes:read', 'notes:write'] },
  nobody: { subject: 'eve' },
}

async function verify(token) {
  if (token === 'boom') throw new Error('the introspection endpoint is down')
  return TOKENS[token] ?? null
}

function notesServer() {
  return new Server({ name: 'notes', version: '1.0.0' })
    .tool({ name: 'whoami' }, async (_args, ctx) => `principal ${ctx.principal}`)
    .tool({ name: 'write_note', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, ({ text }) => `saved: ${text}`)
}

function authWith(fn, options = {}) {
  return { resource: RESOURCE, authorizationServers: [ISSUER], verify: fn, requiredScopes: ['notes:read'], toolScopes: { write_note: ['notes:write'] }, ...options }
}

/** Posts a 2026-07-28 request to the endpoint. */
function post(url, method, params, token) {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': {},
  }
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
  }
  if (method === 'tools/call') headers['mcp-name'] = params.name
  if (token != null) headers.authorization = `Bearer ${token}`
  const body = { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } }
  return fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(5000) })
}

/** The text of a tools/call answered 200 (JSON or SSE). */
async function resultText(response) {
  const body = await response.text()
  assert.equal(response.status, 200, body)
  const json = response.headers.get('content-type').startsWith('application/json')
    ? body
    : [...body.matchAll(/^data: ?(.*)$/gm)].at(-1)[1]
  return text(JSON.parse(json).result)
}

/** Runs `f` with console.error captured; what was printed. */
async function capturingErrors(f) {
  const lines = []
  const original = console.error
  console.error = (...args) => lines.push(args.map((a) => (a instanceof Error ? `${a.stack}` : String(a))).join(' '))
  try {
    await f()
  } finally {
    console.error = original
  }
  return lines
}

describe('JavaScript server behind bearer-token auth', () => {
  let handle
  let url
  before(async () => {
    handle = await notesServer().serveHttp({ port: 0, auth: authWith(verify) })
    url = handle.url
  })
  after(async () => {
    await handle?.close()
  })

  test('the protected resource metadata', async () => {
    const r = await fetch(new URL('/.well-known/oauth-protected-resource/mcp', url))
    assert.equal(r.status, 200)
    assert.deepEqual(await r.json(), {
      resource: RESOURCE,
      authorization_servers: [ISSUER],
      bearer_methods_supported: ['header'],
      scopes_supported: ['notes:read'],
    })
    const other = await notesServer().serveHttp({ port: 0, auth: authWith(verify, { scopesSupported: ['notes:read', 'notes:write', 'offline_access'] }) })
    try {
      const doc = await (await fetch(new URL('/.well-known/oauth-protected-resource/mcp', other.url))).json()
      assert.deepEqual(doc.scopes_supported, ['notes:read', 'notes:write', 'offline_access'])
    } finally {
      await other.close()
    }
  })

  test('no token: 401 with a challenge naming the metadata and the scopes', async () => {
    const r = await post(url, 'tools/list', {})
    assert.equal(r.status, 401)
    const challenge = r.headers.get('www-authenticate')
    assert.ok(challenge.startsWith('Bearer '), challenge)
    assert.ok(challenge.includes(`resource_metadata="${METADATA_URL}"`), challenge)
    assert.ok(challenge.includes('scope="notes:read"'), challenge)
    assert.ok(!challenge.includes('error='), challenge)
  })

  test('an invalid token: 401 invalid_token', async () => {
    const r = await post(url, 'tools/list', {}, 'forged')
    assert.equal(r.status, 401)
    const challenge = r.headers.get('www-authenticate')
    assert.ok(challenge.includes('error="invalid_token"'), challenge)
    assert.ok(challenge.includes(`resource_metadata="${METADATA_URL}"`), challenge)
    assert.equal((await r.json()).error, 'invalid_token')
  })

  test('a token without the required scopes: 403 insufficient_scope', async () => {
    const r = await post(url, 'tools/list', {}, 'nobody')
    assert.equal(r.status, 403)
    const challenge = r.headers.get('www-authenticate')
    assert.ok(challenge.includes('error="insufficient_scope"') && challenge.includes('scope="notes:read"'), challenge)
  })

  test("a tool's scopes: 403 for the reader, 200 for the writer", async () => {
    const call = { name: 'write_note', arguments: { text: 'hi' } }
    const r = await post(url, 'tools/call', call, 'reader')
    assert.equal(r.status, 403)
    const challenge = r.headers.get('www-authenticate')
    assert.ok(challenge.includes('error="insufficient_scope"'), challenge)
    assert.ok(challenge.includes('scope="notes:read notes:write"'), challenge)
    assert.equal(await resultText(await post(url, 'tools/call', call, 'writer')), 'saved: hi')
  })

  test("the token's subject is ctx.principal", async () => {
    assert.equal(await resultText(await post(url, 'tools/call', { name: 'whoami', arguments: {} }, 'reader')), 'principal alice')
    assert.equal(await resultText(await post(url, 'tools/call', { name: 'whoami', arguments: {} }, 'writer')), 'principal bob')
  })

  test('a verifier that throws: 503, reported on console.error', async () => {
    let r
    const lines = await capturingErrors(async () => {
      r = await post(url, 'tools/list', {}, 'boom')
    })
    assert.equal(r.status, 503)
    assert.equal((await r.json()).error, 'temporarily_unavailable')
    assert.equal(lines.length, 1, lines.join('\n'))
    assert.match(lines[0], /token verifier verify threw; the request gets 503/)
    assert.match(lines[0], /the introspection endpoint is down/)
  })

  test('a verifier answering another shape: 503, reported on console.error', async () => {
    const sloppy = await notesServer().serveHttp({ port: 0, auth: authWith(async () => ({ sub: 'alice' })) })
    try {
      let r
      const lines = await capturingErrors(async () => {
        r = await post(sloppy.url, 'tools/list', {}, 'reader')
      })
      assert.equal(r.status, 503)
      assert.equal(lines.length, 1, lines.join('\n'))
      assert.match(lines[0], /returned an object, so the request gets 503: the token verifier must answer \{"subject": non-empty string/)
    } finally {
      await sloppy.close()
    }
  })

  test('a plain (sync) verifier works too', async () => {
    const plain = await notesServer().serveHttp({ port: 0, auth: authWith((token) => TOKENS[token] ?? null) })
    try {
      assert.equal(await resultText(await post(plain.url, 'tools/call', { name: 'whoami', arguments: {} }, 'writer')), 'principal bob')
      assert.equal((await post(plain.url, 'tools/list', {}, 'forged')).status, 401)
    } finally {
      await plain.close()
    }
  })

  for (const [version, era] of [['2026-07-28', 'modern'], ['2025-11-25', 'legacy']]) {
    test(`Client.connectHttp with a bearer header, ${era} era`, async () => {
      const connect = (token) => Client.connectHttp(url, { headers: { Authorization: `Bearer ${token}` }, protocolVersions: [version] })
      const reader = await connect('reader')
      try {
        assert.equal(reader.era, era)
        assert.deepEqual((await reader.listAllTools()).map((t) => t.name).sort(), ['whoami', 'write_note'])
        assert.equal(text(await reader.callTool('whoami')), 'principal alice')
        await assert.rejects(reader.callTool('write_note', { text: 'hi' }), { kind: 'transport', message: /403.*insufficient_scope/s })
      } finally {
        await reader.close()
      }
      const writer = await connect('writer')
      try {
        assert.equal(text(await writer.callTool('write_note', { text: 'hi' })), 'saved: hi')
      } finally {
        await writer.close()
      }
      await assert.rejects(connect('forged'), { kind: 'transport', message: /401.*invalid_token/s })
    })
  }
})

describe('auth option checking', () => {
  const { valid, cases } = AUTH_CASES.bearerAuth
  test('the shared table has cases', () => assert.ok(cases.length >= 15))
  for (const c of cases) {
    test(`${c.name}: a usage error naming auth.${c.path}`, async () => {
      await assert.rejects(notesServer().serveHttp({ port: 0, auth: { ...overlay(valid, c.set), verify } }), (e) => {
        assert.equal(e.kind, 'usage')
        assert.ok(e.message.startsWith('the HTTP options: '), e.message)
        assert.ok(says(e.message, 'auth', c.path, c.message), `${e.message} should say auth.${c.path}: ${c.message}`)
        return true
      })
    })
  }

  test('auth.verify must be a function', async () => {
    await assert.rejects(notesServer().serveHttp({ port: 0, auth: authWith('verify') }), { kind: 'usage', message: /auth\.verify must be a function/ })
    const { verify: _, ...withoutVerify } = authWith(verify)
    // Left out, the core's built-in verifiers must be configured instead.
    await assert.rejects(notesServer().serveHttp({ port: 0, auth: withoutVerify }), { kind: 'usage', message: /needs a verify callback, or the jwt or introspection option/ })
  })

  test('a null member is absent, as at the top level of the options', async () => {
    const running = await notesServer().serveHttp({ port: 0, auth: authWith(verify, { scopesSupported: null, toolScopes: undefined }) })
    try {
      const metadata = await (await fetch(running.url.replace('/mcp', '/.well-known/oauth-protected-resource/mcp'))).json()
      assert.deepEqual(metadata.scopes_supported, ['notes:read'])
    } finally {
      await running.close()
    }
  })

  test('auth must be an object', async () => {
    await assert.rejects(notesServer().serveHttp({ port: 0, auth: 'secret' }), { kind: 'usage', message: /auth must be an object/ })
  })
})

describe('verifier answers the core refuses', () => {
  const { cases } = AUTH_CASES.tokenInfo
  let running
  before(async () => {
    // The token is the index of the answer to give.
    running = await notesServer().serveHttp({ port: 0, auth: authWith(async (token) => cases[Number(token)].answer) })
  })
  after(async () => {
    await running?.close()
  })

  test('the shared table has cases', () => assert.ok(cases.length >= 5))
  cases.forEach((c, i) => {
    test(`${c.name}: 503, and console.error says what is wrong`, async () => {
      let r
      const lines = await capturingErrors(async () => {
        r = await post(running.url, 'tools/list', {}, String(i))
      })
      assert.equal(r.status, 503)
      assert.equal((await r.json()).error, 'temporarily_unavailable')
      assert.equal(lines.length, 1, lines.join('\n'))
      assert.ok(lines[0].includes(c.message), `${lines[0]} should say ${c.message}`)
      assert.match(lines[0], /^mcpaxle: the token verifier .* so the request gets 503/)
    })
  })
})

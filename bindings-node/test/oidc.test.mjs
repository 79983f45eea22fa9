// A Node server and Node machine clients behind a real OpenID provider: oidc-provider (pinned in
// tests/oidc, installed there with npm ci on first use) on loopback. The server checks JWT access
// tokens with the built-in `jwt` verifier (no verify callback); clients get their own tokens with
// the client credentials grant, with a secret and with private_key_jwt (the provider holds only the
// public key), discovered from the server's 401; a wrong secret fails with the provider's error.
// And the token store (`tokenStore: {file}`): a second client with the same file calls without a
// token request, a revoked token is dropped from the file and replaced, a server that rejects
// every token costs one token request per call, and a user who authorized once (the provider's
// login and consent pages answered over HTTP by the authorize callback) is not asked again when
// the token expires: it is refreshed and the rotated refresh token replaces the old in the file.

import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import { after, before, describe, test } from 'node:test'
import { freePort, mcpaxle, root } from './helpers.mjs'

const { Client, Server } = mcpaxle
const OIDC = path.join(root, 'tests', 'oidc')

/** Starts oidc-provider on `port`; resolves with the process and the client key it printed. */
async function startProvider(port) {
  if (!fs.existsSync(path.join(OIDC, 'node_modules', 'oidc-provider'))) {
    const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: OIDC, stdio: 'ignore' })
    assert.equal(r.status, 0, 'npm ci in tests/oidc failed')
  }
  const proc = spawn(process.execPath, [path.join(OIDC, 'provider.mjs'), String(port), 'k1'], { stdio: ['ignore', 'pipe', 'ignore'] })
  const lines = readline.createInterface({ input: proc.stdout })[Symbol.asyncIterator]()
  const first = (await lines.next()).value ?? ''
  assert.match(first, /^client-key /, `oidc-provider did not start: ${first}`)
  const ready = (await lines.next()).value ?? ''
  assert.equal(ready, `ready http://127.0.0.1:${port}`)
  return { proc, clientKey: Buffer.from(first.split(' ')[1], 'base64').toString() }
}

describe('machine clients behind oidc-provider', () => {
  let provider
  let handle
  let url
  let issuer
  before(async () => {
    const providerPort = await freePort()
    issuer = `http://127.0.0.1:${providerPort}`
    provider = await startProvider(providerPort)
    const port = await freePort()
    url = `http://127.0.0.1:${port}/mcp`
    const server = new Server({ name: 'behind-oidc', version: '1.0.0' })
    server.tool({ name: 'whoami', inputSchema: { type: 'object' } }, (_args, ctx) => `${ctx.principal} via ${ctx.claims?.client_id} for ${ctx.claims?.aud}`)
    handle = await server.serveHttp({ port, auth: { resource: url, authorizationServers: [issuer], jwt: {}, requiredScopes: ['mcp:tools'] } })
  })
  after(async () => {
    await handle?.close()
    provider?.proc.kill('SIGTERM')
  })

  test('with a secret and with private_key_jwt, each gets a token for exactly this server', async () => {
    const machines = [
      { grantType: 'client_credentials', clientId: 'ci-job', clientSecret: 'ci-secret' },
      { grantType: 'client_credentials', clientId: 'ci-key-job', privateKeyPem: provider.clientKey, signingAlgorithm: 'ES256' },
    ]
    for (const oauth of machines) {
      const client = await Client.connectHttp(url, { oauth })
      try {
        const r = await client.callTool('whoami', {})
        assert.equal(r.content[0].text, `${oauth.clientId} via ${oauth.clientId} for ${url}`)
      } finally {
        await client.close()
      }
    }
  })

  test("a wrong secret fails with the provider's error", async () => {
    const oauth = { grantType: 'client_credentials', clientId: 'ci-job', clientSecret: 'not-the-secret' }
    await assert.rejects(
      (async () => {
        const client = await Client.connectHttp(url, { oauth })
        try {
          await client.callTool('whoami', {})
        } finally {
          await client.close()
        }
      })(),
      (e) => /invalid_client/.test(e.message),
    )
  })
})

/** How many token and registration requests the provider has had (tests/oidc/provider.mjs). */
async function stats(issuer) {
  return (await fetch(`${issuer}/test/stats`)).json()
}

/** The one entry's token of a token store file. */
function stored(file) {
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'))
  assert.equal(doc.entries.length, 1, JSON.stringify(doc))
  return doc.entries[0].token
}

/** Sets members of the one entry's token of a token store file. */
function editStored(file, token) {
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'))
  Object.assign(doc.entries[0].token, token)
  fs.writeFileSync(file, JSON.stringify(doc))
}

async function whoami(url, oauth) {
  const client = await Client.connectHttp(url, { oauth })
  try {
    return (await client.callTool('whoami', {})).content[0].text
  } finally {
    await client.close()
  }
}

const REDIRECT_URI = 'http://127.0.0.1:8765/callback'

/**
 * The user's side of the authorization code flow as an `authorize` callback: follows the
 * provider's redirects keeping its cookies, logs in as `account`, approves the consent (the pages
 * of tests/oidc/provider.mjs) and resolves with the redirect to REDIRECT_URI (served by nobody).
 */
function browser(account) {
  const b = {
    visits: 0,
    authorize: async (url) => {
      b.visits += 1
      const cookies = new Map()
      let body
      for (let i = 0; i < 12; i++) {
        const headers = { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') }
        if (body) headers['content-type'] = 'application/x-www-form-urlencoded'
        const r = await fetch(url, { method: body ? 'POST' : 'GET', body, headers, redirect: 'manual' })
        for (const c of r.headers.getSetCookie()) {
          const [pair] = c.split(';')
          const eq = pair.indexOf('=')
          cookies.set(pair.slice(0, eq), pair.slice(eq + 1))
        }
        if (r.status === 302 || r.status === 303) {
          const location = new URL(r.headers.get('location'), url).href
          if (location.startsWith(REDIRECT_URI)) return location
          url = location
          body = undefined
          continue
        }
        const page = await r.json()
        body = new URLSearchParams(page.prompt === 'login' ? { login: account } : { consent: 'approve' }).toString()
      }
      throw new Error(`the provider never redirected back (last at ${url})`)
    },
  }
  return b
}

describe('the token store behind oidc-provider', () => {
  let provider
  let issuer
  let dir
  const handles = []
  const server = () => {
    const s = new Server({ name: 'behind-oidc', version: '1.0.0' })
    s.tool({ name: 'whoami', inputSchema: { type: 'object' } }, (_args, ctx) => `${ctx.principal} via ${ctx.claims?.client_id ?? ctx.principal}`)
    return s
  }
  before(async () => {
    const providerPort = await freePort()
    issuer = `http://127.0.0.1:${providerPort}`
    provider = await startProvider(providerPort)
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpaxle-oidc-'))
  })
  after(async () => {
    for (const h of handles) await h.close()
    provider?.proc.kill('SIGTERM')
    fs.rmSync(dir, { recursive: true, force: true })
  })

  test('a second client with the same file asks for no token; a revoked one is dropped and replaced', async () => {
    // Opaque tokens introspected without a cache: a revocation is seen at once.
    const port = await freePort()
    const url = `http://127.0.0.1:${port}/opaque`
    const introspection = { clientId: 'mcp-server', clientSecret: 'mcp-server-secret', cacheMs: 0 }
    handles.push(await server().serveHttp({ port, path: '/opaque', auth: { resource: url, authorizationServers: [issuer], introspection, requiredScopes: ['mcp:tools'] } }))
    const file = path.join(dir, 'machine.json')
    const oauth = { grantType: 'client_credentials', clientId: 'ci-job', clientSecret: 'ci-secret', tokenStore: { file } }
    const before = (await stats(issuer)).tokenRequests
    assert.equal(await whoami(url, oauth), 'ci-job via ci-job')
    assert.equal((await stats(issuer)).tokenRequests, before + 1)
    assert.equal(fs.statSync(file).mode & 0o777, 0o600)
    const first = stored(file).accessToken

    assert.equal(await whoami(url, oauth), 'ci-job via ci-job')
    assert.equal((await stats(issuer)).tokenRequests, before + 1, 'the second client did not ask for a token')

    const revoke = await fetch(`${issuer}/token/revocation`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from('ci-job:ci-secret').toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: first }).toString(),
    })
    assert.equal(revoke.status, 200)
    assert.equal(await whoami(url, oauth), 'ci-job via ci-job')
    assert.equal((await stats(issuer)).tokenRequests, before + 2)
    assert.notEqual(stored(file).accessToken, first)
  })

  test('a token store of the application\'s own: load, save, clear as async methods', async () => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}/mcp`
    handles.push(await server().serveHttp({ port, auth: { resource: url, authorizationServers: [issuer], jwt: {}, requiredScopes: ['mcp:tools'] } }))
    const tokens = new Map()
    const calls = []
    const id = (key) => `${key.issuer} ${key.resource} ${key.client}`
    const store = {
      async load(key) { calls.push('load'); return tokens.get(id(key)) ?? null },
      async save(key, token) { calls.push('save'); tokens.set(id(key), token) },
      clear(key) { calls.push('clear'); tokens.delete(id(key)) },
    }
    const oauth = { grantType: 'client_credentials', clientId: 'ci-job', clientSecret: 'ci-secret', tokenStore: store }
    const before = (await stats(issuer)).tokenRequests
    assert.equal(await whoami(url, oauth), 'ci-job via ci-job')
    assert.deepEqual(calls, ['load', 'save'])
    assert.deepEqual([...tokens.keys()], [`${issuer} ${url} ci-job`])
    assert.equal(await whoami(url, oauth), 'ci-job via ci-job')
    assert.deepEqual([calls, (await stats(issuer)).tokenRequests], [['load', 'save', 'load'], before + 1])

    const broken = { ...store, load: async () => { throw new Error('the keychain is locked') } }
    await assert.rejects(whoami(url, { ...oauth, tokenStore: broken }), /the token store's load failed: the keychain is locked/)
  })

  test('a server that rejects every token costs one token request per call', async () => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}/mcp`
    handles.push(await server().serveHttp({ port, auth: { resource: url, authorizationServers: [issuer], verify: () => null } }))
    const file = path.join(dir, 'rejected.json')
    const oauth = { grantType: 'client_credentials', clientId: 'ci-job', clientSecret: 'ci-secret', tokenStore: { file } }
    const before = (await stats(issuer)).tokenRequests
    for (const calls of [1, 2, 3]) {
      await assert.rejects(whoami(url, oauth), /rejected the access token just issued by/)
      assert.equal((await stats(issuer)).tokenRequests, before + calls)
      assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')).entries, [])
    }
  })

  test('a user authorizes once; an expired token is refreshed and the rotated refresh token kept', async () => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}/mcp`
    handles.push(await server().serveHttp({ port, auth: { resource: url, authorizationServers: [issuer], jwt: {}, requiredScopes: ['mcp:tools'] } }))
    const file = path.join(dir, 'user.json')
    const user = browser('alice')
    // No client id: the client registers itself and keeps the registration in the file.
    const oauth = { redirectUri: REDIRECT_URI, authorize: user.authorize, clientName: 'oidc-node-test', tokenStore: { file } }
    const at = await stats(issuer)
    const me = await whoami(url, oauth)
    const entry = stored(file)
    assert.equal(me, `alice via ${entry.registration.clientId}`)
    assert.deepEqual([user.visits, await stats(issuer)], [1, { tokenRequests: at.tokenRequests + 1, registrations: at.registrations + 1 }])
    assert.ok(entry.refreshToken && entry.expiresAt > 0)

    editStored(file, { expiresAt: 1 })
    assert.equal(await whoami(url, oauth), me)
    const refreshed = stored(file)
    assert.deepEqual([user.visits, await stats(issuer)], [1, { tokenRequests: at.tokenRequests + 2, registrations: at.registrations + 1 }])
    assert.notEqual(refreshed.refreshToken, entry.refreshToken, 'rotated')

    // The used-up refresh token: invalid_grant, dropped; the user is asked again, no new registration.
    editStored(file, { expiresAt: 1, refreshToken: entry.refreshToken })
    assert.equal(await whoami(url, oauth), me)
    assert.deepEqual([user.visits, await stats(issuer)], [2, { tokenRequests: at.tokenRequests + 4, registrations: at.registrations + 1 }])
  })
})

// The client's OAuth 2.1 support (`connectHttp(url, {oauth})`) against the Rust OAuth server
// (fixtures/src/oauth_server.rs): a protected MCP server with an authorization server that
// approves without a user. The user-agent step runs in JavaScript (`authorize`) or, omitted, in
// the core; what `authorize` throws fails the request that needed authorization.

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { AUTH_CASES, mcpaxle, overlay, says, sleep, startOAuthServer, text } from './helpers.mjs'

const { Client, McpError, ErrorKind } = mcpaxle

const REDIRECT_URI = 'http://127.0.0.1:8765/callback'

/** Follows the authorization server's redirect, as a browser would, and returns where it went. */
async function followRedirect(authorizationUrl) {
  const response = await fetch(authorizationUrl, { redirect: 'manual' })
  await response.body?.cancel()
  assert.equal(response.status, 302, `the authorization server answered ${response.status}`)
  return response.headers.get('location')
}

/** An `authorize` callback recording each authorization URL it is given. */
function recordingAuthorize() {
  const urls = []
  const authorize = async (authorizationUrl) => {
    urls.push(new URL(authorizationUrl))
    return followRedirect(authorizationUrl)
  }
  return { urls, authorize }
}

describe('OAuth (Rust oauth_server)', () => {
  let server

  before(async () => {
    server = await startOAuthServer()
  })

  after(async () => {
    await server?.stop()
  })

  /** Runs `f` and returns how each counter of the server moved meanwhile. */
  async function counting(f) {
    const before = await server.stats()
    const value = await f()
    const now = await server.stats()
    const delta = Object.fromEntries(Object.keys(now).map((k) => [k, now[k] - before[k]]))
    return { value, delta }
  }

  test('a custom authorize callback gets the PKCE authorization URL and its answer is used', async () => {
    const { urls, authorize } = recordingAuthorize()
    const { value: whoami, delta } = await counting(async () => {
      const client = await Client.connectHttp(server.url, { oauth: { redirectUri: REDIRECT_URI, authorize } })
      try {
        return text(await client.callTool('whoami', {}))
      } finally {
        await client.close()
      }
    })
    assert.equal(urls.length, 1)
    const url = urls[0]
    assert.equal(url.origin + url.pathname, `${server.issuer}/authorize`)
    const q = url.searchParams
    assert.equal(q.get('response_type'), 'code')
    assert.match(q.get('code_challenge'), /^[A-Za-z0-9_-]{43}$/)
    assert.equal(q.get('code_challenge_method'), 'S256')
    assert.ok(q.get('state'), 'the authorization URL carries a state')
    assert.equal(q.get('resource'), server.url)
    assert.equal(q.get('redirect_uri'), REDIRECT_URI)
    assert.match(whoami, /^client \S+, scopes .*notes:read/)
    assert.deepEqual(
      { authorizations: delta.authorizations, token_requests: delta.token_requests, registrations: delta.registrations },
      { authorizations: 1, token_requests: 1, registrations: 1 },
    )
  })

  test("the callback's answer is what the token request uses (a URL object works too)", async () => {
    // The genuine redirect with its code replaced: the token request must fail.
    const forged = async (authorizationUrl) => {
      const redirect = new URL(await followRedirect(authorizationUrl))
      redirect.searchParams.set('code', 'forged-code')
      return redirect
    }
    const { value: outcome, delta } = await counting(() =>
      Client.connectHttp(server.url, { oauth: { redirectUri: REDIRECT_URI, authorize: forged } }).then(
        (c) => c.close().then(() => 'connected'),
        (e) => e,
      ),
    )
    assert.ok(outcome instanceof McpError && /invalid_grant/.test(outcome.message), `connecting with a forged code should fail, got ${outcome}`)
    assert.ok(delta.token_requests >= 1, 'the forged code reached the token endpoint')

    const asUrl = async (authorizationUrl) => new URL(await followRedirect(authorizationUrl))
    const client = await Client.connectHttp(server.url, { oauth: { redirectUri: REDIRECT_URI, authorize: asUrl } })
    try {
      assert.match(text(await client.callTool('whoami', {})), /^client /)
    } finally {
      await client.close()
    }
  })

  test('without authorize, the core follows the redirect itself', async () => {
    const { value: whoami, delta } = await counting(async () => {
      const client = await Client.connectHttp(server.url, { oauth: { redirectUri: REDIRECT_URI } })
      try {
        return text(await client.callTool('whoami', {}))
      } finally {
        await client.close()
      }
    })
    assert.match(whoami, /^client \S+, scopes .*notes:read/)
    assert.equal(delta.authorizations, 1)
  })

  test('pre-registered credentials skip registration', async () => {
    const oauth = {
      redirectUri: REDIRECT_URI,
      clientId: 'preregistered-client',
      clientSecret: 'preregistered-secret',
      issuer: server.issuer,
    }
    const { value: whoami, delta } = await counting(async () => {
      const client = await Client.connectHttp(server.url, { oauth })
      try {
        return text(await client.callTool('whoami', {}))
      } finally {
        await client.close()
      }
    })
    assert.match(whoami, /^client preregistered-client, scopes /)
    assert.equal(delta.registrations, 0)
    assert.equal(delta.authorizations, 1)
  })

  test('a Client ID Metadata Document URL is the client id where the server takes one', async () => {
    const clientMetadataUrl = 'https://app.example.com/oauth/client.json'
    const { value: whoami, delta } = await counting(async () => {
      const client = await Client.connectHttp(server.url, { oauth: { redirectUri: REDIRECT_URI, clientMetadataUrl } })
      try {
        return text(await client.callTool('whoami', {}))
      } finally {
        await client.close()
      }
    })
    assert.equal(whoami.split(',')[0], `client ${clientMetadataUrl}`)
    assert.equal(delta.registrations, 0)
  })

  test('an error thrown or rejected by authorize fails the request with its message', async () => {
    const throwing = () => {
      throw new Error('the user closed the browser')
    }
    await assert.rejects(
      Client.connectHttp(server.url, { oauth: { redirectUri: REDIRECT_URI, authorize: throwing } }),
      (e) => e instanceof McpError && e.kind === ErrorKind.TRANSPORT && e.message.includes('the user closed the browser'),
    )
    const rejecting = async () => {
      await sleep(1)
      throw new McpError(ErrorKind.CANCELLED, 'authorization cancelled by the user')
    }
    await assert.rejects(
      Client.connectHttp(server.url, { oauth: { redirectUri: REDIRECT_URI, authorize: rejecting } }),
      (e) => e instanceof McpError && e.kind === ErrorKind.CANCELLED && e.message.includes('authorization cancelled by the user'),
    )
    await assert.rejects(
      Client.connectHttp(server.url, { oauth: { redirectUri: REDIRECT_URI, authorize: async () => 42 } }),
      (e) => e instanceof McpError && e.kind === ErrorKind.USAGE && /oauth\.authorize must resolve with/.test(e.message),
    )
  })

  test('a 403 insufficient_scope steps up: write_note re-authorizes with notes:write', async () => {
    const { urls, authorize } = recordingAuthorize()
    const client = await Client.connectHttp(server.url, { oauth: { redirectUri: REDIRECT_URI, authorize } })
    try {
      assert.doesNotMatch(text(await client.callTool('whoami', {})), /notes:write/)
      assert.equal(urls.length, 1)
      assert.equal(text(await client.callTool('write_note', { text: 'hello' })), 'saved: hello')
      assert.equal(urls.length, 2)
      const scopes = urls[1].searchParams.get('scope').split(' ')
      assert.ok(scopes.includes('notes:read') && scopes.includes('notes:write'), `step-up scopes: ${scopes}`)
      assert.match(text(await client.callTool('whoami', {}, { bypassCache: true })), /notes:write/)
      assert.equal(urls.length, 2, 'the stepped-up token is kept')
    } finally {
      await client.close()
    }
  })

  test('an expired access token is refreshed, with no new authorization', async () => {
    const shortLived = await startOAuthServer({ tokenTtl: 1 })
    const { urls, authorize } = recordingAuthorize()
    const client = await Client.connectHttp(shortLived.url, { oauth: { redirectUri: REDIRECT_URI, authorize } })
    try {
      assert.match(text(await client.callTool('whoami', {})), /^client /)
      await sleep(1500)
      assert.match(text(await client.callTool('whoami', {}, { bypassCache: true })), /^client /)
      assert.equal(urls.length, 1)
      const stats = await shortLived.stats()
      assert.equal(stats.authorizations, 1)
      assert.ok(stats.refreshes >= 1, `refreshes: ${stats.refreshes}`)
    } finally {
      await client.close()
      await shortLived.stop()
    }
  })
})

test('bad oauth options reject with USAGE and say what is wrong', async () => {
  const url = 'http://127.0.0.1:1/mcp'
  const cases = [
    [{ oauth: 'yes' }, /oauth must be an object/],
    [{ oauth: { redirectUri: REDIRECT_URI, authorize: 'open a browser' } }, /oauth\.authorize must be a function/],
  ]
  for (const [options, message] of cases) {
    await assert.rejects(
      Client.connectHttp(url, options),
      (e) => e instanceof McpError && e.kind === ErrorKind.USAGE && message.test(e.message),
      `${JSON.stringify(options)} should reject with USAGE matching ${message}`,
    )
  }
  await assert.rejects(Client.connectStdio('node', [], { oauth: { redirectUri: REDIRECT_URI } }), {
    kind: 'usage',
    message: /oauth applies to Streamable HTTP/,
  })
})

test('every invalid oauth of the shared table rejects with USAGE naming its option', async () => {
  const { valid, cases } = AUTH_CASES.oauth
  assert.ok(cases.length >= 10)
  for (const c of cases) {
    await assert.rejects(
      Client.connectHttp('http://127.0.0.1:1/mcp', { oauth: overlay(valid, c.set) }),
      (e) => e instanceof McpError && e.kind === ErrorKind.USAGE && e.message.startsWith('the client options: ') && says(e.message, 'oauth', c.path, c.message),
      `${c.name}: should reject with USAGE saying oauth.${c.path}: ${c.message}`,
    )
  }
})

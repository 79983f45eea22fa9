// A Node server and Node machine clients behind a real OpenID provider: oidc-provider (pinned in
// tests/oidc, installed there with npm ci on first use) on loopback. The server checks JWT access
// tokens with the built-in `jwt` verifier (no verify callback); clients get their own tokens with
// the client credentials grant, with a secret and with private_key_jwt (the provider holds only the
// public key), discovered from the server's 401; a wrong secret fails with the provider's error.

import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
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

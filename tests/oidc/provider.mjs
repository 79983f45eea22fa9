// oidc-provider (the certified OpenID provider, pinned in package.json) as the issuer of the
// bearer auth tests: client credentials for three machine clients (client_secret_basic or
// _post, and private_key_jwt), JWT access tokens (ES256, RFC 9068) for the fixed test resources
// and for any loopback MCP endpoint (http://127.0.0.1:PORT/mcp), opaque ones for another and
// for loopback endpoints at /opaque, introspection and revocation. Users: the authorization
// code grant with PKCE for clients that register themselves (dynamic registration), with
// refresh tokens rotated at each use; the login and consent pages are two small JSON
// endpoints a test answers over HTTP (below), as a browser would submit the forms.
//
// For the tests to count what clients ask: GET /test/stats answers
// {"tokenRequests": N, "registrations": N}.
//
//   node tests/oidc/provider.mjs PORT KID
//
// Serves http://127.0.0.1:PORT; signs with a fresh P-256 key named KID (start it again with
// another KID to rotate the issuer's keys). Prints `client-key BASE64` (the PKCS#8 PEM private key
// of the private_key_jwt client `ci-key-job`, made afresh at each start), then `ready URL` once it
// listens; stops on SIGTERM.
import { generateKeyPairSync } from 'node:crypto'
import Provider from 'oidc-provider'

const [port, kid] = [Number(process.argv[2]), process.argv[3] ?? 'k1']
const issuer = `http://127.0.0.1:${port}`
// The resources the tests protect: JWT access tokens for the first, opaque ones for the second.
export const JWT_RESOURCE = 'http://127.0.0.1/jwt/mcp'
export const OPAQUE_RESOURCE = 'http://127.0.0.1/opaque/mcp'
const OTHER_RESOURCE = 'http://127.0.0.1/other/mcp'

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
const key = { ...privateKey.export({ format: 'jwk' }), kid, use: 'sig', alg: 'ES256' }
// The private_key_jwt client's own key pair: the provider knows only the public half.
const clientKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
const clientJwk = { ...clientKey.publicKey.export({ format: 'jwk' }), kid: 'ci-key', use: 'sig', alg: 'ES256' }
const LOOPBACK_MCP = /^http:\/\/127\.0\.0\.1:\d+\/mcp$/
const LOOPBACK_OPAQUE = /^http:\/\/127\.0\.0\.1:\d+\/opaque$/

const provider = new Provider(issuer, {
  clientDefaults: { id_token_signed_response_alg: 'ES256' },
  scopes: ['openid', 'offline_access', 'mcp:tools', 'mcp:admin'],
  jwks: { keys: [key] },
  clients: [
    { client_id: 'ci-job', client_secret: 'ci-secret', grant_types: ['client_credentials'], redirect_uris: [], response_types: [], scope: 'mcp:tools mcp:admin' },
    { client_id: 'mcp-server', client_secret: 'mcp-server-secret', grant_types: [], redirect_uris: [], response_types: [] },
    {
      client_id: 'ci-key-job', grant_types: ['client_credentials'], redirect_uris: [], response_types: [], scope: 'mcp:tools mcp:admin',
      token_endpoint_auth_method: 'private_key_jwt', token_endpoint_auth_signing_alg: 'ES256', jwks: { keys: [clientJwk] },
    },
  ],
  // The login and consent "pages": see the interaction routes below.
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  // Every client allowed the refresh_token grant gets a refresh token with its code (without
  // requiring the offline_access scope), and each refresh replaces it (rotation).
  issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  rotateRefreshToken: () => true,
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => JWT_RESOURCE,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource) => {
        const loopback = LOOPBACK_MCP.test(resource) || LOOPBACK_OPAQUE.test(resource)
        if (![JWT_RESOURCE, OPAQUE_RESOURCE, OTHER_RESOURCE].includes(resource) && !loopback) {
          throw new Provider.errors.InvalidTarget()
        }
        return {
          scope: 'mcp:tools mcp:admin',
          audience: resource,
          accessTokenTTL: 300,
          accessTokenFormat: resource === OPAQUE_RESOURCE || LOOPBACK_OPAQUE.test(resource) ? 'opaque' : 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        }
      },
    },
  },
})
provider.proxy = false

const stats = { tokenRequests: 0, registrations: 0 }

/** A urlencoded request body. */
async function form(req) {
  const chunks = []
  for await (const chunk of req) chunks.push(chunk)
  return new URLSearchParams(Buffer.concat(chunks).toString())
}

// The login and consent pages, as JSON: GET /interaction/UID says which prompt is up
// ({"prompt": "login"} or {"prompt": "consent", "details": ...}); POST /interaction/UID with
// `login=ACCOUNT`, or `consent=approve` (grants what the client asked: its scopes, for the
// resource it named) or `consent=deny`, redirects on as the provider says. A test's authorize
// callback walks them with a cookie jar, as a user's browser would.
provider.use(async (ctx, next) => {
  if (ctx.path === '/test/stats') {
    ctx.body = stats
    return
  }
  if (ctx.method === 'POST' && ctx.path === '/token') stats.tokenRequests += 1
  if (ctx.method === 'POST' && ctx.path === '/reg') stats.registrations += 1
  const page = ctx.path.match(/^\/interaction\/([^/]+)$/)
  if (!page) return next()
  const interaction = await provider.interactionDetails(ctx.req, ctx.res)
  const { prompt, params, session } = interaction
  if (ctx.method === 'GET') {
    ctx.body = { uid: interaction.uid, prompt: prompt.name, details: prompt.details, client: params.client_id }
    return
  }
  const answer = await form(ctx.req)
  let result
  if (prompt.name === 'login' && answer.get('login')) {
    result = { login: { accountId: answer.get('login') } }
  } else if (prompt.name === 'consent' && answer.get('consent') === 'approve') {
    const grant = interaction.grantId
      ? await provider.Grant.find(interaction.grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id })
    const { missingOIDCScope, missingResourceScopes } = prompt.details
    if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(' '))
    for (const [resource, scopes] of Object.entries(missingResourceScopes ?? {})) grant.addResourceScope(resource, scopes.join(' '))
    result = { consent: { grantId: await grant.save() } }
  } else {
    result = { error: 'access_denied', error_description: `the user did not approve (${prompt.name})` }
  }
  ctx.status = 303
  ctx.redirect(await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: true }))
})
console.log(`client-key ${Buffer.from(clientKey.privateKey.export({ format: 'pem', type: 'pkcs8' })).toString('base64')}`)
const server = provider.listen(port, '127.0.0.1', () => console.log(`ready ${issuer}`))
process.on('SIGTERM', () => server.close(() => process.exit(0)))

// oidc-provider (the certified OpenID provider, pinned in package.json) as the issuer of the
// bearer auth tests: client credentials for three machine clients (client_secret_basic or
// _post, and private_key_jwt), JWT access tokens (ES256, RFC 9068) for the fixed test resources
// and for any loopback MCP endpoint (http://127.0.0.1:PORT/mcp), opaque ones for another,
// introspection and revocation.
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

const provider = new Provider(issuer, {
  clientDefaults: { id_token_signed_response_alg: 'ES256' },
  scopes: ['openid', 'mcp:tools', 'mcp:admin'],
  jwks: { keys: [key] },
  clients: [
    { client_id: 'ci-job', client_secret: 'ci-secret', grant_types: ['client_credentials'], redirect_uris: [], response_types: [], scope: 'mcp:tools mcp:admin' },
    { client_id: 'mcp-server', client_secret: 'mcp-server-secret', grant_types: [], redirect_uris: [], response_types: [] },
    {
      client_id: 'ci-key-job', grant_types: ['client_credentials'], redirect_uris: [], response_types: [], scope: 'mcp:tools mcp:admin',
      token_endpoint_auth_method: 'private_key_jwt', token_endpoint_auth_signing_alg: 'ES256', jwks: { keys: [clientJwk] },
    },
  ],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => JWT_RESOURCE,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource) => {
        if (![JWT_RESOURCE, OPAQUE_RESOURCE, OTHER_RESOURCE].includes(resource) && !LOOPBACK_MCP.test(resource)) {
          throw new Provider.errors.InvalidTarget()
        }
        return {
          scope: 'mcp:tools mcp:admin',
          audience: resource,
          accessTokenTTL: 300,
          accessTokenFormat: resource === OPAQUE_RESOURCE ? 'opaque' : 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        }
      },
    },
  },
})
provider.proxy = false
console.log(`client-key ${Buffer.from(clientKey.privateKey.export({ format: 'pem', type: 'pkcs8' })).toString('base64')}`)
const server = provider.listen(port, '127.0.0.1', () => console.log(`ready ${issuer}`))
process.on('SIGTERM', () => server.close(() => process.exit(0)))

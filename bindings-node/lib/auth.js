'use strict'
// Bearer-token protection of a server's Streamable HTTP endpoint (`serveHttp({auth})`): the MCP
// server as an OAuth 2.1 resource server. The core does the protocol (RFC 9728 metadata, the
// 401/403 challenges, the token's subject as the request's principal); this checks the option's
// types and wraps `verify` as the native side's `(token) => Promise<envelope>`.

const { ErrorKind, McpError, okEnvelope, errorEnvelope, typeName, usage } = require('./errors.js')

// A scope token (RFC 6749 §3.3) that also fits in a quoted challenge parameter.
const SCOPE = /^[^\s"\\]+$/

function scopeList(value, what) {
  if (!Array.isArray(value)) throw usage(`${what} must be an array of scope strings, not ${typeName(value)}`)
  for (const s of value) {
    if (typeof s !== 'string' || !SCOPE.test(s)) {
      throw usage(`${what}: each scope must be a non-empty string without spaces, quotes or backslashes, not ${typeName(s)}`)
    }
  }
  return [...value]
}

/** The native `AuthConfig` of the `auth` option of `serveHttp`, its types checked. */
function authConfig(o) {
  if (typeof o !== 'object' || o === null || Array.isArray(o)) {
    throw usage(`auth must be an object: {resource, authorizationServers, verify, requiredScopes?, scopesSupported?, toolScopes?}, not ${typeName(o)}`)
  }
  const r = o.resource
  if (typeof r !== 'string' || !/^https?:\/\//.test(r) || r.includes('#')) {
    throw usage(`auth.resource must be the server's absolute http(s) URL without a fragment, not ${typeName(r)}`)
  }
  const servers = o.authorizationServers
  if (!Array.isArray(servers)) throw usage(`auth.authorizationServers must be an array of issuer URLs, not ${typeName(servers)}`)
  if (servers.length === 0 || !servers.every((s) => typeof s === 'string' && s !== '')) {
    throw usage('auth.authorizationServers must name at least one issuer URL (a non-empty string)')
  }
  const verify = o.verify
  if (typeof verify !== 'function') throw usage(`auth.verify must be a function, async (token) => ({subject, scopes}) | null, not ${typeName(verify)}`)
  const config = { resource: r, authorizationServers: [...servers], verify: (token) => answerVerify(verify, token) }
  if (o.requiredScopes != null) config.requiredScopes = scopeList(o.requiredScopes, 'auth.requiredScopes')
  if (o.scopesSupported != null) config.scopesSupported = scopeList(o.scopesSupported, 'auth.scopesSupported')
  if (o.toolScopes != null) {
    const tools = o.toolScopes
    if (typeof tools !== 'object' || Array.isArray(tools)) throw usage(`auth.toolScopes must be an object of tool name to scopes, not ${typeName(tools)}`)
    config.toolScopes = {}
    for (const [name, scopes] of Object.entries(tools)) {
      if (name === '') throw usage('auth.toolScopes: a tool name must be a non-empty string')
      config.toolScopes[name] = scopeList(scopes, `auth.toolScopes[${JSON.stringify(name)}]`)
    }
  }
  return config
}

/** `info` as `{subject, scopes}` when it has that shape, otherwise null. */
function tokenInfo(info) {
  if (typeof info !== 'object' || Array.isArray(info)) return null
  if (typeof info.subject !== 'string' || info.subject === '') return null
  const scopes = info.scopes ?? []
  if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string' && SCOPE.test(s))) return null
  return { subject: info.subject, scopes: [...scopes] }
}

/**
 * Runs the user's `verify` and wraps its answer in an envelope: `{subject, scopes}`, or null
 * (`undefined` too) for an invalid token. What it throws, or an answer of another shape, is
 * reported on `console.error` (the client only sees `503`) and becomes an error envelope: the
 * core answers `503`.
 */
async function answerVerify(verify, token) {
  const what = `the token verifier ${verify.name || '(anonymous)'}`
  let info
  try {
    info = await verify(token)
  } catch (e) {
    console.error(`mcpaxle: ${what} threw; the request gets 503:`, e)
    return errorEnvelope(new McpError(ErrorKind.INTERNAL, `Internal error in ${what}`))
  }
  if (info == null) return okEnvelope(null)
  const checked = tokenInfo(info)
  if (checked == null) {
    const message = `${what} returned ${typeName(info)}; it must return {subject: non-empty string, scopes?: string[]}, or null for an invalid token`
    console.error(`mcpaxle: ${message}. The request gets 503`)
    return errorEnvelope(new McpError(ErrorKind.INTERNAL, message))
  }
  return okEnvelope(checked)
}

module.exports = { authConfig }

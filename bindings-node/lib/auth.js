'use strict'
// Bearer-token protection of a server's Streamable HTTP endpoint (`serveHttp({auth})`): the MCP
// server as an OAuth 2.1 resource server. The core does the protocol (RFC 9728 metadata, the
// 401/403 challenges, the token's subject as the request's principal) and checks every value of
// the option and every answer of `verify`; this separates `verify`, a function, from the data,
// and wraps it as the native side's `(token) => Promise<envelope>`.

const native = require('../native.js')
const { present } = require('./options.js')
const { ErrorKind, McpError, okEnvelope, errorEnvelope, typeName, usage } = require('./errors.js')

/** The native `AuthConfig` of the `auth` option of `serveHttp`: the data, and `verify` wrapped. */
function authConfig(o) {
  if (typeof o !== 'object' || o === null || Array.isArray(o)) {
    throw usage(`auth must be an object: {resource, authorizationServers, verify | jwt | introspection, requiredScopes?, scopesSupported?, toolScopes?}, not ${typeName(o)}`)
  }
  const { verify, ...data } = o
  // Left out: the core's built-in verifiers (`jwt`, `introspection`), which the core requires then.
  if (verify == null) return present(data)
  if (typeof verify !== 'function') throw usage(`auth.verify must be a function, async (token) => ({subject, scopes}) | null, not ${typeName(verify)}`)
  return { ...present(data), verify: (token) => answerVerify(verify, token) }
}

/** The JSON text of a verifier's answer, or undefined when it has none (a function, a cycle). */
function answerJson(info) {
  try {
    return JSON.stringify(info)
  } catch {
    return undefined
  }
}

/**
 * Runs the user's `verify` and wraps its answer in an envelope: `{subject, scopes}`, or null
 * (`undefined` too) for an invalid token. What it throws, or an answer the core refuses, is
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
  const json = answerJson(info)
  const problem = json === undefined ? `${typeName(info)} is not JSON` : native.tokenAnswerProblem(json)
  if (problem != null) {
    console.error(`mcpaxle: ${what} returned ${typeName(info)}, so the request gets 503: ${problem}`)
    return errorEnvelope(new McpError(ErrorKind.INTERNAL, `${what}: ${problem}`))
  }
  return okEnvelope(info)
}

module.exports = { authConfig }

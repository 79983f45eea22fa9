'use strict'
// Errors: every failure is an `McpError` with a stable `code` (the core's error kind) and, for
// JSON-RPC errors, the `rpcCode`. The native module reports errors as a marked JSON message
// (src/errors.rs); `rethrow` turns those into `McpError`s, and `toEnvelope` turns whatever a
// handler throws into the JSON the native side reads.

const MARKER = '\u0001mcpaxle-error:'

/** The stable error codes (the core's `ErrorKind`s). */
const ErrorCode = Object.freeze({
  PARSE_ERROR: 'PARSE_ERROR',
  INVALID_REQUEST: 'INVALID_REQUEST',
  METHOD_NOT_FOUND: 'METHOD_NOT_FOUND',
  INVALID_PARAMS: 'INVALID_PARAMS',
  INTERNAL: 'INTERNAL',
  HEADER_MISMATCH: 'HEADER_MISMATCH',
  MISSING_REQUIRED_CLIENT_CAPABILITY: 'MISSING_REQUIRED_CLIENT_CAPABILITY',
  UNSUPPORTED_PROTOCOL_VERSION: 'UNSUPPORTED_PROTOCOL_VERSION',
  TOOL: 'TOOL',
  INPUT_REQUIRED: 'INPUT_REQUIRED',
  CANCELLED: 'CANCELLED',
  PANIC: 'PANIC',
  TRANSPORT: 'TRANSPORT',
  REMOTE: 'REMOTE',
  TIMEOUT: 'TIMEOUT',
  USAGE: 'USAGE',
})

/** An mcpaxle error: `code` is one of `ErrorCode`; `rpcCode` the JSON-RPC code, when any. */
class McpError extends Error {
  constructor(code, message, options = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'McpError'
    this.code = code
    if (options.rpcCode !== undefined) this.rpcCode = options.rpcCode
    if (options.data !== undefined) this.data = options.data
  }
}

/**
 * Thrown by a tool handler for a failure the model should read: the call answers with
 * `isError: true` and this message as text.
 */
class ToolError extends McpError {
  constructor(message, options) {
    super(ErrorCode.TOOL, message, options)
    this.name = 'ToolError'
  }
}

// The codes of napi's own errors (an argument of the wrong type, a closing environment).
const NAPI_STATUS = new Set(['InvalidArg', 'ObjectExpected', 'StringExpected', 'NameExpected', 'FunctionExpected',
  'NumberExpected', 'BooleanExpected', 'ArrayExpected', 'GenericFailure', 'BigintExpected', 'DateExpected',
  'ArrayBufferExpected', 'Closing', 'QueueFull', 'Cancelled', 'Unknown'])

/** The `McpError` a native error stands for, or the error itself. */
function fromNative(e) {
  const message = e && typeof e.message === 'string' ? e.message : ''
  if (!message.startsWith(MARKER)) {
    if (e instanceof Error && !(e instanceof McpError) && NAPI_STATUS.has(e.code)) {
      return new McpError(ErrorCode.USAGE, message, { cause: e })
    }
    return e
  }
  let info
  try {
    info = JSON.parse(message.slice(MARKER.length))
  } catch {
    return e
  }
  return new McpError(info.code, info.message, { rpcCode: info.rpcCode, data: info.data })
}

/** Rethrows a native error as an `McpError` (use as a promise's rejection handler). */
function rethrow(e) {
  throw fromNative(e)
}

/** Runs `f`, which returns a promise; a synchronous throw becomes a rejection. */
function attempt(f) {
  try {
    return f()
  } catch (e) {
    return Promise.reject(fromNative(e))
  }
}

/** Calls a native function, turning a thrown native error into an `McpError`. */
function sync(f) {
  try {
    return f()
  } catch (e) {
    throw fromNative(e)
  }
}

/** The JSON-able description of any thrown value; `fallback` is the code of non-mcpaxle errors. */
function describe(e, fallback) {
  if (e instanceof McpError) {
    const out = { code: e.code, message: String(e.message) }
    if (e.rpcCode !== undefined) out.rpcCode = e.rpcCode
    if (e.data !== undefined) out.data = e.data
    return out
  }
  const message = e instanceof Error ? e.message : String(e)
  // Not an mcpaxle error: the core decides what a client sees of it (`maskErrorDetails`).
  return { code: fallback, message: message || 'the handler failed', unexpected: true }
}

/** A handler's outcome as the envelope the native side opens. */
function okEnvelope(value) {
  return JSON.stringify({ ok: value === undefined ? null : value })
}

function errorEnvelope(e, fallback = ErrorCode.INTERNAL) {
  const d = describe(e, fallback)
  try {
    return JSON.stringify({ error: d })
  } catch {
    delete d.data
    return JSON.stringify({ error: d })
  }
}

/** Opens an envelope the native side sent: the value, or throws its error. */
function openEnvelope(text) {
  const v = JSON.parse(text)
  if (v.error) throw new McpError(v.error.code, v.error.message, { rpcCode: v.error.rpcCode, data: v.error.data })
  return v.ok
}

/** How a wrong value is named in a usage error: its type, or the value of a primitive. */
function typeName(v) {
  if (v == null) return String(v)
  if (Array.isArray(v)) return 'an array'
  if (typeof v === 'string') return JSON.stringify(v)
  if (typeof v === 'number' || typeof v === 'boolean') return `${typeof v} ${String(v)}`
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`
}

function usage(message) {
  return new McpError(ErrorCode.USAGE, message)
}

module.exports = { ErrorCode, McpError, ToolError, fromNative, rethrow, attempt, sync, okEnvelope, errorEnvelope, openEnvelope, typeName, usage }

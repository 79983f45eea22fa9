'use strict'
// Errors: every failure is an `McpError` that reads as in every mcpaxle binding: `kind` (the
// core's error kind, e.g. 'invalid_params'), `code` (the JSON-RPC code, a number), `message`
// and, when there is any, `data`. The kinds and their codes come from the core (the native
// `errorKinds()`), never from a table here. The native module reports errors as a marked JSON
// message (src/errors.rs); `rethrow` turns those into `McpError`s, and `toEnvelope` turns
// whatever a handler throws into the JSON the native side reads.

const native = require('../native.js')

const MARKER = '\u0001mcpaxle-error:'

/** The JSON-RPC code of each kind, by name, in the core's order. */
const CODES = new Map(native.errorKinds().map((k) => [k.name, k.code]))

/** The kinds of the core's errors: `ErrorKind.INVALID_PARAMS === 'invalid_params'`. */
const ErrorKind = Object.freeze(Object.fromEntries([...CODES.keys()].map((name) => [name.toUpperCase(), name])))

/**
 * An mcpaxle error: `kind` is one of `ErrorKind`; `code` the JSON-RPC code (the kind's unless
 * `options.code` gives another); `data` the JSON-RPC error's data, when any.
 */
class McpError extends Error {
  constructor(kind, message, options = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    if (!CODES.has(kind)) {
      throw new TypeError(`unknown error kind ${JSON.stringify(kind)}; the kinds are: ${[...CODES.keys()].join(', ')}`)
    }
    this.name = 'McpError'
    this.kind = kind
    this.code = options.code === undefined ? CODES.get(kind) : options.code
    if (options.data !== undefined) this.data = options.data
  }
}

/**
 * Thrown by a tool handler for a failure the model should read: the call answers with
 * `isError: true` and this message as text.
 */
class ToolError extends McpError {
  constructor(message, options) {
    super(ErrorKind.TOOL, message, options)
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
      return new McpError(ErrorKind.USAGE, message, { cause: e })
    }
    return e
  }
  let info
  try {
    info = JSON.parse(message.slice(MARKER.length))
  } catch {
    return e
  }
  return fromJson(info)
}

/** The `McpError` of an error's JSON from the native side (`{kind, code, message, data?}`). */
function fromJson(info) {
  const kind = CODES.has(info.kind) ? info.kind : ErrorKind.INTERNAL
  return new McpError(kind, info.message, { code: info.code, data: info.data })
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

/** The JSON-able description of any thrown value; `fallback` is the kind of non-mcpaxle errors. */
function describe(e, fallback) {
  if (e instanceof McpError) {
    const out = { kind: e.kind, message: String(e.message) }
    if (typeof e.code === 'number') out.code = e.code
    if (e.data !== undefined) out.data = e.data
    return out
  }
  const message = e instanceof Error ? e.message : String(e)
  // Not an mcpaxle error: the core decides what a client sees of it (`maskErrorDetails`).
  return { kind: fallback, message: message || 'the handler failed', unexpected: true }
}

/** A handler's outcome as the envelope the native side opens. */
function okEnvelope(value) {
  return JSON.stringify({ ok: value === undefined ? null : value })
}

function errorEnvelope(e, fallback = ErrorKind.INTERNAL) {
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
  if (v.error) throw fromJson(v.error)
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
  return new McpError(ErrorKind.USAGE, message)
}

module.exports = { ErrorKind, McpError, ToolError, fromNative, fromJson, rethrow, attempt, sync, okEnvelope, errorEnvelope, openEnvelope, typeName, usage }

'use strict'
// The MCP client: a thin layer over the native `NativeClient` (src/client.rs). Values cross the
// boundary as JSON text; callbacks (input handlers, progress, log messages, subscription
// delivery) are called on this thread by the native side.

const native = require('../native.js')
const { ErrorKind, McpError, attempt, fromNative, okEnvelope, errorEnvelope, rethrow, sync, typeName, usage } = require('./errors.js')
const { Subscription } = require('./subscription.js')
const { optionsJson, present } = require('./options.js')
const { withActiveTrace } = require('./otel.js')

const INPUT_KINDS = ['elicitation', 'sampling', 'roots']
const HANDLER_OPTION = { elicitation: 'onElicitation', sampling: 'onSampling', roots: 'onRoots' }

/** Reports an exception thrown by a user callback the way an event listener's would be. */
function reportCallbackError(e) {
  process.nextTick(() => {
    throw e
  })
}

/** `(json) => void` calling `f` with the parsed value. */
function eventCallback(f) {
  if (f == null) return undefined
  if (typeof f !== 'function') throw usage('callbacks must be functions')
  return (json) => {
    try {
      f(JSON.parse(json))
    } catch (e) {
      reportCallbackError(e)
    }
  }
}

/** The callbacks among the client options; the rest is data the core reads. */
const CLIENT_CALLBACKS = ['onElicitation', 'onSampling', 'onRoots', 'onLog']

function clientConfig(options, handlers, http) {
  const o = options || {}
  if (typeof o !== 'object') throw usage('the client options must be an object')
  const declared = new Set()
  for (const kind of INPUT_KINDS) {
    const f = o[HANDLER_OPTION[kind]]
    if (f != null) {
      if (typeof f !== 'function') throw usage(`${HANDLER_OPTION[kind]} must be a function`)
      handlers[kind] = f
      declared.add(kind)
    }
    if (o.capabilities && o.capabilities[kind] != null) declared.add(kind)
  }
  const data = { ...o, clientInfo: o.clientInfo || { name: 'mcpaxle-node', version: require('../package.json').version } }
  const config = {
    inputKinds: [...declared],
    onInput: (kind, paramsJson) => answerInput(handlers, kind, paramsJson),
  }
  if (o.onLog != null) config.onLog = eventCallback(o.onLog)
  if (o.oauth != null) {
    if (!http) throw usage('oauth applies to Streamable HTTP: pass it to Client.connectHttp()')
    const { authorize, tokenStoreCallback, ...oauth } = oauthConfig(o.oauth)
    if (authorize) config.authorize = authorize
    if (tokenStoreCallback) {
      config.tokenStore = tokenStoreCallback
      delete oauth.tokenStore
    }
    data.oauth = oauth
  }
  config.optionsJson = optionsJson(data, 'the client options', CLIENT_CALLBACKS)
  return { config, declared }
}

/**
 * The `oauth` option: its data for the core, which checks every value (the messages name the
 * option), and `authorize` wrapped as the native side's `(url) => Promise<envelope>`.
 */
function oauthConfig(o) {
  if (typeof o !== 'object' || Array.isArray(o)) throw usage(`oauth must be an object: {redirectUri, authorize?, clientId?, ...}, not ${typeName(o)}`)
  const { authorize, ...data } = o
  const config = present(data)
  if (authorize != null) {
    if (typeof authorize !== 'function') throw usage(`oauth.authorize must be a function, async (authorizationUrl) => redirectUrl, not ${typeName(authorize)}`)
    config.authorize = (url) => answerAuthorize(authorize, url)
  }
  // A store object of the application's own ({load, save, clear}); data ('memory', {file}) is
  // the core's to read.
  const store = data.tokenStore
  if (store != null && typeof store === 'object' && ['load', 'save', 'clear'].every((m) => typeof store[m] === 'function')) {
    config.tokenStoreCallback = (requestJson) => answerStore(store, requestJson)
  }
  return config
}

/**
 * Runs one of the core's token store operations on the application's store object: `load(key)`
 * resolves with the token it saved or null, `save(key, token)` and `clear(key)` with anything.
 * What it throws fails the request that needed the token, as a TRANSPORT error naming the
 * operation.
 */
async function answerStore(store, requestJson) {
  const { op, key, token } = JSON.parse(requestJson)
  try {
    const answer = await (op === 'load' ? store.load(key) : op === 'save' ? store.save(key, token) : store.clear(key))
    return okEnvelope(op === 'load' ? (answer ?? null) : null)
  } catch (e) {
    if (e instanceof Error && !(e instanceof McpError)) e.message = `the token store's ${op} failed: ${e.message}`
    return errorEnvelope(e, ErrorKind.TRANSPORT)
  }
}

/**
 * Runs the user's `authorize` and wraps its outcome in an envelope. What it throws fails the
 * request that needed authorization: an `McpError` as it is, anything else as a TRANSPORT
 * error (the kind of the core's own authorization failures) with its message.
 */
async function answerAuthorize(authorize, url) {
  try {
    const redirect = await authorize(url)
    if (redirect instanceof URL) return okEnvelope(redirect.href)
    if (typeof redirect !== 'string') {
      throw usage(`oauth.authorize must resolve with the URL the authorization server redirected to (a string), not ${typeName(redirect)}`)
    }
    return okEnvelope(redirect)
  } catch (e) {
    return errorEnvelope(e, ErrorKind.TRANSPORT)
  }
}

async function answerInput(handlers, kind, paramsJson) {
  try {
    const handler = handlers[kind]
    if (!handler) throw new McpError(ErrorKind.METHOD_NOT_FOUND, `no ${kind} handler is registered on this client`)
    return okEnvelope(await handler(JSON.parse(paramsJson)))
  } catch (e) {
    return errorEnvelope(e)
  }
}

/** Runs `call(token)` with a native cancel token following `signal` (none without a signal). */
function withSignal(signal, call) {
  if (signal == null) return call(undefined)
  if (signal.aborted) return Promise.reject(abortError(signal))
  const token = new native.CancelToken()
  const onAbort = () => token.cancel()
  signal.addEventListener('abort', onAbort, { once: true })
  return call(token).then(
    (v) => {
      signal.removeEventListener('abort', onAbort)
      return v
    },
    (e) => {
      signal.removeEventListener('abort', onAbort)
      if (e instanceof McpError && e.kind === ErrorKind.CANCELLED && signal.aborted) e.cause = signal.reason
      throw e
    },
  )
}

function abortError(signal) {
  return new McpError(ErrorKind.CANCELLED, 'the call was aborted before it started', { cause: signal.reason })
}

/** The callbacks and the signal among a call's options; the rest is data the core reads. */
const CALL_CALLBACKS = ['signal', 'onProgress', 'onLog']

/**
 * The native config of a call's options: the one place the options of every call that takes
 * them are made, so `meta` gets the caller's active OpenTelemetry context here (lib/otel.js).
 */
function callConfig(o) {
  if (o != null && (typeof o !== 'object' || Array.isArray(o))) throw usage(`the call options must be an object, not ${typeName(o)}`)
  const meta = withActiveTrace(o?.meta)
  if (o == null && meta == null) return undefined
  return { optionsJson: optionsJson({ ...o, meta }, 'the call options', CALL_CALLBACKS) }
}

const parse = (text) => JSON.parse(text)

/**
 * An MCP client connected to one server (modern or legacy, over Streamable HTTP or stdio).
 * Create one with `Client.connectHttp` or `Client.connectStdio`; `close()` it when done.
 */
class Client {
  #native
  #handlers
  #declared
  #closed = false

  /** @private use Client.connectHttp / Client.connectStdio / Client.connectInMemory */
  constructor(nativeClient, handlers, declared) {
    if (!(nativeClient instanceof native.NativeClient)) throw usage('use Client.connectHttp(), Client.connectStdio() or Client.connectInMemory()')
    this.#native = nativeClient
    this.#handlers = handlers
    this.#declared = declared
  }

  /**
   * Connects to the Streamable HTTP endpoint at `url` (http:// or https://). With `oauth`, a
   * `401` (or `403 insufficient_scope`) from the server runs the OAuth 2.1 flow and the request
   * is sent again with the access token.
   */
  static async connectHttp(url, options) {
    const handlers = {}
    const { config, declared } = clientConfig(options, handlers, true)
    const n = await attempt(() => native.connectHttp(String(url), config).catch(rethrow))
    return new Client(n, handlers, declared)
  }

  /** Spawns `command` with `args` as the server and connects to it over stdio. */
  static async connectStdio(command, args = [], options) {
    const handlers = {}
    const { config, declared } = clientConfig(options, handlers, false)
    const n = await attempt(() => native.connectStdio(String(command), args.map(String), config).catch(rethrow))
    return new Client(n, handlers, declared)
  }

  /**
   * Connects to `server`, a `Server` of this process, with no port and no child process: the two
   * are joined by the stdio transport over an in-memory pipe, so every request goes through the
   * whole protocol (era detection, MRTR, progress, cancellation, listen streams) as over stdio.
   * For tests: `protocolVersions: ['2025-11-25']` opens a legacy session. Closing the client
   * ends the server's side; the server stays usable (and may serve other clients meanwhile).
   */
  static async connectInMemory(server, options) {
    const { Server, NATIVE } = require('./server.js')
    const nativeServer = Server[NATIVE](server)
    const handlers = {}
    const { config, declared } = clientConfig(options, handlers, false)
    const n = await attempt(() => native.connectInMemory(nativeServer, config).catch(rethrow))
    return new Client(n, handlers, declared)
  }

  #info() {
    return JSON.parse(this.#native.info())
  }

  /** `"modern"` (2026-07-28, per-request `_meta`) or `"legacy"` (an `initialize` session). */
  get era() {
    return this.#info().era
  }

  /** The protocol version in use. */
  get protocolVersion() {
    return this.#info().protocolVersion
  }

  /** The server's `serverInfo`, when it told it. */
  get serverInfo() {
    return this.#info().serverInfo ?? undefined
  }

  /** The server's capabilities. */
  get serverCapabilities() {
    return this.#info().capabilities
  }

  /** The server's instructions, if any. */
  get instructions() {
    return this.#info().instructions ?? undefined
  }

  /** The process id of a server started by `connectStdio`. */
  get pid() {
    return this.#info().pid ?? undefined
  }

  /** The `Mcp-Session-Id` of a legacy HTTP session. */
  get sessionId() {
    return this.#info().sessionId ?? undefined
  }

  /** Sets (or, with `null`, removes) an HTTP header sent with every later request. */
  setHeader(name, value) {
    sync(() => this.#native.setHeader(String(name), value == null ? undefined : String(value)))
  }

  /** Forgets every cached result. */
  clearCache() {
    this.#native.clearCache()
  }

  #setHandler(kind, handler) {
    if (handler != null && typeof handler !== 'function') throw usage(`the ${kind} handler must be a function`)
    if (!this.#declared.has(kind)) {
      throw usage(
        `this client did not declare the ${kind} capability: pass ${HANDLER_OPTION[kind]} (or capabilities.${kind}) ` +
          'to connectHttp/connectStdio, since capabilities are declared when connecting',
      )
    }
    this.#handlers[kind] = handler ?? undefined
    return this
  }

  /** Answers `elicitation/create`: `async (params) => ElicitResult`. */
  onElicitation(handler) {
    return this.#setHandler('elicitation', handler)
  }

  /** Answers `sampling/createMessage`: `async (params) => CreateMessageResult`. */
  onSampling(handler) {
    return this.#setHandler('sampling', handler)
  }

  /** Answers `roots/list`: `async (params) => ListRootsResult`. */
  onRoots(handler) {
    return this.#setHandler('roots', handler)
  }

  /** `server/discover`: versions, capabilities, instructions; options: `signal`. */
  discover(options) {
    return attempt(() => withSignal(options?.signal, (token) => this.#native.discover(token).then(parse, rethrow)))
  }

  #list(what, cursor, options) {
    return attempt(() => withSignal(options?.signal, (token) => this.#native.list(what, cursor ?? undefined, token).then(parse, rethrow)))
  }

  #listAll(what, options) {
    return attempt(() => withSignal(options?.signal, (token) => this.#native.listAll(what, token).then(parse, rethrow)))
  }

  /**
   * One page of `tools/list` (tools with invalid `x-mcp-header` annotations left out);
   * options: `signal`.
   */
  listTools(cursor, options) {
    return this.#list('tools', cursor, options)
  }

  /** Every tool, following `nextCursor`; options: `signal` (cancels the page in flight). */
  listAllTools(options) {
    return this.#listAll('tools', options)
  }

  /** One page of `resources/list`; options: `signal`. */
  listResources(cursor, options) {
    return this.#list('resources', cursor, options)
  }

  /** Every resource; options: `signal`. */
  listAllResources(options) {
    return this.#listAll('resources', options)
  }

  /** One page of `resources/templates/list`; options: `signal`. */
  listResourceTemplates(cursor, options) {
    return this.#list('resourceTemplates', cursor, options)
  }

  /** Every resource template; options: `signal`. */
  listAllResourceTemplates(options) {
    return this.#listAll('resourceTemplates', options)
  }

  /** One page of `prompts/list`; options: `signal`. */
  listPrompts(cursor, options) {
    return this.#list('prompts', cursor, options)
  }

  /** Every prompt; options: `signal`. */
  listAllPrompts(options) {
    return this.#listAll('prompts', options)
  }

  /**
   * `tools/call`; options: `onProgress`, `onLog`, `signal`, `timeoutMs`, `meta`. With
   * `@opentelemetry/api` installed, `_meta` carries the active trace context (W3C `traceparent`,
   * `tracestate`, `baggage`) unless `meta` has a `traceparent` of its own, as for every call that
   * takes `meta`: the call's span (see `telemetry`) and the server's nest under the caller's span.
   */
  callTool(name, args, options) {
    try {
      const argsJson = args == null ? undefined : JSON.stringify(args)
      if (options == null) return this.#native.callTool(String(name), argsJson, callConfig(undefined)).then(parse, rethrow)
      const config = callConfig(options)
      const onProgress = eventCallback(options.onProgress)
      const onLog = eventCallback(options.onLog)
      return withSignal(options.signal, (token) =>
        this.#native.callTool(String(name), argsJson, config, onProgress, onLog, token).then(parse, rethrow),
      )
    } catch (e) {
      return Promise.reject(fromNative(e))
    }
  }

  /**
   * `tools/call`, holding the task the server may run it as (the Tasks extension) instead of
   * following it: resolves with a `ToolTask` (`taskId`, `status()`, `result()`, `cancel()`).
   * When the server answers with the result itself, the handle is already complete (`taskId`
   * is `undefined`, `result()` resolves with it). Options as `callTool`'s: the callbacks and
   * the signal serve this `tools/call` only, `timeoutMs`, `meta` and `logLevel` the handle's
   * requests too. Dropping the handle does not cancel the task; `cancel()` does.
   */
  callToolAsTask(name, args, options) {
    return attempt(() => {
      const argsJson = args == null ? undefined : JSON.stringify(args)
      const config = callConfig(options)
      const onProgress = eventCallback(options?.onProgress)
      const onLog = eventCallback(options?.onLog)
      return withSignal(options?.signal, (token) =>
        this.#native.callToolAsTask(String(name), argsJson, config, onProgress, onLog, token).then((n) => new ToolTask(n), rethrow),
      )
    })
  }

  /**
   * The `ToolTask` of a task created earlier, from its id alone (by this client or another one
   * with the same credentials, e.g. before the application restarted). Sends nothing: an
   * unknown id fails at the first request.
   */
  task(taskId) {
    return sync(() => new ToolTask(this.#native.task(String(taskId))))
  }

  /** `resources/read`; options: `onProgress`, `signal`, `timeoutMs`, `meta`, `bypassCache`. */
  readResource(uri, options = {}) {
    return attempt(() => {
      const config = callConfig(options)
      const onProgress = eventCallback(options.onProgress)
      return withSignal(options.signal, (token) =>
        this.#native.readResource(String(uri), config, onProgress, token).then(parse, rethrow),
      )
    })
  }

  /** `prompts/get` with string arguments. */
  getPrompt(name, args, options = {}) {
    return attempt(() => {
      const argsJson = args == null ? undefined : JSON.stringify(args)
      const config = callConfig(options)
      const onProgress = eventCallback(options.onProgress)
      return withSignal(options.signal, (token) =>
        this.#native.getPrompt(String(name), argsJson, config, onProgress, token).then(parse, rethrow),
      )
    })
  }

  /**
   * `completion/complete`: `ref` is `{type: 'ref/prompt', name}` or `{type: 'ref/resource', uri}`,
   * `argument` is `{name, value}`, `context` optionally `{arguments: {...}}`; options: `signal`.
   */
  complete(ref, argument, context, options) {
    return attempt(() => {
      const refJson = JSON.stringify(ref)
      const argumentJson = JSON.stringify(argument)
      const contextJson = context == null ? undefined : JSON.stringify(context)
      return withSignal(options?.signal, (token) =>
        this.#native.complete(refJson, argumentJson, contextJson, token).then(parse, rethrow),
      )
    })
  }

  /** Any request, through the whole pipeline (`_meta`, headers, cache, MRTR, retries). */
  request(method, params, options = {}) {
    return attempt(() => {
      const paramsJson = params == null ? undefined : JSON.stringify(params)
      const config = callConfig(options)
      const onProgress = eventCallback(options.onProgress)
      const onLog = eventCallback(options.onLog)
      return withSignal(options.signal, (token) =>
        this.#native.request(String(method), paramsJson, config, onProgress, onLog, token).then(parse, rethrow),
      )
    })
  }

  /**
   * Opens a subscription to change notifications: `filter` is a `SubscriptionFilter`
   * (`toolsListChanged`, `promptsListChanged`, `resourcesListChanged`,
   * `resourceSubscriptions`). Resolves once the server acknowledged it, with an async
   * iterable of notifications; `close()` it when done (an open subscription keeps the process
   * alive). Options: `signal`, which cancels the request while it waits for the
   * acknowledgment and closes the subscription once it is open (the iteration then ends).
   */
  async subscribe(filter = {}, options) {
    const sub = new Subscription()
    const filterJson = JSON.stringify(filter)
    const n = await attempt(() =>
      withSignal(options?.signal, (token) => this.#native.subscribe(filterJson, sub._deliver, token).catch(rethrow)),
    )
    sub._attach(n, options?.signal)
    return sub
  }

  /** Closes the connection: pending calls fail, a stdio server is shut down. */
  async close() {
    if (this.#closed) return
    this.#closed = true
    await this.#native.close().catch(rethrow)
  }

  /** `await using client = await Client.connectHttp(...)` closes it at the end of the block. */
  async [Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose')]() {
    await this.close()
  }
}

/**
 * A `tools/call` held as a task (`client.callToolAsTask`, `client.task`). The task outlives this
 * object: dropping it, or aborting a `result()` with its signal, does not cancel the task;
 * `cancel()` does.
 */
class ToolTask {
  #native

  /** @private use client.callToolAsTask() / client.task() */
  constructor(nativeTask) {
    if (!(nativeTask instanceof native.NativeToolTask)) throw usage('use client.callToolAsTask() or client.task()')
    this.#native = nativeTask
  }

  /** The task's id (keep it to pick the task up later), `undefined` when the server answered with the result at once. */
  get taskId() {
    return this.#native.taskId ?? undefined
  }

  /** `tasks/get`: the task's status and what it carries; options: `signal`. Rejects with kind `usage` when there is no task. */
  status(options) {
    return attempt(() => withSignal(options?.signal, (token) => this.#native.status(token).then(parse, rethrow)))
  }

  /**
   * The call's result: follows the task to its end as `callTool` does (answering its input
   * requests with the client's input handlers); options: `signal` (stops waiting, not the task).
   */
  result(options) {
    return attempt(() => withSignal(options?.signal, (token) => this.#native.result(token).then(parse, rethrow)))
  }

  /** `tasks/cancel`: the server acknowledges; without a task, nothing to do. */
  cancel() {
    return attempt(() => this.#native.cancel().catch(rethrow))
  }
}

module.exports = { Client, ToolTask }

/**
 * Fills the members of an elicitation answer's `content` that `requestedSchema` gives a
 * default for and that are missing (SEP-1034); returns a new object.
 */
function applySchemaDefaults(requestedSchema, content = {}) {
  return JSON.parse(sync(() => native.applySchemaDefaults(JSON.stringify(requestedSchema ?? {}), JSON.stringify(content))))
}

module.exports.applySchemaDefaults = applySchemaDefaults

'use strict'
// The MCP server: tools, resources, resource templates, prompts and completions with
// JavaScript handlers, over the native `NativeServer` (src/server.rs). A handler runs on this
// thread, sync or async; what it returns (or throws) goes back to the core as an envelope.

const native = require('../native.js')
const { authConfig } = require('./auth.js')
const { optionsJson } = require('./options.js')
const mount = require('./mount.js')
const { inTrace } = require('./otel.js')
const { ErrorKind, McpError, attempt, okEnvelope, errorEnvelope, openEnvelope, rethrow, sync, typeName, usage } = require('./errors.js')

/** What a handler gets besides its input: the request's metadata, progress, logs, MRTR asks. */
class RequestContext {
  #callId
  #nativeCtx = null
  #info = null
  #signal = null

  /** @private */
  constructor(callId) {
    this.#callId = callId
  }

  /** The native context of the handler's run, made when first used (most handlers never do). */
  get #native() {
    if (this.#nativeCtx == null) {
      this.#nativeCtx = native.requestContext(this.#callId)
      if (this.#nativeCtx == null) throw usage('this request is over: a handler can use its ctx only until it returns')
    }
    return this.#nativeCtx
  }

  #meta() {
    this.#info ??= JSON.parse(this.#native.info())
    return this.#info
  }

  /** The JSON-RPC id of the request. */
  get requestId() {
    return this.#meta().requestId
  }

  /** The method, e.g. `tools/call`. */
  get method() {
    return this.#meta().method
  }

  /** The protocol version of the request. */
  get protocolVersion() {
    return this.#meta().protocolVersion
  }

  /** The client's capabilities for this request. */
  get clientCapabilities() {
    return this.#meta().clientCapabilities
  }

  /** The client's `clientInfo`, when sent. */
  get clientInfo() {
    return this.#meta().clientInfo ?? undefined
  }

  /** The request's whole `_meta`. */
  get meta() {
    return this.#meta().meta
  }

  /** The authenticated principal, when the transport set one. */
  get principal() {
    return this.#meta().principal ?? undefined
  }

  /** The request's HTTP headers (lowercase names, repeated ones joined with ", "); `{}` on stdio. */
  get headers() {
    return this.#meta().headers ?? {}
  }

  /** The bearer token's claims (what the verifier answered as `claims`); undefined without a token. */
  get claims() {
    return this.#meta().claims ?? undefined
  }

  /** The bearer token's scopes; undefined without a token. */
  get scopes() {
    return this.#meta().scopes ?? undefined
  }

  /** The request's progress token, when the client asked for progress. */
  get progressToken() {
    return this.#meta().progressToken ?? undefined
  }

  /** Whether the client declared a capability (`"sampling"`, `"elicitation"`, `"roots"`, …). */
  clientSupports(capability) {
    const c = this.clientCapabilities
    return c != null && c[capability] != null
  }

  /** Sends `notifications/progress` (nothing when the client asked for no progress). */
  progress(progress, total, message) {
    this.#native.progress(Number(progress), total == null ? undefined : Number(total), message == null ? undefined : String(message))
  }

  /** Sends a log message (`level` e.g. `"info"`) when the request asked for logs at that level. */
  log(level, data, logger) {
    sync(() => this.#native.log(String(level), JSON.stringify(data ?? null), logger == null ? undefined : String(logger)))
  }

  /** Whether a log message at `level` would be sent. */
  logEnabled(level) {
    return sync(() => this.#native.logEnabled(String(level)))
  }

  /** Sends a request-scoped notification. */
  notify(method, params) {
    sync(() => this.#native.notify(String(method), params == null ? undefined : JSON.stringify(params)))
  }

  /**
   * Ends this request's SSE response stream now and asks the client to reconnect after
   * `retryMs` milliseconds (SEP-1699 polling: a long operation need not hold a connection
   * open). The handler goes on; what it sends afterwards, its result included, reaches the
   * client when it resumes with `Last-Event-ID`. Only legacy (2025-11-25) Streamable HTTP
   * sessions have resumable streams; elsewhere this does nothing.
   */
  closeStream(retryMs) {
    sync(() => this.#native.closeStream(Number(retryMs)))
  }

  #ask(kind, key, params) {
    let r
    try {
      r = this.#native.ask(kind, key == null ? undefined : String(key), params == null ? undefined : JSON.stringify(params))
    } catch (e) {
      return Promise.reject(rethrowable(e))
    }
    if (typeof r === 'string') {
      try {
        return Promise.resolve(openEnvelope(r))
      } catch (e) {
        return Promise.reject(e)
      }
    }
    return r.then(openEnvelope, rethrow)
  }

  /**
   * Asks the client for input through elicitation (`params` an `ElicitRequestParams`), under a
   * `key` unique within the request (null or undefined: `elicitation_1`, `elicitation_2`... in
   * the order of the asks, numbered by the core). Resolves with the `ElicitResult`, or rejects
   * with code `INPUT_REQUIRED`: let that propagate (the handler is run again, from the start,
   * with the answer). Asks made together (`Promise.all`) go in the same round.
   */
  elicit(key, params) {
    return this.#ask('elicitation', key, params)
  }

  /** Asks the client to sample an LLM (`params` a `CreateMessageRequestParams`). */
  sample(key, params) {
    return this.#ask('sampling', key, params)
  }

  /** Asks the client for its roots (key default: `roots_1`, `roots_2`...). */
  listRoots(key) {
    return this.#ask('roots', key, undefined)
  }

  /** The state this handler saved in an earlier round, if any. */
  get requestState() {
    const s = this.#native.requestState()
    return s == null ? undefined : JSON.parse(s)
  }

  /** Saves state (any JSON value) for the next round. */
  setRequestState(state) {
    sync(() => this.#native.setRequestState(JSON.stringify(state ?? null)))
  }

  /**
   * The id of the task this call runs as (the Tasks extension, a tool registered with
   * `taskSupport`), undefined for an ordinary call. In a task, asks become the task's input
   * requests (answered with `tasks/update`) and `progress` messages its status message.
   */
  get taskId() {
    return this.#native.taskId ?? undefined
  }

  /**
   * For a tool registered with `deferTask: true`: answers the call now with its task's handle
   * and goes on as that task (asks before this point were answered as in an ordinary call).
   * Resolves whether the call now runs as a task: false when the client did not declare the
   * extension (the call goes on as an ordinary one).
   */
  startTask() {
    return attempt(() => this.#native.startTask().catch(rethrow))
  }

  /** Whether the client cancelled the request. */
  get cancelled() {
    return this.#native.cancelled
  }

  /** An `AbortSignal` fired when the client cancels the request. */
  get signal() {
    if (this.#signal == null) {
      const controller = new AbortController()
      this.#signal = controller.signal
      if (this.#native.cancelled) {
        controller.abort(new McpError(ErrorKind.CANCELLED, 'the request was cancelled'))
      } else {
        this.#native.waitCancelled().then((cancelled) => {
          if (cancelled) controller.abort(new McpError(ErrorKind.CANCELLED, 'the request was cancelled'))
        }, () => {})
      }
    }
    return this.#signal
  }
}

function rethrowable(e) {
  try {
    rethrow(e)
  } catch (x) {
    return x
  }
  return e
}

/**
 * Wraps a user handler as the native side's `(callId, inputJson, traceJson) => void`, which ends
 * the run with `completeCall(callId, envelope)`: at once for a plain value, when it settles for a
 * promise. With a trace context (telemetry on), the handler runs in it as OpenTelemetry's active
 * context (when `@opentelemetry/api` is installed: lib/otel.js).
 */
function wrap(handler, call) {
  if (typeof handler !== 'function') throw usage('a handler must be a function')
  return (callId, inputJson, traceJson) => {
    let value
    try {
      const run = () => call(handler, JSON.parse(inputJson), new RequestContext(callId))
      value = traceJson == null ? run() : inTrace(traceJson, run)
    } catch (e) {
      native.completeCall(callId, errorEnvelope(e, ErrorKind.INTERNAL))
      return
    }
    if (value == null || typeof value.then !== 'function') {
      native.completeCall(callId, answer(value))
      return
    }
    Promise.resolve(value).then(
      (v) => native.completeCall(callId, answer(v)),
      (e) => native.completeCall(callId, errorEnvelope(e, ErrorKind.INTERNAL)),
    )
  }
}

/** A handler's value as the envelope the native side opens. */
function answer(value) {
  try {
    return okEnvelope(tagged(value))
  } catch (e) {
    return errorEnvelope(e, ErrorKind.INTERNAL)
  }
}

/**
 * Wraps a user middleware `async (req, next) => result` as the native side's
 * `(requestJson, next) => Promise<envelope>`: `next()` runs the rest of the chain (its error
 * is thrown as the request's `McpError`); what the middleware returns is the result.
 */
function wrapMiddleware(fn) {
  if (typeof fn !== 'function') throw usage(`a middleware must be a function, async (req, next) => result, not ${typeName(fn)}`)
  const what = `middleware ${fn.name || '(anonymous)'}`
  return async (requestJson, nativeNext) => {
    try {
      const req = Object.freeze(JSON.parse(requestJson))
      const next = async () => openEnvelope(await nativeNext.run())
      const result = await fn(req, next)
      if (result === null || typeof result !== 'object' || Array.isArray(result)) {
        throw new McpError(ErrorKind.INTERNAL, `Internal error: ${what} returned ${typeName(result)}; it must return the result that next() gave it (or a changed one), or throw`)
      }
      return okEnvelope(result)
    } catch (e) {
      return errorEnvelope(e, ErrorKind.INTERNAL)
    }
  }
}

/**
 * Wraps a user visibility predicate `(item, req) => boolean` (or a Promise of one) as the
 * native side's `(askedJson) => Promise<envelope>` answering one boolean per item.
 */
function wrapVisibility(fn) {
  if (typeof fn !== 'function') throw usage(`a visibility predicate must be a function, (item, req) => boolean, not ${typeName(fn)}`)
  return async (askedJson) => {
    try {
      const { request, items } = JSON.parse(askedJson)
      Object.freeze(request)
      const seen = []
      for (const item of items) seen.push(Boolean(await fn(Object.freeze(item), request)))
      return okEnvelope(seen)
    } catch (e) {
      return errorEnvelope(e, ErrorKind.INTERNAL)
    }
  }
}

/**
 * A handler's value in the tagged form the core reads (`Returned::from_tagged`): JSON as it is,
 * bytes (`Uint8Array`, `Buffer`) kept apart so that the core's shaping rule (one for every
 * binding) makes them an image, audio or blob. Nothing here decides what a result looks like.
 */
function tagged(v) {
  if (v instanceof Uint8Array) return { bytes: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') }
  if (!holdsBytes(v, 0)) return { json: v === undefined ? null : v }
  if (Array.isArray(v)) return { list: v.map(tagged) }
  const members = {}
  for (const [k, x] of Object.entries(v)) if (x !== undefined) members[k] = tagged(x)
  return { object: members }
}

function isPlain(v) {
  if (v === null || typeof v !== 'object') return false
  const proto = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}

/** Whether bytes sit in `v`, in arrays and plain objects (what JSON.stringify would descend into). */
function holdsBytes(v, depth) {
  if (v instanceof Uint8Array) return true
  if (depth > 64) return false
  if (Array.isArray(v)) return v.some((x) => holdsBytes(x, depth + 1))
  if (isPlain(v)) return Object.values(v).some((x) => holdsBytes(x, depth + 1))
  return false
}

function toolDefinition(d) {
  if (d == null || typeof d.name !== 'string') throw usage('a tool definition needs a name')
  return JSON.stringify({ inputSchema: { type: 'object' }, ...d })
}

function cacheJson(options) {
  return options && options.cache != null ? JSON.stringify(options.cache) : undefined
}

/** The resource options of `options` other than `cache`, as JSON (the core checks them). */
function resourceOptionsJson(options, what) {
  return optionsJson(options, what, ['cache'])
}

/** A running server: `close()` stops it; `closed` settles when it has stopped. */
class ServerHandle {
  /** @private */
  constructor(closed, close, url, port) {
    this.closed = closed
    this.#close = close
    if (url !== undefined) {
      this.url = url
      this.port = port
    }
  }

  #close

  /** Stops accepting, ends open streams, waits for requests in flight (bounded). */
  close() {
    return this.#close()
  }

  async [Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose')]() {
    await this.close()
  }
}

/** The key of `Server`'s accessor of its native server, for `Client.connectInMemory` (not exported). */
const NATIVE = Symbol('mcpaxle.nativeServer')

/**
 * An MCP server with JavaScript handlers. Register tools, resources and prompts at any time
 * (clients are told), then serve it with `serveHttp()` or `serveStdio()`.
 */
class Server {
  #native

  /** @private the native server of `server` (for `Client.connectInMemory`). */
  static [NATIVE](server) {
    if (!(server instanceof Server)) throw usage(`connectInMemory takes a Server, not ${server === null ? 'null' : typeof server}`)
    return server.#native
  }

  /**
   * `options`: `name`, `version`, and optionally `title`, `instructions`, `pageSize`,
   * `serverInfoInResults`, `enable` (capabilities advertised before anything is registered:
   * `'tools'`, `'resources'`, `'prompts'`, `'logging'`), `stateSecret`, `stateTtlMs`, `cache`
   * (default caching hints), `legacy` (`false`, or the legacy session options
   * `{enabled, maxSessions, maxSessionsPerPrincipal, maxSessionsPerPeer, idleTimeoutMs,
   * uninitializedTimeoutMs, requestTimeoutMs}`), `handlerTimeoutMs`, `maskErrorDetails` and
   * `bus` (the Redis notification bus of a fleet, `'redis://host:6379/0'` or `{url, channel}`):
   * the core's server options (see the README for units and defaults).
   *
   * A handler that throws something other than an `McpError` fails that call only; the
   * client sees the thrown error's message (a tool's as an `isError` result the model reads,
   * other requests' as an internal error, -32603), or with `maskErrorDetails: true` a generic
   * `Internal error in tool "name"` (and the like). A `ToolError` and the protocol errors
   * (`McpError` with e.g. `INVALID_PARAMS`) are sent as thrown either way.
   */
  constructor(options) {
    const o = options || {}
    if (typeof o.name !== 'string' || typeof o.version !== 'string') throw usage('a server needs a name and a version')
    const config = { name: o.name, version: o.version, optionsJson: optionsJson(o, 'the server options', ['name', 'version']) }
    this.#native = sync(() => new native.NativeServer(config))
  }

  /**
   * Appends a middleware, `async (req, next) => result`, around every request (the first
   * added runs outermost). `req` is `{id, method, name, params, headers, principal, scopes,
   * claims, era, sessionId}` (`name`: the tool's or prompt's name, the resource's URI; `era`:
   * `'modern'` or `'legacy'`); `await next()` runs the rest of the chain and the method and
   * returns the result the client would get (change it and return it), or throws the request's
   * `McpError`. Throw an `McpError` to reject the request with its code (over HTTP in the
   * 2026-07-28 era, the HTTP status of that code); any other error is an internal error, its
   * message masked as `maskErrorDetails` says. Every request of a method both eras share goes
   * through the chain, on every transport, once it is well-formed; the legacy handshake and
   * session methods (`initialize`, `ping`, `logging/setLevel`, `resources/subscribe`) do not.
   */
  use(middleware) {
    const m = wrapMiddleware(middleware)
    sync(() => this.#native.useMiddleware(m))
    return this
  }

  /**
   * Sets the visibility predicate, `(item, req) => boolean` (or a Promise of one); `null`
   * removes it. An item (`{kind, name, definition}`, `kind` one of `'tool'`, `'resource'`,
   * `'resourceTemplate'`, `'prompt'`) it answers false for is hidden from that request: left
   * out of the lists (pages are cut after filtering), and a call, read or get of it fails
   * exactly as for an unknown one. It is asked once per request about every item the request
   * lists or names; `req` is what a middleware gets.
   */
  visibility(predicate) {
    const v = predicate == null ? null : wrapVisibility(predicate)
    sync(() => this.#native.setVisibility(v))
    return this
  }

  /**
   * Adds or replaces a tool: `definition` is a `Tool` (`name`, `description`, `inputSchema`, …),
   * `handler` is `async (args, ctx) => CallToolResult | string`. A thrown `ToolError` (or any
   * plain `Error`) becomes an `isError` result the model reads; an `McpError` with a protocol
   * code (e.g. `INVALID_PARAMS`) becomes that JSON-RPC error. `options.timeoutMs` is the longest
   * one call may run (overriding the server's `handlerTimeoutMs`): the call then ends with an
   * `isError` result naming the tool and the limit, and `ctx.signal` aborts.
   * `options.taskSupport` (`'optional'` or `'required'`) lets a call run as a task of the Tasks
   * extension for a client that declares it: the call is answered with a task handle at once
   * and the handler runs on; its asks become the task's input requests, `ctx.progress`
   * messages its status message, and `tasks/cancel` aborts `ctx.signal`. `options.deferTask`
   * waits for `ctx.startTask()` instead. The server option `tasks` sets the TTL and limits.
   */
  tool(definition, handler, options) {
    const h = wrap(handler, (f, input, ctx) => f(input, ctx))
    sync(() => this.#native.addTool(toolDefinition(definition), optionsJson(options, 'the tool options'), h))
    return this
  }

  /** Removes a tool; whether it existed. */
  removeTool(name) {
    return this.#native.removeTool(String(name))
  }

  /**
   * Adds or replaces a resource: `definition` is a `Resource` (`uri`, `name`, …), `handler` is
   * `async (uri, ctx) => ReadResourceResult | string`; `options.cache` is `{ttlMs, cacheScope}`.
   */
  resource(definition, handler, options) {
    const h = wrap(handler, (f, input, ctx) => f(input.uri, ctx))
    if (options != null && Object.keys(options).some((k) => k !== 'cache')) throw usage(`the resource options are {cache}, not ${Object.keys(options).join(', ')}`)
    sync(() => this.#native.addResource(JSON.stringify(definition), cacheJson(options), h))
    return this
  }

  /** Removes a resource; whether it existed. */
  removeResource(uri) {
    return this.#native.removeResource(String(uri))
  }

  /**
   * Adds or replaces a resource template: `definition` is a `ResourceTemplate`
   * (`uriTemplate`, `name`, …), `handler` is `async (uri, variables, ctx) => ReadResourceResult`;
   * `options.cache` is `{ttlMs, cacheScope}`. Variables holding a `..` segment, an encoded
   * slash, a backslash, an absolute path or NUL are refused ("Resource not found") before the
   * handler runs; `options.allowPathTraversal: true` hands them over as matched.
   */
  resourceTemplate(definition, handler, options) {
    const h = wrap(handler, (f, input, ctx) => f(input.uri, input.variables, ctx))
    const templateOptions = resourceOptionsJson(options, 'the resource template options')
    sync(() => this.#native.addResourceTemplate(JSON.stringify(definition), cacheJson(options), h, templateOptions))
    return this
  }

  /** Removes a resource template; whether it existed. */
  removeResourceTemplate(uriTemplate) {
    return this.#native.removeResourceTemplate(String(uriTemplate))
  }

  /**
   * Adds or replaces a prompt: `definition` is a `Prompt` (`name`, `arguments`, …), `handler`
   * is `async (args, ctx) => GetPromptResult | string`.
   */
  prompt(definition, handler) {
    const h = wrap(handler, (f, input, ctx) => f(input, ctx))
    sync(() => this.#native.addPrompt(JSON.stringify(definition), h))
    return this
  }

  /** Removes a prompt; whether it existed. */
  removePrompt(name) {
    return this.#native.removePrompt(String(name))
  }

  /**
   * Completes the arguments of a prompt (`ref` `{type: 'ref/prompt', name}`) or a resource
   * template (`{type: 'ref/resource', uri}`): `handler` is
   * `async ({argument, value, context}, ctx) => string[] | CompleteResult`.
   */
  completion(ref, handler) {
    const [kind, name] = completionRef(ref)
    const h = wrap(handler, (f, input, ctx) => f(input, ctx))
    sync(() => this.#native.setCompletion(kind, name, h))
    return this
  }

  /** Removes a completion handler; whether it existed. */
  removeCompletion(ref) {
    const [kind, name] = completionRef(ref)
    return sync(() => this.#native.removeCompletion(kind, name))
  }

  /** Announces that a resource changed (`notifications/resources/updated` to subscribers). */
  notifyResourceUpdated(uri) {
    this.#native.notifyResourceUpdated(String(uri))
  }

  /**
   * Announces that a list changed (`notifications/<list>/list_changed` to listeners): "tools",
   * "prompts" or "resources". Adding and removing announce themselves; call this when a list
   * changes behind the server's back, e.g. the resources a template serves.
   */
  notifyListChanged(list) {
    sync(() => this.#native.notifyListChanged(String(list)))
  }

  /**
   * Serves over Streamable HTTP (`host` default `127.0.0.1`, `port` default 0: a free port).
   * Resolves once listening, with a handle (`url`, `port`, `close()`, `closed`). A running
   * server keeps the process alive until closed.
   *
   * `auth` protects the endpoint with OAuth bearer tokens: `{resource, authorizationServers,
   * verify, requiredScopes?, scopesSupported?, toolScopes?}`, where `verify` is
   * `async (token) => ({subject, scopes}) | null`. The server publishes its protected resource
   * metadata (RFC 9728) at `/.well-known/oauth-protected-resource<path>`, answers a missing or
   * rejected token with `401` and a `WWW-Authenticate` challenge, a token without the required
   * scopes (or without the tool's `toolScopes`) with `403 insufficient_scope`, and a `verify`
   * that throws or answers another shape with `503` (reported on `console.error`). The token's
   * subject is the handlers' `ctx.principal`.
   *
   * `connections` bounds the connections (every field optional; the defaults need no tuning):
   * `{maxConnections, headerReadTimeoutMs, bodyReadTimeoutMs, idleTimeoutMs,
   * http2KeepAliveIntervalMs, http2KeepAliveTimeoutMs, maxHeaderBytes,
   * http2MaxConcurrentStreams, maxBodyBytesInFlight}`. Bad limits reject with code `USAGE`.
   *
   * `cors` lets browser pages of other origins call the endpoint: `{allowedOrigins,
   * allowedHeaders?, exposedHeaders?, maxAgeMs?}` (a listed origin is also accepted by the
   * Origin check). `healthPath` (e.g. `'/healthz'`) is a route answered `200 {"status":"ok"}`
   * to GET without auth and whatever the Host.
   *
   * `metricsPath` (e.g. `'/metrics'`) is a route answering the process's metrics in Prometheus's
   * text format to GET, without auth and whatever the Host (scrapers come by IP address), when
   * telemetry is on with `prometheus: true` (`telemetry.configure`); `503` otherwise.
   *
   * The other options: `host` (default `'127.0.0.1'`), `port` (default 0: any free port),
   * `path` (default `'/mcp'`), `maxBody` (bytes), `allowedHosts`, `allowedOrigins`,
   * `keepAliveMs`, `drainTimeoutMs` (the core's HTTP options).
   */
  async serveHttp(options = {}) {
    const o = options ?? {}
    const config = httpConfig(o, ['host', 'port'])
    const host = o.host ?? '127.0.0.1'
    const n = await sync(() => this.#native.serveHttp(String(host), Number(o.port ?? 0), config)).catch(rethrow)
    const closed = n.wait().catch(rethrow)
    return new ServerHandle(closed, () => n.close().catch(rethrow), n.url, n.port)
  }

  /**
   * The endpoint as a `node:http` request listener `(req, res)`, to mount in the application's
   * own server: `app.use('/mcp', server.nodeHandler())` (Express), `http.createServer(handler)`,
   * any framework's raw `req` and `res` (Fastify's `req.raw`, `reply.raw`). It serves whatever
   * path it is routed; a response is streamed (SSE) as the core yields it, and a client that goes away
   * cancels its request. The options are `serveHttp`'s without `host`, `port` and
   * `connections` (the application's server owns its connections); `path` is the endpoint's
   * public path, used for the bearer auth metadata (`/.well-known/oauth-protected-resource<path>`,
   * answered if routed here too).
   *
   * The Host header is checked as by `serveHttp`: by default only the loopback names pass;
   * `allowedHosts` replaces them with the names the application is reached by. Mount it before
   * body parsers (`express.json()`) so the core reads the request as sent; a body already read
   * is taken from `req.body` (re-encoded as JSON if parsed). `handler.close()` ends the open
   * `subscriptions/listen` streams with their final response (call it at shutdown).
   */
  nodeHandler(options = {}) {
    return mount.nodeHandler(this.#mount(options))
  }

  /**
   * The endpoint as a fetch handler `(request, info?) => Promise<Response>` (Hono, Bun, Deno,
   * Cloudflare-style workers): `app.all('/mcp', (c) => handler(c.req.raw))` (Hono). The
   * response body is a `ReadableStream` yielding each chunk as the core does (SSE); aborting the
   * request's `signal` or cancelling the body cancels the request. `info.remoteAddress` (or
   * Deno's `info.remoteAddr.hostname`), if given, is the client's address. The options are
   * those of `nodeHandler`.
   */
  fetchHandler(options = {}) {
    return mount.fetchHandler(this.#mount(options))
  }

  #mount(options) {
    const config = httpConfig(options ?? {}, [])
    return sync(() => this.#native.mount(config))
  }

  /**
   * Serves on this process's stdin/stdout (write nothing else to stdout: log with
   * `console.error`). Returns a handle whose `closed` settles when stdin closes.
   * `options.maxOutboundQueue` (default 1024) bounds the messages waiting to be written: a
   * client that stops reading stdout is not read from until it reads again. The other options:
   * `maxMessageSize` (bytes, default 4 MiB) and `drainTimeoutMs` (default 5000).
   */
  serveStdio(options = {}) {
    const config = { optionsJson: optionsJson(options, 'the stdio options') }
    const token = new native.CancelToken()
    const closed = sync(() => this.#native.serveStdio(token, config)).catch(rethrow)
    return new ServerHandle(closed, () => {
      token.cancel()
      return closed
    })
  }
}

/** The native HTTP config of `serveHttp`'s (or a mount's) options, `omit`ted names left out. */
function httpConfig(o, omit) {
  const config = {}
  let data = o
  if (o.auth != null) {
    const { verify, ...auth } = authConfig(o.auth)
    config.verify = verify
    data = { ...o, auth }
  }
  config.optionsJson = optionsJson(data, 'the HTTP options', omit)
  return config
}

function completionRef(ref) {
  if (ref && ref.type === 'ref/prompt' && typeof ref.name === 'string') return ['prompt', ref.name]
  if (ref && ref.type === 'ref/resource' && typeof ref.uri === 'string') return ['resource', ref.uri]
  throw usage("a completion ref is {type: 'ref/prompt', name} or {type: 'ref/resource', uri}")
}

module.exports = { Server, RequestContext, ServerHandle, NATIVE }

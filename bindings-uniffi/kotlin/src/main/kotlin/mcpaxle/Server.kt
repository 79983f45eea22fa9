// A server for JVM services over the core's (package mcpaxle.ffi): definitions and options as
// JsonObjects read by the core, handlers as suspend lambdas whose value the core shapes into the
// result (the one rule of every binding: a String is a text block, an object with `content` is
// the CallToolResult itself, a ByteArray an image/audio block or a blob, ...).
package mcpaxle

import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonObject
import mcpaxle.ffi.BearerVerifier
import mcpaxle.ffi.McpHttpServer
import mcpaxle.ffi.McpRequestContext
import mcpaxle.ffi.McpServer
import mcpaxle.ffi.ServerHandler
import java.util.Base64

/**
 * The context of one request a handler runs for: who asked and how ([info]), progress and log
 * notifications to the caller, cancellation, and input asked of the client (elicitation,
 * sampling, roots: MRTR in the stateless era, a request to the client in a legacy session).
 */
class RequestContext internal constructor(private val native: McpRequestContext) {
    /**
     * `method`, `requestId`, `protocolVersion`, `clientCapabilities`, `clientInfo`, `principal`,
     * `progressToken`, `meta`, `headers` (lowercase names; `{}` on stdio), `claims`, `scopes`,
     * `taskId`, `trace`.
     */
    val info: JsonObject by lazy { parseObject(native.infoJson()) }

    /** Whether the request was cancelled (by the client, or the server shutting down). */
    val isCancelled: Boolean get() = native.isCancelled()

    /** Sends `notifications/progress` (nothing when the client asked for no progress). */
    fun progress(progress: Double, total: Double? = null, message: String? = null) = native.progress(progress, total, message)

    /** Sends `notifications/message` at [level] (`"info"`, `"warning"`, ...) when the request asked for logs at that level. */
    fun log(level: String, data: Any?, logger: String? = null) = call { native.log(level, toJson(data).toString(), logger) }

    /**
     * Asks the client to fill in a form (`elicitation/create` params): its `ElicitResult`. In the
     * stateless era the first run throws [McpError] of kind `input_required`: let it propagate,
     * and the handler runs again with the answer. [key] names the ask across rounds (default:
     * the next automatic key).
     */
    suspend fun elicit(params: JsonObject, key: String? = null): JsonObject = ask("elicitation", key, params)

    /** Asks the client's model (`sampling/createMessage` params): its `CreateMessageResult`. As [elicit]. */
    suspend fun sample(params: JsonObject, key: String? = null): JsonObject = ask("sampling", key, params)

    /** Asks for the client's roots: its `ListRootsResult`. As [elicit]. */
    suspend fun listRoots(key: String? = null): JsonObject = ask("roots", key, null)

    private suspend fun ask(kind: String, key: String?, params: JsonObject?): JsonObject =
        parseObject(call { native.ask(kind, key, params?.toString()) })

    /** State saved by an earlier round of this request (MRTR), or null; set it before asking. */
    var requestState: JsonElement?
        get() = native.requestState()?.let(Json::parseToJsonElement)
        set(value) = call { native.setRequestState((value ?: JsonNull).toString()) }
}

/** A handler's value in the core's tagged form: JSON, with bytes kept apart. */
internal fun tagged(value: Any?): JsonElement = when (value) {
    is JsonElement -> obj("json" to value)
    is ByteArray -> obj("bytes" to Base64.getEncoder().encodeToString(value))
    is List<*> -> obj("list" to JsonArray(value.map(::tagged)))
    is Map<*, *> -> obj("object" to JsonObject(value.entries.associate { (k, v) -> k.toString() to tagged(v) }))
    else -> obj("json" to toJson(value))
}

private fun verifier(f: suspend (token: String) -> JsonObject?) = object : BearerVerifier {
    override suspend fun verify(token: String): String = callback { f(token)?.toString() ?: "null" }
}

private fun handler(f: suspend (input: JsonObject, ctx: RequestContext) -> Any?) = object : ServerHandler {
    override suspend fun run(inputJson: String, ctx: McpRequestContext): String =
        callback { tagged(f(parseObject(inputJson), RequestContext(ctx))).toString() }
}

/**
 * An MCP server with Kotlin handlers, both eras on one endpoint, over Streamable HTTP or stdio.
 *
 * ```kotlin
 * val server = Server("demo", "1.0.0")
 * server.tool("add", "Adds two numbers", obj("type" to "object")) { args, _ ->
 *     (args["a"]!!.jsonPrimitive.double + args["b"]!!.jsonPrimitive.double).toString()
 * }
 * val http = server.serveHttp("127.0.0.1:3000")
 * http.join()
 * ```
 *
 * [options] are the core's `ServerOptions` (`title`, `instructions`, `pageSize`, `legacy`,
 * `handlerTimeoutMs`, `maskErrorDetails`, ...). A handler that throws [McpError] fails the
 * request with its kind (`"tool"`: a result with `isError`); any other exception is an internal
 * error. Handlers run as coroutines the Rust runtime awaits: a cancelled request cancels them.
 */
class Server(name: String, version: String, options: JsonObject? = null) {
    val native: McpServer = call { McpServer(name, version, options?.toString()) }

    /** Adds or replaces a tool: [definition] a `Tool`, [options] the core's `ToolOptions` (`timeoutMs`, `taskSupport`, ...). */
    fun tool(definition: JsonObject, options: JsonObject? = null, handler: suspend (arguments: JsonObject, ctx: RequestContext) -> Any?) =
        call { native.addTool(definition.toString(), options?.toString(), handler(handler)) }

    /** Adds or replaces a tool named [name]. */
    fun tool(
        name: String,
        description: String,
        inputSchema: JsonObject = obj("type" to "object"),
        handler: suspend (arguments: JsonObject, ctx: RequestContext) -> Any?,
    ) = tool(obj("name" to name, "description" to description, "inputSchema" to inputSchema), null, handler)

    /** Removes a tool; whether it existed. */
    fun removeTool(name: String): Boolean = native.removeTool(name)

    /** Adds or replaces a resource: [definition] a `Resource`, [cache] `{ttlMs, cacheScope}` for its reads. */
    fun resource(definition: JsonObject, cache: JsonObject? = null, handler: suspend (uri: String, ctx: RequestContext) -> Any?) =
        call { native.addResource(definition.toString(), cache?.toString(), handler { input, ctx -> handler(input.string("uri")!!, ctx) }) }

    /** Removes a resource; whether it existed. */
    fun removeResource(uri: String): Boolean = native.removeResource(uri)

    /**
     * Adds or replaces a resource template: [definition] a `ResourceTemplate`; the handler gets
     * the URI read and the template's variables. [options] the core's `TemplateOptions`.
     */
    fun resourceTemplate(
        definition: JsonObject,
        cache: JsonObject? = null,
        options: JsonObject? = null,
        handler: suspend (uri: String, variables: JsonObject, ctx: RequestContext) -> Any?,
    ) = call {
        native.addResourceTemplate(definition.toString(), cache?.toString(), options?.toString(), handler { input, ctx ->
            handler(input.string("uri")!!, input["variables"]?.jsonObject ?: JsonObject(emptyMap()), ctx)
        })
    }

    /** Removes a resource template by its URI template; whether it existed. */
    fun removeResourceTemplate(uriTemplate: String): Boolean = native.removeResourceTemplate(uriTemplate)

    /** Adds or replaces a prompt: [definition] a `Prompt`; the handler gets its arguments. */
    fun prompt(definition: JsonObject, handler: suspend (arguments: JsonObject, ctx: RequestContext) -> Any?) =
        call { native.addPrompt(definition.toString(), handler(handler)) }

    /** Removes a prompt; whether it existed. */
    fun removePrompt(name: String): Boolean = native.removePrompt(name)

    /**
     * Completes the arguments of the prompt (`kind` `"prompt"`) or resource template
     * (`"resource"`) [name]: the handler gets `{"argument", "value", "context"}` and returns the
     * values (a list of strings, or a `completion` object).
     */
    fun completion(kind: String, name: String, handler: suspend (request: JsonObject, ctx: RequestContext) -> Any?) =
        call { native.setCompletion(kind, name, handler(handler)) }

    /** Announces that a resource changed (`notifications/resources/updated` to subscribers). */
    fun notifyResourceUpdated(uri: String) = native.notifyResourceUpdated(uri)

    /** Announces that a list (`"tools"`, `"prompts"`, `"resources"`) changed. */
    fun notifyListChanged(list: String) = call { native.notifyListChanged(list) }

    /**
     * Serves over Streamable HTTP on [address] (`host:port`; port 0: any free port); [options]
     * the core's `HttpOptions` (`path`, `allowedHosts`, `cors`, `auth`, ...). With `auth`
     * (`resource`, `authorizationServers`, `requiredScopes`, ...), [verify] checks each bearer
     * token: what it grants (`{"subject", "scopes", "claims"?}`) or null for an invalid token (the
     * request gets 401); or `auth`'s built-in `jwt` / `introspection` verifiers check them.
     */
    suspend fun serveHttp(
        address: String = "127.0.0.1:0",
        options: JsonObject? = null,
        verify: (suspend (token: String) -> JsonObject?)? = null,
    ): HttpServer = HttpServer(call { native.serveHttp(address, options?.toString(), verify?.let(::verifier)) })

    /** Serves on this process's stdin and stdout until stdin closes; [options] the core's `StdioOptions`. */
    suspend fun serveStdio(options: JsonObject? = null) = call { native.serveStdio(options?.toString()) }
}

/** A running Streamable HTTP server. */
class HttpServer internal constructor(private val native: McpHttpServer) {
    /** The MCP endpoint's URL. */
    val url: String get() = native.url()

    /** The port listened on. */
    val port: Int get() = native.port().toInt()

    /** Stops accepting, ends listen streams, drains requests in flight; returns when done. */
    suspend fun close() = native.shutdown()

    /** Returns when the server has stopped. */
    suspend fun join() = native.wait()
}

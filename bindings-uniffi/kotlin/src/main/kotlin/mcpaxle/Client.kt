// The idiomatic layer over the generated bindings (package mcpaxle.ffi): JSON in and out as
// kotlinx.serialization's JsonObject, handlers as suspend lambdas, lists and subscriptions as
// Flows. It converts only; every option is read, and every rule applied, by the Rust core.
package mcpaxle

import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.channels.BufferOverflow
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.buffer
import kotlinx.coroutines.flow.channelFlow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.withContext
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import mcpaxle.ffi.Authorizer
import mcpaxle.ffi.CallConfig
import mcpaxle.ffi.ClientConfig
import mcpaxle.ffi.InputHandler
import mcpaxle.ffi.ListKind
import mcpaxle.ffi.McpClient
import mcpaxle.ffi.McpException
import mcpaxle.ffi.McpSubscription
import mcpaxle.ffi.NotificationListener
import mcpaxle.ffi.TokenStore as NativeTokenStore

/**
 * The error of every failed call: [kind] is the core's error kind name (`"invalid_params"`,
 * `"timeout"`, `"cancelled"`, ...: `mcpaxle.ffi.errorKinds()` lists them), [code] the JSON-RPC
 * code, [data] the error's data. A handler may throw one to fail the server's request with it.
 */
class McpError(val kind: String, val code: Int, override val message: String, val data: JsonElement? = null) :
    Exception("$kind ($code): $message") {
    internal fun native() = McpException.Mcp(kind, code, message, data?.toString())
}

/** The generated exception as an [McpError]. */
internal fun McpException.lift(): McpError = when (this) {
    is McpException.Mcp -> McpError(kind, code, reason, dataJson?.let(Json::parseToJsonElement))
}

/** Runs a call of the generated API, its exception as an [McpError]. */
internal inline fun <T> call(block: () -> T): T = try {
    block()
} catch (e: McpException) {
    throw e.lift()
}

/** Runs an application's callback, an [McpError] it throws as the generated exception. */
internal inline fun <T> callback(block: () -> T): T = try {
    block()
} catch (e: McpError) {
    throw e.native()
}

/** Answers a server's input request (its params) with the result object. */
typealias InputAnswer = suspend (params: JsonObject) -> JsonObject

/**
 * The callbacks of a client. Input handlers answer the server's asks (MRTR, or a legacy
 * server's own requests): a client declares the capabilities of those it has. [onLog] gets log
 * messages not tied to a call; [authorize] is OAuth's user-agent step (with the `oauth`
 * option): open the authorization URL, return the URL the authorization server redirected to.
 * [tokenStore] keeps the OAuth tokens (with the `oauth` option) where the app wants them.
 * Callbacks run on the Rust runtime's threads: [onLog] should return quickly.
 */
class Handlers(
    val onElicitation: InputAnswer? = null,
    val onSampling: InputAnswer? = null,
    val onRoots: InputAnswer? = null,
    val onLog: ((JsonObject) -> Unit)? = null,
    val authorize: (suspend (authorizationUrl: String) -> String)? = null,
    val tokenStore: TokenStore? = null,
)

/**
 * Where a client keeps its OAuth tokens between requests and runs (the Android Keystore, the
 * JVM's KeyStore, a database): [key] is `{issuer, resource, client}`, a token `{accessToken,
 * expiresAt, refreshToken, scopes, registration}` (the core's `StoredToken`). The client loads
 * when it first needs a token for a key, saves after every token response and clears when
 * nothing is left to keep. Throwing fails the request that needed the token.
 */
interface TokenStore {
    /** The token stored for [key], or null. */
    suspend fun load(key: JsonObject): JsonObject?

    /** Replaces the token of [key]. */
    suspend fun save(key: JsonObject, token: JsonObject)

    /** Forgets [key]. */
    suspend fun clear(key: JsonObject)
}

private fun TokenStore.native() = object : NativeTokenStore {
    override suspend fun call(requestJson: String): String = callback {
        val request = parseObject(requestJson)
        val key = request["key"]!!.jsonObject
        when (val op = request.string("op")) {
            "load" -> load(key)?.toString() ?: "null"
            "save" -> { save(key, request["token"]!!.jsonObject); "null" }
            "clear" -> { clear(key); "null" }
            else -> throw McpError("usage", -32603, "unknown token store operation $op")
        }
    }
}

/** Options of one call: [options] the core's `CallOptions` (`timeoutMs`, `meta`, `logLevel`, `bypassCache`). */
class CallOptions(
    val options: JsonObject? = null,
    val onProgress: ((JsonObject) -> Unit)? = null,
    val onLog: ((JsonObject) -> Unit)? = null,
) {
    internal fun native() = CallConfig(
        options?.toString(),
        onProgress?.let(::listener),
        onLog?.let(::listener),
    )
}

private fun listener(f: (JsonObject) -> Unit) = object : NotificationListener {
    override fun receive(json: String) = f(parseObject(json))
}

internal fun parseObject(text: String): JsonObject = Json.parseToJsonElement(text).jsonObject

private fun parseArray(text: String): List<JsonObject> = Json.parseToJsonElement(text).jsonArray.map { it.jsonObject }

private fun config(options: JsonObject, handlers: Handlers): ClientConfig {
    val answers = listOfNotNull(
        handlers.onElicitation?.let { "elicitation" to it },
        handlers.onSampling?.let { "sampling" to it },
        handlers.onRoots?.let { "roots" to it },
    ).toMap()
    val input = if (answers.isEmpty()) null else object : InputHandler {
        override suspend fun answer(kind: String, paramsJson: String): String =
            callback { answers.getValue(kind)(parseObject(paramsJson)).toString() }
    }
    val authorize = handlers.authorize?.let { f ->
        object : Authorizer {
            override suspend fun authorize(authorizationUrl: String): String = callback { f(authorizationUrl) }
        }
    }
    return ClientConfig(
        options.toString(), answers.keys.toList(), input, handlers.onLog?.let(::listener), authorize, handlers.tokenStore?.native(),
    )
}

/**
 * An MCP client connected to one server, modern (2026-07-28) or legacy (2025-11-25 and
 * earlier), over Streamable HTTP or stdio: the era is found at connect time.
 *
 * ```kotlin
 * val client = Client.connectHttp("http://127.0.0.1:3000/mcp", buildJsonObject {
 *     put("clientInfo", buildJsonObject { put("name", "my-app"); put("version", "1.0.0") })
 * })
 * client.listAllTools().forEach { println(it["name"]) }
 * println(client.callTool("add_numbers", buildJsonObject { put("a", 5); put("b", 3) }))
 * client.close()
 * ```
 *
 * Every call is a `suspend fun`; cancelling the coroutine cancels the request. Failures throw
 * [McpError].
 */
class Client private constructor(val native: McpClient) {
    companion object {
        /** Connects to a Streamable HTTP endpoint; [options] are the core's `ClientOptions`. */
        suspend fun connectHttp(url: String, options: JsonObject = JsonObject(emptyMap()), handlers: Handlers = Handlers()) =
            Client(call { mcpaxle.ffi.connectHttp(url, config(options, handlers)) })

        /** Spawns [command] and connects to it over stdio. */
        suspend fun connectStdio(
            command: String,
            args: List<String> = emptyList(),
            options: JsonObject = JsonObject(emptyMap()),
            handlers: Handlers = Handlers(),
        ) = Client(call { mcpaxle.ffi.connectStdio(command, args, config(options, handlers)) })

        /** The protocol revisions the client speaks, most preferred first. */
        val supportedVersions: List<String> get() = mcpaxle.ffi.supportedVersions()
    }

    /** `modern` or `legacy`. */
    val era: String get() = native.era()

    /** The protocol revision in use. */
    val protocolVersion: String get() = native.protocolVersion()

    /** `era`, `protocolVersion`, `serverInfo`, `capabilities`, `instructions`, `pid`, `sessionId`. */
    val info: JsonObject get() = parseObject(native.info())

    /** `server/discover` (from `initialize` in a legacy session). */
    suspend fun discover(): JsonObject = parseObject(call { native.discover() })

    /** One page of a list: the `*ListResult`, with `nextCursor` when there is more. */
    suspend fun list(kind: ListKind, cursor: String? = null): JsonObject = parseObject(call { native.list(kind, cursor) })

    /** Every item of a list, page after page as the flow is collected. */
    fun pages(kind: ListKind): Flow<JsonObject> = flow {
        val field = when (kind) {
            ListKind.TOOLS -> "tools"
            ListKind.RESOURCES -> "resources"
            ListKind.RESOURCE_TEMPLATES -> "resourceTemplates"
            ListKind.PROMPTS -> "prompts"
        }
        var cursor: String? = null
        do {
            val page = list(kind, cursor)
            page[field]?.jsonArray?.forEach { emit(it.jsonObject) }
            cursor = (page["nextCursor"] as? JsonPrimitive)?.content
        } while (cursor != null)
    }

    suspend fun listAllTools(): List<JsonObject> = parseArray(call { native.listAll(ListKind.TOOLS) })
    suspend fun listAllResources(): List<JsonObject> = parseArray(call { native.listAll(ListKind.RESOURCES) })
    suspend fun listAllResourceTemplates(): List<JsonObject> = parseArray(call { native.listAll(ListKind.RESOURCE_TEMPLATES) })
    suspend fun listAllPrompts(): List<JsonObject> = parseArray(call { native.listAll(ListKind.PROMPTS) })

    /** `tools/call`: the `CallToolResult` (a tool's own failure has `isError`, it does not throw). */
    suspend fun callTool(name: String, arguments: JsonObject = JsonObject(emptyMap()), options: CallOptions? = null): JsonObject =
        parseObject(call { native.callTool(name, arguments.toString(), options?.native()) })

    /**
     * `tools/call` as a flow: the call's progress and log notifications as they come, then its
     * result, last. The call starts when the flow is collected; cancelling the collector cancels
     * it. [options] as [CallOptions.options]. A collector slower than the server sees the latest 64
     * events, older ones dropped (never the result: it comes last).
     */
    fun callToolEvents(name: String, arguments: JsonObject = JsonObject(emptyMap()), options: JsonObject? = null): Flow<CallEvent> =
        channelFlow {
            val result = callTool(name, arguments, CallOptions(
                options,
                onProgress = { trySend(CallEvent.Progress(it)) },
                onLog = { trySend(CallEvent.Log(it)) },
            ))
            send(CallEvent.Result(result))
        }.buffer(64, BufferOverflow.DROP_OLDEST)

    /** `resources/read`. */
    suspend fun readResource(uri: String, options: CallOptions? = null): JsonObject =
        parseObject(call { native.readResource(uri, options?.native()) })

    /** `prompts/get`. */
    suspend fun getPrompt(name: String, arguments: Map<String, String> = emptyMap(), options: CallOptions? = null): JsonObject =
        parseObject(call { native.getPrompt(name, arguments, options?.native()) })

    /** `completion/complete` for [argument] (`{"name", "value"}`) of [ref] (`ref/prompt` or `ref/resource`). */
    suspend fun complete(ref: JsonObject, argument: JsonObject, context: JsonObject? = null): JsonObject =
        parseObject(call { native.complete(ref.toString(), argument.toString(), context?.toString()) })

    /** Any request, through the core's whole pipeline. */
    suspend fun request(method: String, params: JsonObject? = null, options: CallOptions? = null): JsonElement =
        Json.parseToJsonElement(call { native.request(method, params?.toString(), options?.native()) })

    /**
     * The change notifications [filter] (a `SubscriptionFilter`) asks for, as `{"method",
     * "params"}` objects: the subscription opens when the flow is collected and closes when
     * the collector stops (or the server ends it).
     */
    fun subscribe(filter: JsonObject): Flow<JsonObject> = flow {
        val sub: McpSubscription = call { native.subscribe(filter.toString()) }
        try {
            while (true) emit(parseObject(call { sub.next() } ?: break))
        } finally {
            try {
                // The collector may have been cancelled: unsubscribe all the same.
                withContext(NonCancellable) { sub.unsubscribe() }
            } finally {
                sub.destroy()
            }
        }
    }

    /** Sets (or, with null, removes) an HTTP header sent with every later request. */
    fun setHeader(name: String, value: String?) = call { native.setHeader(name, value) }

    /** Forgets every cached result. */
    fun clearCache() = native.clearCache()

    /** Closes the connection: pending calls fail, a stdio server is shut down. */
    suspend fun close() {
        try {
            call { native.disconnect() }
        } finally {
            native.destroy()
        }
    }
}

/** What [Client.callToolEvents] emits: notifications of the call, then its result. */
sealed interface CallEvent {
    /** A `notifications/progress`'s params (`progress`, `total`, `message`). */
    data class Progress(val params: JsonObject) : CallEvent

    /** A `notifications/message`'s params (`level`, `logger`, `data`) sent for the call. */
    data class Log(val params: JsonObject) : CallEvent

    /** The `CallToolResult`, the flow's last element. */
    data class Result(val result: JsonObject) : CallEvent
}

/** [JsonObject]s from pairs, for arguments and options: `obj("a" to 5, "b" to 3)`. */
fun obj(vararg pairs: Pair<String, Any?>): JsonObject = buildJsonObject {
    for ((k, v) in pairs) put(k, toJson(v))
}

/** A Kotlin value (null, Boolean, Number, String, Map, List, JsonElement) as JSON. */
fun toJson(v: Any?): JsonElement = when (v) {
    null -> kotlinx.serialization.json.JsonNull
    is JsonElement -> v
    is Boolean -> JsonPrimitive(v)
    is Number -> JsonPrimitive(v)
    is String -> JsonPrimitive(v)
    is Map<*, *> -> JsonObject(v.entries.associate { (k, x) -> k.toString() to toJson(x) })
    is List<*> -> JsonArray(v.map(::toJson))
    else -> throw IllegalArgumentException("not a JSON value: ${v::class}")
}

/** The string member [key] (`tool.string("name")`), or null when it is absent or not a string. */
fun JsonObject.string(key: String): String? = (this[key] as? JsonPrimitive)?.takeIf { it.isString }?.content

/** The text of a `CallToolResult`'s text blocks, joined. */
fun JsonObject.text(): String =
    (this["content"]?.jsonArray ?: JsonArray(emptyList())).mapNotNull { (it as? JsonObject)?.get("text")?.jsonPrimitive?.content }.joinToString("")

// The "everything" client: what the official MCP conformance suite's client scenarios ask of a
// client, in one program (the Kotlin twin of core/examples/everything_client.rs and
// bindings-node/examples/everything_client.mjs).
//
//   MCP_CONFORMANCE_SCENARIO=tools_call MCP_CONFORMANCE_PROTOCOL_VERSION=2026-07-28 \
//       bindings-uniffi/kotlin/everything_client.sh http://localhost:3000/mcp
//
// The server URL is the last argument. MCP_CONFORMANCE_PROTOCOL_VERSION picks the wire;
// MCP_CONFORMANCE_CONTEXT carries a scenario's test data (toolCalls, pre-registered
// client_id/client_secret/issuer); with MCPAXLE_AUTO_ERA=1 the client detects the era itself.
//
// OAuth is on for every scenario (it only acts on a 401): the suite's authorization servers
// approve without a user, so the user-agent step (a Kotlin callback, to go through the
// callback path) fetches the authorization URL and answers with its redirect.
package mcpaxle.examples

import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import mcpaxle.Client
import mcpaxle.Handlers
import mcpaxle.McpError
import mcpaxle.obj
import mcpaxle.ffi.applySchemaDefaults
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import kotlin.system.exitProcess

/** Where the suite's authorization servers send the user-agent back (never listened on). */
const val REDIRECT_URI = "http://localhost:3000/callback"

/** The Client ID Metadata Document URL the suite expects (never fetched). */
const val CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"

private fun JsonObject.str(key: String): String? = (this[key] as? JsonPrimitive)?.takeIf { it.isString }?.content

/** A plausible value for a property of a JSON Schema, by its declared type. */
fun sampleValue(name: String, schema: JsonObject?): JsonElement {
    val s = schema ?: JsonObject(emptyMap())
    s["default"]?.let { return it }
    (s["enum"] as? JsonArray)?.firstOrNull()?.let { return it }
    val type = when (val t = s["type"]) {
        is JsonArray -> t.firstOrNull()?.jsonPrimitive?.content
        is JsonPrimitive -> t.content
        else -> null
    }
    return when (type) {
        "integer" -> JsonPrimitive(1)
        "number" -> JsonPrimitive(1.5)
        "boolean" -> JsonPrimitive(true)
        "object" -> JsonObject(emptyMap())
        "array" -> JsonArray(emptyList())
        "null" -> JsonNull
        else -> JsonPrimitive(if (name.contains("region")) "us-east1" else "test")
    }
}

/** Arguments for a tool: every required property, with a plausible value. */
fun sampleArguments(tool: JsonObject): JsonObject {
    val schema = tool["inputSchema"] as? JsonObject ?: JsonObject(emptyMap())
    val props = schema["properties"] as? JsonObject
    val required = (schema["required"] as? JsonArray)?.map { it.jsonPrimitive.content } ?: emptyList()
    return JsonObject(required.associateWith { sampleValue(it, props?.get(it) as? JsonObject) })
}

/** Accepts an elicitation, filling the fields the schema gives a default for (SEP-1034). */
fun elicit(params: JsonObject): JsonObject {
    if (params.str("mode") == "url") return obj("action" to "accept")
    val schema = params["requestedSchema"] as? JsonObject ?: JsonObject(emptyMap())
    val content = Json.parseToJsonElement(applySchemaDefaults(schema.toString(), null)).jsonObject.toMutableMap()
    val props = schema["properties"] as? JsonObject
    for (name in (schema["required"] as? JsonArray)?.map { it.jsonPrimitive.content } ?: emptyList()) {
        if (name !in content) content[name] = sampleValue(name, props?.get(name) as? JsonObject)
    }
    return obj("action" to "accept", "content" to JsonObject(content))
}

fun sample(): JsonObject = obj(
    "role" to "assistant",
    "content" to obj("type" to "text", "text" to "This is a sampled answer from the everything client."),
    "model" to "mcpaxle-everything-client",
    "stopReason" to "endTurn",
)

fun roots(): JsonObject = obj("roots" to listOf(obj("uri" to "file:///tmp/mcpaxle-conformance", "name" to "conformance")))

private val http: HttpClient = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build()

/** The user-agent step without a user: the authorization server's redirect is the answer. */
fun authorize(authorizationUrl: String): String {
    val response = http.send(HttpRequest.newBuilder(URI(authorizationUrl)).GET().build(), HttpResponse.BodyHandlers.discarding())
    val location = response.headers().firstValue("location").orElse(null)
    System.err.println("authorize: ${response.statusCode()} from ${authorizationUrl.substringBefore('?')}")
    if (response.statusCode() !in 300..399 || location == null) {
        throw McpError("internal", -32603, "the authorization server answered the authorization request with ${response.statusCode()} and no redirect")
    }
    return URI(authorizationUrl).resolve(location).toString()
}

fun oauth(scenario: String, context: JsonObject?): JsonObject {
    if (scenario.startsWith("auth/client-credentials")) {
        val o = mutableMapOf<String, Any?>("grantType" to "client_credentials", "clientId" to context?.str("client_id"))
        context?.str("client_secret")?.let { o["clientSecret"] = it }
        context?.str("private_key_pem")?.let { o["privateKeyPem"] = it }
        context?.str("signing_algorithm")?.let { o["signingAlgorithm"] = it }
        return obj(*o.toList().toTypedArray())
    }
    val o = mutableMapOf<String, Any?>("redirectUri" to REDIRECT_URI, "clientMetadataUrl" to CLIENT_METADATA_URL)
    context?.str("client_id")?.let { id ->
        o["clientId"] = id
        context.str("client_secret")?.let { o["clientSecret"] = it }
        context.str("issuer")?.let { o["issuer"] = it }
    }
    return obj(*o.toList().toTypedArray())
}

suspend fun callEach(client: Client, tools: List<JsonObject>) {
    for (tool in tools) {
        val r = client.callTool(tool.str("name")!!, sampleArguments(tool))
        System.err.println("called ${tool.str("name")}: isError=${r["isError"]}")
    }
}

fun find(tools: List<JsonObject>, name: String): JsonObject =
    tools.find { it.str("name") == name } ?: error("the server lists no tool $name")

suspend fun scenario(client: Client, name: String, tools: List<JsonObject>, context: JsonObject?) {
    when (name) {
        "initialize", "request-metadata", "json-schema-ref-no-deref" -> {}
        "tools_call" -> System.err.println("add_numbers: ${client.callTool("add_numbers", obj("a" to 5, "b" to 3))["content"]}")
        "sep-2322-client-request-state" -> coroutineScope {
            val names = listOf("test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type")
            val results = names.map { async { client.callTool(it) } }.awaitAll()
            names.zip(results).forEach { (n, r) -> System.err.println("$n: ${r["content"]}") }
        }
        "http-standard-headers" -> {
            callEach(client, tools)
            for (r in client.listAllResources()) client.readResource(r.str("uri")!!)
            for (p in client.listAllPrompts()) client.getPrompt(p.str("name")!!)
        }
        "http-custom-headers" -> {
            for (call in (context?.get("toolCalls") as? JsonArray) ?: JsonArray(emptyList())) {
                val c = call.jsonObject
                client.callTool(c.str("name")!!, c["arguments"] as? JsonObject ?: JsonObject(emptyMap()))
            }
        }
        "json-schema-2020-12-preservation" -> {
            val focal = find(tools, "json_schema_2020_12_tool")
            val r = client.callTool("json_schema_echo", obj("schema" to focal["inputSchema"]))
            System.err.println("json_schema_echo: ${r["content"]}")
        }
        "elicitation-sep1034-client-defaults" -> {
            find(tools, "test_client_elicitation_defaults")
            System.err.println("test_client_elicitation_defaults: ${client.callTool("test_client_elicitation_defaults")["content"]}")
        }
        "sse-retry" -> System.err.println("test_reconnection: ${client.callTool("test_reconnection")["content"]}")
        // http-invalid-tool-headers, and anything else: every listed tool (the invalid ones were
        // dropped by listAllTools).
        else -> callEach(client, tools)
    }
}

fun main(args: Array<String>) {
    if (args.isEmpty()) {
        System.err.println("usage: everything_client.sh SERVER_URL (with MCP_CONFORMANCE_SCENARIO set)")
        exitProcess(2)
    }
    val url = args.last()
    val name = System.getenv("MCP_CONFORMANCE_SCENARIO") ?: ""
    val version = System.getenv("MCP_CONFORMANCE_PROTOCOL_VERSION") ?: "2026-07-28"
    val context = runCatching { Json.parseToJsonElement(System.getenv("MCP_CONFORMANCE_CONTEXT") ?: "null") as? JsonObject }.getOrNull()
    System.err.println("EverythingClient.kt: scenario \"$name\", protocol $version, server $url")
    val versions = if (System.getenv("MCPAXLE_AUTO_ERA") != null) Client.supportedVersions else listOf(version)
    val options = obj(
        "clientInfo" to obj("name" to "mcpaxle-everything-client", "version" to "0.1.0"),
        "protocolVersions" to versions,
        "requestTimeoutMs" to 25_000,
        "oauth" to oauth(name, context),
    )
    val handlers = Handlers(
        onElicitation = { elicit(it) },
        onSampling = { sample() },
        onRoots = { roots() },
        authorize = if (name.startsWith("auth/client-credentials")) null else { u -> authorize(u) },
    )
    val code = runBlocking {
        try {
            val client = Client.connectHttp(url, options, handlers)
            try {
                System.err.println("connected: era ${client.era}, protocol version ${client.protocolVersion}")
                val tools = client.listAllTools()
                System.err.println("tools: ${tools.map { it.str("name") }}")
                scenario(client, name, tools, context)
                0
            } finally {
                client.close()
            }
        } catch (e: McpError) {
            System.err.println("EverythingClient.kt: ${e.kind}: ${e.message}")
            1
        }
    }
    exitProcess(code)
}

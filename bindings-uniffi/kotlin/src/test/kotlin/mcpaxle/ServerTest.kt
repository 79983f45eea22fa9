// The Kotlin server API, served over HTTP in this JVM and called by the Kotlin client in both eras.
package mcpaxle

import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.double
import kotlinx.serialization.json.int
import org.junit.AfterClass
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.BeforeClass
import org.junit.Test

class ServerTest {
    companion object {
        private val cancelled = CompletableDeferred<Boolean>()
        private val reads = java.util.concurrent.atomic.AtomicInteger()
        private lateinit var http: HttpServer

        private val png = byteArrayOf(0x89.toByte(), 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3)

        private fun build(): Server {
            val server = Server("kotlin-server", "1.0.0", obj("instructions" to "a test server"))
            server.tool("add", "Adds a and b", obj("type" to "object", "required" to listOf("a", "b"))) { args, _ ->
                (args["a"]!!.jsonPrimitive.double + args["b"]!!.jsonPrimitive.double).toString()
            }
            server.tool("structured", "Structured data") { _, _ -> mapOf("n" to 3, "ok" to true) }
            server.tool("image", "A PNG") { _, _ -> png }
            server.tool("refuse", "Fails as a tool") { _, _ -> throw McpError("tool", -32603, "no such thing") }
            server.tool("crash", "Throws") { _, _ -> throw IllegalStateException("boom") }
            server.tool("whoami", "Echoes the request's info") { _, ctx ->
                "${ctx.info.string("method")} ${(ctx.info["headers"] as JsonObject).string("x-test")}"
            }
            server.tool("count", "Reports progress and logs") { args, ctx ->
                val n = args["n"]!!.jsonPrimitive.int
                for (i in 1..n) ctx.progress(i.toDouble(), n.toDouble(), "step $i")
                ctx.log("info", mapOf("done" to n))
                "counted $n"
            }
            server.tool("ask", "Asks the user") { _, ctx ->
                val answer = ctx.elicit(obj(
                    "message" to "your name?",
                    "requestedSchema" to obj("type" to "object", "properties" to obj("name" to obj("type" to "string"))),
                ))
                "hello ${answer["content"]!!.jsonObject.string("name")} (${answer.string("action")})"
            }
            server.tool("wait", "Waits until cancelled") { _, _ ->
                try {
                    awaitCancellation()
                } catch (e: CancellationException) {
                    cancelled.complete(true)
                    throw e
                }
            }
            server.resource(obj("uri" to "mem://hello", "name" to "hello", "mimeType" to "text/plain")) { uri, _ -> "hello from $uri" }
            server.resource(obj("uri" to "mem://blob", "name" to "blob")) { _, _ -> byteArrayOf(0, 1, 2) }
            server.resource(obj("uri" to "mem://counted", "name" to "counted"), obj("ttlMs" to 60_000, "cacheScope" to "public")) { _, _ ->
                "read ${reads.incrementAndGet()}"
            }
            server.resourceTemplate(obj("uriTemplate" to "mem://users/{id}", "name" to "user")) { uri, vars, _ ->
                obj("id" to vars.string("id"), "uri" to uri)
            }
            server.prompt(obj("name" to "greet", "arguments" to listOf(obj("name" to "who", "required" to true)))) { args, _ ->
                "Say hello to ${args.string("who")}"
            }
            server.completion("prompt", "greet") { request, _ ->
                assertEquals("who", request.string("argument"))
                val prefix = request.string("value")!!
                listOf("ada", "alan", "grace").filter { it.startsWith(prefix) }
            }
            return server
        }

        @BeforeClass
        @JvmStatic
        fun start() = runBlocking {
            http = build().serveHttp("127.0.0.1:0")
        }

        @AfterClass
        @JvmStatic
        fun stop() = runBlocking {
            http.close()
        }
    }

    private fun options(version: String) = obj(
        "clientInfo" to obj("name" to "kotlin-server-tests", "version" to "0.1.0"),
        "protocolVersions" to listOf(version),
    )

    private suspend fun <T> withClient(version: String, handlers: Handlers = Handlers(), block: suspend (Client) -> T): T {
        val client = Client.connectHttp(http.url, options(version), handlers)
        try {
            return block(client)
        } finally {
            client.close()
        }
    }

    private val eras = listOf("2026-07-28", "2025-11-25")

    @Test
    fun toolsInBothEras() = runBlocking {
        for (version in eras) withClient(version) { client ->
            assertEquals(if (version == "2026-07-28") "modern" else "legacy", client.era)
            assertEquals(listOf("add", "ask", "count", "crash", "image", "refuse", "structured", "wait", "whoami"),
                client.listAllTools().map { it.string("name") }.sortedBy { it })
            assertEquals("5.0", client.callTool("add", obj("a" to 2, "b" to 3)).text())
            val s = client.callTool("structured")
            assertEquals(obj("n" to 3, "ok" to true), s["structuredContent"])
            val image = client.callTool("image")["content"]!!.jsonArray.single().jsonObject
            assertEquals("image", image.string("type"))
            assertEquals("image/png", image.string("mimeType"))
            val refused = client.callTool("refuse")
            assertEquals(true, refused["isError"]!!.jsonPrimitive.content.toBoolean())
            assertTrue(refused.text(), refused.text().contains("no such thing"))
            client.setHeader("x-test", "kotlin")
            assertEquals("tools/call kotlin", client.callTool("whoami").text())
        }
    }

    @Test
    fun anExceptionThatIsNoMcpErrorIsAnInternalError() = runBlocking {
        withClient("2026-07-28") { client ->
            try {
                val r = client.callTool("crash")
                // A tool's failure may come back as a result with isError; either way, it says so.
                assertEquals(true, r["isError"]!!.jsonPrimitive.content.toBoolean())
            } catch (e: McpError) {
                assertEquals("internal", e.kind)
            }
            // The server goes on serving.
            assertEquals("5.0", client.callTool("add", obj("a" to 2, "b" to 3)).text())
        }
    }

    @Test
    fun progressAndLogsReachTheCaller() = runBlocking<Unit> {
        withClient("2026-07-28") { client ->
            val events = client.callToolEvents("count", obj("n" to 3), obj("logLevel" to "info")).toList()
            val progress = events.filterIsInstance<CallEvent.Progress>()
            assertEquals(listOf("step 1", "step 2", "step 3"), progress.map { it.params.string("message") })
            val log = events.filterIsInstance<CallEvent.Log>().single()
            assertEquals(obj("done" to 3), log.params["data"])
            assertEquals("counted 3", (events.last() as CallEvent.Result).result.text())
        }
    }

    @Test
    fun elicitationInBothEras() = runBlocking {
        for (version in eras) {
            val handlers = Handlers(onElicitation = { params ->
                assertEquals("your name?", params.string("message"))
                obj("action" to "accept", "content" to obj("name" to "ada"))
            })
            withClient(version, handlers) { client ->
                assertEquals("hello ada (accept)", client.callTool("ask").text())
            }
        }
    }

    @Test
    fun resourcesPromptsAndCompletions() = runBlocking {
        for (version in eras) withClient(version) { client ->
            val text = client.readResource("mem://hello")["contents"]!!.jsonArray.single().jsonObject
            assertEquals("hello from mem://hello", text.string("text"))
            assertEquals(setOf("mem://hello", "mem://blob", "mem://counted"), client.listAllResources().map { it.string("uri") }.toSet())
            assertEquals("text/plain", text.string("mimeType"))
            val blob = client.readResource("mem://blob")["contents"]!!.jsonArray.single().jsonObject
            assertEquals("AAEC", blob.string("blob"))
            val user = client.readResource("mem://users/42")["contents"]!!.jsonArray.single().jsonObject
            assertEquals(obj("id" to "42", "uri" to "mem://users/42").toString(), user.string("text"))
            val prompt = client.getPrompt("greet", mapOf("who" to "grace"))
            val message = prompt["messages"]!!.jsonArray.single().jsonObject
            assertEquals("Say hello to grace", message["content"]!!.jsonObject.string("text"))
            val completion = client.complete(obj("type" to "ref/prompt", "name" to "greet"), obj("name" to "who", "value" to "a"))
            assertEquals(listOf("ada", "alan"), completion["completion"]!!.jsonObject["values"]!!.jsonArray.map { it.jsonPrimitive.content })
        }
    }

    @Test
    fun theClientCachesPerTtlMsAndCacheScope() = runBlocking {
        withClient("2026-07-28") { client ->
            suspend fun read(options: CallOptions? = null) =
                client.readResource("mem://counted", options)["contents"]!!.jsonArray.single().jsonObject.string("text")
            val first = read()
            assertEquals("kept for its ttlMs: the handler ran once", first, read())
            val fresh = read(CallOptions(obj("bypassCache" to true)))
            assertTrue("$first then $fresh", fresh != first)
            assertEquals("the fresh result is stored", fresh, read())
            client.clearCache()
            assertTrue(read() != fresh)
        }
    }

    @Test
    fun aCancelledRequestCancelsTheHandlersCoroutine() = runBlocking {
        withClient("2026-07-28") { client ->
            try {
                client.callTool("wait", options = CallOptions(obj("timeoutMs" to 300)))
                fail("the call must time out")
            } catch (e: McpError) {
                assertEquals("timeout", e.kind)
            }
            assertTrue(withTimeout(10_000) { cancelled.await() })
        }
    }

    @Test
    fun readmeServerQuickStartServes() = runBlocking {
        val port = java.net.ServerSocket(0).use { it.localPort }
        System.setProperty("mcpaxle.quickstartAddress", "127.0.0.1:$port")
        // It serves until the JVM ends (http.join()): a daemon thread.
        kotlin.concurrent.thread(isDaemon = true, name = "readme-server") { quickstartserver.main() }
        val deadline = System.currentTimeMillis() + 15_000
        var client: Client? = null
        while (client == null) {
            try {
                client = Client.connectHttp("http://127.0.0.1:$port/mcp", options("2026-07-28"))
            } catch (e: McpError) {
                if (System.currentTimeMillis() > deadline) throw e
                kotlinx.coroutines.delay(50)
            }
        }
        try {
            val events = client.callToolEvents("greet", obj("name" to "Ada")).toList()
            assertEquals("greeting", (events.first() as CallEvent.Progress).params.string("message"))
            assertEquals("Hello, Ada!", (events.last() as CallEvent.Result).result.text())
        } finally {
            client.close()
        }
    }

    @Test
    fun bearerAuthWithTheApplicationsVerifier() = runBlocking {
        val port = java.net.ServerSocket(0).use { it.localPort }
        val url = "http://127.0.0.1:$port/mcp"
        val server = Server("protected", "1.0.0")
        server.tool("whoami", "The caller") { _, ctx -> "${ctx.info.string("principal")} ${ctx.info["scopes"]}" }
        val auth = obj("resource" to url, "authorizationServers" to listOf("https://auth.example.com"), "requiredScopes" to listOf("notes:read"))
        val protected = server.serveHttp("127.0.0.1:$port", obj("auth" to auth)) { token ->
            if (token == "good") obj("subject" to "alice", "scopes" to listOf("notes:read")) else null
        }
        try {
            // No token, a bad token: 401 with where to get one.
            val http = java.net.http.HttpClient.newHttpClient()
            for (header in listOf(null, "Bearer bad")) {
                val request = java.net.http.HttpRequest.newBuilder(java.net.URI(url))
                    .header("content-type", "application/json").header("accept", "application/json, text/event-stream")
                    .apply { if (header != null) header("authorization", header) }
                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString("""{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}"""))
                    .build()
                val response = http.send(request, java.net.http.HttpResponse.BodyHandlers.ofString())
                assertEquals("$header", 401, response.statusCode())
                val challenge = response.headers().firstValue("www-authenticate").orElse("")
                assertTrue(challenge, challenge.startsWith("Bearer") && challenge.contains("resource_metadata="))
            }
            val client = Client.connectHttp(url, obj(
                "clientInfo" to obj("name" to "kotlin-auth-tests", "version" to "0.1.0"),
                "headers" to obj("authorization" to "Bearer good"),
            ))
            try {
                assertEquals("alice [\"notes:read\"]", client.callTool("whoami").text())
            } finally {
                client.close()
            }
        } finally {
            protected.close()
        }
        try {
            server.serveHttp("127.0.0.1:0", obj("auth" to auth))
            fail("auth without a verifier is refused")
        } catch (e: McpError) {
            assertEquals("usage", e.kind)
            assertTrue(e.message, e.message.contains("verify callback"))
        }
        try {
            server.serveHttp("127.0.0.1:0") { null }
            fail("a verifier without auth is refused")
        } catch (e: McpError) {
            assertEquals("usage", e.kind)
        }
    }

    @Test
    fun badDefinitionsAndAddressesAreUsageErrors() = runBlocking {
        val server = Server("bad", "1.0.0")
        try {
            server.tool(obj("description" to "no name")) { _, _ -> null }
            fail("a tool without a name is refused")
        } catch (e: McpError) {
            assertEquals("usage", e.kind)
            assertTrue(e.message, e.message.contains("the tool definition is not valid"))
        }
        try {
            server.serveHttp("localhost")
            fail("an address without a port is refused")
        } catch (e: McpError) {
            assertEquals("usage", e.kind)
        }
        try {
            Server("bad", "1.0.0", obj("pageSizee" to 3))
            fail("an unknown option is refused")
        } catch (e: McpError) {
            assertEquals("usage", e.kind)
            assertTrue(e.message, e.message.contains("pageSizee"))
        }
        assertFalse(server.removeTool("nothing"))
    }
}

// The Kotlin API against the real Rust everything_server (target/debug/examples, `make test-servers`), over
// Streamable HTTP in both eras and over stdio: lists and paging, calls, MRTR input handlers,
// progress, errors by kind, cancellation both ways, subscriptions.
package mcpaxle

import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonPrimitive
import mcpaxle.ffi.ListKind
import mcpaxle.ffi.errorKinds
import org.junit.AfterClass
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertNull
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.BeforeClass
import org.junit.Test
import quickstart.main as readmeQuickStart
import java.util.Collections

class ClientTest {
    companion object {
        private val serverPath: String = System.getProperty("mcpaxle.everythingServer")
            ?: error("the system property mcpaxle.everythingServer names the Rust everything_server")
        private lateinit var server: ServerProcess
        private lateinit var url: String

        @BeforeClass
        @JvmStatic
        fun startServer() {
            server = ServerProcess(serverPath)
            url = "${server.base}/mcp"
        }

        @AfterClass
        @JvmStatic
        fun stopServer() = server.close()

        fun options(vararg versions: String) = obj(
            "clientInfo" to obj("name" to "kotlin-tests", "version" to "0.1.0"),
            "protocolVersions" to (if (versions.isEmpty()) Client.supportedVersions else versions.toList()),
        )
    }

    private fun elicitHandlers(answer: InputAnswer) = Handlers(onElicitation = answer)

    private val accept: InputAnswer = { params ->
        obj("action" to "accept", "content" to obj("username" to "ada", "email" to "ada@example.com", "asked" to params["message"]))
    }

    @Test
    fun readmeQuickStartRuns() {
        // README's quick start as printed (scripts/test.sh extracts it), against this server.
        System.setProperty("mcpaxle.quickstartUrl", url)
        val printed = java.io.ByteArrayOutputStream()
        val stdout = System.out
        System.setOut(java.io.PrintStream(printed, true, "UTF-8"))
        try {
            readmeQuickStart()
        } finally {
            System.setOut(stdout)
        }
        val lines = printed.toString("UTF-8").lines()
        assertTrue("the quick start lists the tools: $lines", "greet" in lines && "slow_compute" in lines)
        assertEquals("Hello, Ada!", lines.filter { it.isNotEmpty() }.last())
    }

    @Test
    fun modernListsAndCalls() = runBlocking {
        val client = Client.connectHttp(url, options())
        try {
            assertEquals("modern", client.era)
            assertEquals("2026-07-28", client.protocolVersion)
            val tools = client.listAllTools()
            assertTrue("tools: $tools", tools.any { it["name"]!!.jsonPrimitive.content == "test_simple_text" })
            // The paging helper follows every cursor to the same items.
            assertEquals(tools.map { it["name"] }, client.pages(ListKind.TOOLS).toList().map { it["name"] })
            assertTrue(client.discover().containsKey("capabilities"))
            assertTrue(client.listAllResources().isNotEmpty())
            assertTrue(client.listAllPrompts().isNotEmpty())
            val r = client.callTool("test_simple_text")
            assertTrue(r.text(), r.text().isNotEmpty())
            val failed = client.callTool("test_error_handling")
            assertEquals("true", failed["isError"].toString())
            val prompt = client.getPrompt("test_prompt_with_arguments", mapOf("arg1" to "a", "arg2" to "b"))
            assertTrue(prompt.containsKey("messages"))
        } finally {
            client.close()
        }
    }

    @Test
    fun progressReachesTheCallback() = runBlocking {
        val client = Client.connectHttp(url, options())
        try {
            val seen = Collections.synchronizedList(mutableListOf<JsonObject>())
            client.callTool("test_tool_with_progress", options = CallOptions(onProgress = { seen.add(it) }))
            assertEquals(listOf("0", "50", "100"), seen.map { it["progress"]!!.jsonPrimitive.content.substringBefore('.') })
        } finally {
            client.close()
        }
    }

    @Test
    fun callToolEventsEmitsProgressThenTheResult() = runBlocking<Unit> {
        val client = Client.connectHttp(url, options())
        try {
            val events = client.callToolEvents("test_tool_with_progress").toList()
            val progress = events.filterIsInstance<CallEvent.Progress>()
            assertEquals(listOf("0", "50", "100"), progress.map { it.params["progress"]!!.jsonPrimitive.content.substringBefore('.') })
            val last = events.last()
            assertTrue("the result comes last: $events", last is CallEvent.Result)
            assertEquals(1, events.count { it is CallEvent.Result })
            assertFalse((last as CallEvent.Result).result["isError"]?.jsonPrimitive?.content == "true")
            // Not collected, not called: a cold flow.
            client.callToolEvents("greet", obj("name" to "nobody"))
        } finally {
            client.close()
        }
    }

    @Test
    fun elicitationInBothEras() = runBlocking {
        for (version in listOf("2026-07-28", "2025-11-25")) {
            val client = Client.connectHttp(url, options(version), elicitHandlers(accept))
            try {
                assertEquals(if (version == "2026-07-28") "modern" else "legacy", client.era)
                val r = client.callTool("test_elicitation", obj("message" to "who are you?"))
                assertTrue(r.text(), r.text().contains("action=accept") && r.text().contains("ada@example.com"))
            } finally {
                client.close()
            }
        }
    }

    @Test
    fun stdioServer() = runBlocking {
        val client = Client.connectStdio(serverPath, listOf("--stdio"), options(), elicitHandlers(accept))
        try {
            assertEquals("modern", client.era)
            assertTrue((client.info["pid"]?.jsonPrimitive?.content?.toInt() ?: 0) > 0)
            val r = client.callTool("test_elicitation", obj("message" to "over stdio"))
            assertTrue(r.text(), r.text().contains("ada"))
        } finally {
            client.close()
        }
    }

    @Test
    fun errorsCarryTheCoreKinds() = runBlocking {
        val kinds = errorKinds()
        assertEquals(kinds.size, kinds.map { it.name }.toSet().size)
        val client = Client.connectHttp(url, options())
        try {
            try {
                client.callTool("no_such_tool")
                fail("an unknown tool succeeded")
            } catch (e: McpError) {
                assertEquals("invalid_params", e.kind)
                assertEquals(kinds.first { it.name == "invalid_params" }.code, e.code)
            }
        } finally {
            client.close()
        }
        // Options are read by the core: an unknown name is a usage error (as in every binding),
        // by name.
        try {
            Client.connectHttp(url, obj("noSuchOption" to 1))
            fail("an unknown option was accepted")
        } catch (e: McpError) {
            assertEquals("usage", e.kind)
            assertTrue(e.message, e.message.contains("noSuchOption"))
        }
    }

    @Test
    fun aHandlersErrorFailsTheRequestWithItsKind() = runBlocking {
        val refuse: InputAnswer = { throw McpError("invalid_params", -32602, "the user closed the dialog") }
        val client = Client.connectHttp(url, options(), elicitHandlers(refuse))
        try {
            client.callTool("test_elicitation", obj("message" to "?"))
            fail("the call succeeded")
        } catch (e: McpError) {
            assertEquals("invalid_params", e.kind)
            assertTrue(e.message, e.message.contains("the user closed the dialog"))
        } finally {
            client.close()
        }
    }

    @Test
    fun cancellingTheCoroutineCancelsTheCallAndItsHandler() = runBlocking {
        val asked = CompletableDeferred<Unit>()
        val handlerCancelled = CompletableDeferred<Boolean>()
        val never: InputAnswer = {
            asked.complete(Unit)
            try {
                awaitCancellation()
            } catch (e: CancellationException) {
                handlerCancelled.complete(true)
                throw e
            }
        }
        val client = Client.connectHttp(url, options(), elicitHandlers(never))
        try {
            val call = async { client.callTool("test_elicitation", obj("message" to "wait")) }
            withTimeout(10_000) { asked.await() }
            val t0 = System.nanoTime()
            call.cancel()
            assertNull(withTimeoutOrNull(2_000) { runCatching { call.await() }.exceptionOrNull()?.let { null } })
            assertTrue(call.isCancelled)
            assertTrue("took ${(System.nanoTime() - t0) / 1_000_000} ms", System.nanoTime() - t0 < 2_000_000_000)
            // Dropping the Rust future dropped the handler's foreign future: its coroutine ends.
            assertTrue(withTimeout(5_000) { handlerCancelled.await() })
            // The connection still works.
            assertFalse(client.callTool("test_simple_text").text().isEmpty())
        } finally {
            client.close()
        }
    }

    @Test
    fun subscriptionsAsAFlow() = runBlocking {
        val client = Client.connectHttp(url, options())
        try {
            val first = async { client.subscribe(obj("toolsListChanged" to true)).first() }
            // The subscription opens asynchronously: trigger changes until one arrives.
            var n = 0
            while (!first.isCompleted && n++ < 50) {
                client.callTool("test_trigger_tool_change")
                delay(100)
            }
            val note = withTimeout(5_000) { first.await() }
            assertEquals("notifications/tools/list_changed", note["method"]!!.jsonPrimitive.content)
        } finally {
            client.close()
        }
    }
}

// OAuth tokens kept by the application's own TokenStore, against the Rust oauth_server fixture
// (fixtures/src/oauth_server.rs: a protected MCP server with its authorization server, which
// approves without a user and counts its token requests at /stats).
package mcpaxle

import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.AfterClass
import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.BeforeClass
import org.junit.Test
import java.net.URI
import java.util.Collections

class TokenStoreTest {
    companion object {
        private lateinit var server: ServerProcess
        private lateinit var base: String

        @BeforeClass
        @JvmStatic
        fun startServer() {
            val path = System.getProperty("mcpaxle.oauthServer") ?: error("the system property mcpaxle.oauthServer names the oauth_server fixture")
            server = ServerProcess(path)
            base = server.base
        }

        @AfterClass
        @JvmStatic
        fun stopServer() = server.close()
    }

    /** The application's store: a map, and the operations it was asked for. */
    private class MapStore : TokenStore {
        val tokens = Collections.synchronizedMap(mutableMapOf<JsonObject, JsonObject>())
        val calls = Collections.synchronizedList(mutableListOf<String>())
        override suspend fun load(key: JsonObject): JsonObject? { calls.add("load"); return tokens[key] }
        override suspend fun save(key: JsonObject, token: JsonObject) { calls.add("save"); tokens[key] = token }
        override suspend fun clear(key: JsonObject) { calls.add("clear"); tokens.remove(key) }
    }

    private fun tokenRequests(): Int =
        Json.parseToJsonElement(URI("$base/stats").toURL().readText()).jsonObject["token_requests"]!!.jsonPrimitive.content.toInt()

    private suspend fun whoami(store: TokenStore): String {
        val options = obj(
            "clientInfo" to obj("name" to "kotlin-tests", "version" to "0.1.0"),
            "oauth" to obj("clientName" to "kotlin-tests", "redirectUri" to "http://127.0.0.1:9/callback"),
        )
        val client = Client.connectHttp("$base/mcp", options, Handlers(tokenStore = store))
        try {
            return client.callTool("whoami").text()
        } finally {
            client.close()
        }
    }

    @Test
    fun aSecondClientWithTheSameStoreAsksForNoToken() = runBlocking {
        val store = MapStore()
        val before = tokenRequests()
        assertTrue(whoami(store).startsWith("client "))
        assertEquals(listOf("load", "save"), store.calls.take(2))
        assertEquals(1, store.tokens.size)
        val (key, token) = store.tokens.entries.single()
        assertEquals(base, key.string("issuer"))
        assertEquals("$base/mcp", key.string("resource"))
        assertTrue("the token is kept: $token", token.string("accessToken")!!.isNotEmpty() && token.string("refreshToken") != null)
        // The client registered itself: its registration is kept with the token.
        assertTrue(token["registration"] is JsonObject)
        val afterFirst = tokenRequests()
        assertTrue(afterFirst > before)

        val calls = store.calls.size
        assertTrue(whoami(store).startsWith("client "))
        assertEquals("the second client asked for no token", afterFirst, tokenRequests())
        assertEquals("load", store.calls[calls])
    }

    @Test
    fun aStoreThatFailsFailsTheRequestWithItsMessage() = runBlocking {
        val locked = object : TokenStore {
            override suspend fun load(key: JsonObject): JsonObject? = throw java.io.IOException("the keychain is locked")
            override suspend fun save(key: JsonObject, token: JsonObject) = Unit
            override suspend fun clear(key: JsonObject) = Unit
        }
        try {
            whoami(locked)
            fail("a store that cannot load must fail the request")
        } catch (e: McpError) {
            assertTrue(e.message, e.message.contains("the keychain is locked"))
        }
    }

    @Test
    fun aTokenStoreNeedsTheOauthOption() = runBlocking {
        try {
            Client.connectHttp("$base/mcp", obj("clientInfo" to obj("name" to "t", "version" to "1")), Handlers(tokenStore = MapStore()))
            fail("a token store without the oauth option is a usage error")
        } catch (e: McpError) {
            assertEquals("usage", e.kind)
            assertTrue(e.message, e.message.contains("a token store needs the \"oauth\" option"))
        }
    }
}

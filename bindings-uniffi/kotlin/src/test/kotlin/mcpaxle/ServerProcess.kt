// A Rust server the tests run (the everything_server, the oauth_server fixture): started on a free
// port of 127.0.0.1 and waited for, stopped by close().
package mcpaxle

import java.net.ServerSocket
import java.net.Socket

class ServerProcess(path: String) : AutoCloseable {
    val port: Int = ServerSocket(0).use { it.localPort }

    /** `http://127.0.0.1:PORT`. */
    val base = "http://127.0.0.1:$port"

    private val process: Process = ProcessBuilder(path, "--http", "127.0.0.1:$port").redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start()

    init {
        val deadline = System.currentTimeMillis() + 15_000
        while (true) {
            try {
                Socket("127.0.0.1", port).close()
                break
            } catch (e: java.io.IOException) {
                if (!process.isAlive || System.currentTimeMillis() > deadline) {
                    process.destroy()
                    throw IllegalStateException("$path did not start on port $port", e)
                }
                Thread.sleep(50)
            }
        }
    }

    override fun close() {
        process.destroy()
        process.waitFor()
    }
}

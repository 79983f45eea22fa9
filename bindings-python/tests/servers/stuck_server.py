"""A server for the shutdown tests: its one tool blocks its thread forever (no timeout).
``--http`` serves HTTP on a free port (the URL is logged to stderr), else stdio; the drain
deadline is 1 s."""

import logging
import sys
import threading

from mcpaxle import Server

server = Server("stuck")


@server.tool()
def stuck() -> str:
    """Never returns: its thread cannot be stopped."""
    print("stuck: started", file=sys.stderr, flush=True)
    threading.Event().wait()
    return "never"


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
    if sys.argv[1:2] == ["--http"]:
        server.run("http", port=0, drain_timeout_ms=1000)
    else:
        server.run(drain_timeout_ms=1000)

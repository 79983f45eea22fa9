"""A server of ``run("http", workers=N)``: ``workers_server.py PORT N``; the tool ``pid``
answers with the pid of the worker that served it."""

import os
import sys

from mcpaxle import Server

server = Server("workers", legacy=False)


@server.tool()
def pid() -> str:
    """The pid of the worker serving this call."""
    return str(os.getpid())


server.run("http", host="127.0.0.1", port=int(sys.argv[1]), workers=int(sys.argv[2]))

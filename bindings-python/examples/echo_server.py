"""The benchmark's trivial tool in Python: ``echo`` returns its ``text`` argument.

    python echo_server.py --http 127.0.0.1:8080     # endpoint /mcp
    python echo_server.py --stdio
    python echo_server.py --http 127.0.0.1:8080 --sync   # the same tool as a plain def
    python echo_server.py --http 127.0.0.1:8080 --workers 2   # two worker processes, one port
    python echo_server.py --http 127.0.0.1:8080 --busy   # the tool computes ~0.2 ms in Python first
    python echo_server.py --asgi 127.0.0.1:8080     # through server.asgi_app() under uvicorn
"""

import sys

from mcpaxle import Server

server = Server("mcpaxle-python-echo", version="0.1.0")

if "--sync" in sys.argv:

    @server.tool()
    def echo(text: str) -> str:
        """Returns its text argument."""
        return text

elif "--busy" in sys.argv:

    @server.tool()
    async def echo(text: str) -> str:
        """Returns its text argument, after some work in Python (a handler whose own CPU counts)."""
        total = 0
        for i in range(4000):
            total += i * i
        return text if total else ""

else:

    @server.tool()
    async def echo(text: str) -> str:
        """Returns its text argument."""
        return text


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a not in ("--sync", "--busy")]
    workers = 1
    if len(args) >= 2 and args[-2] == "--workers":
        workers = int(args[-1])
        args = args[:-2]
    if args == ["--stdio"]:
        server.run()
    elif len(args) == 2 and args[0] == "--http":
        host, _, port = args[1].rpartition(":")
        server.run("http", host=host, port=int(port), workers=workers)
    elif len(args) == 2 and args[0] == "--asgi":
        import uvicorn

        host, _, port = args[1].rpartition(":")
        uvicorn.run(server.asgi_app(), host=host, port=int(port), log_level="warning", access_log=False)
    else:
        print("usage: echo_server.py (--http HOST:PORT [--workers N] | --asgi HOST:PORT | --stdio) [--sync | --busy]", file=sys.stderr)
        raise SystemExit(2)

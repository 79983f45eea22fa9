"""A stdio server for the tests: writes to stdout from handlers, and reports cancellation."""

import asyncio
import os
import sys

from mcpaxle import Context, Server

server = Server("stdio-test", version="1.0.0")


@server.tool()
def noisy() -> str:
    """Writes to stdout in every way it can; none of it may reach the protocol stream."""
    print("print() from a handler")
    sys.stdout.flush()
    os.write(1, b"a raw write to fd 1\n")
    return "quiet"


@server.tool()
async def wait_for_cancel(ctx: Context) -> str:
    """Says it is running (a progress notification, when asked for one), waits until cancelled,
    then says so on stderr."""
    await ctx.progress(0, message="waiting for cancellation")
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        print("handler saw CancelledError", file=sys.stderr, flush=True)
        raise
    return "never"


@server.tool()
def environment() -> dict[str, str]:
    """The server's whole environment."""
    return dict(os.environ)


if __name__ == "__main__":
    print("before serving: a print to stdout is fine here", file=sys.stderr)
    server.run()

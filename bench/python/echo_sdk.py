"""The benchmark's trivial tool on the official Python SDK (PyPI ``mcp==2.3.0``).

    python echo_sdk.py --port 8080        # http://127.0.0.1:8080/mcp

``MCPServer`` (mcp 2's FastMCP) over Streamable HTTP, stateless with JSON responses, under
uvicorn without access logging (one log line a request would be measured as server cost).
bench/run.py runs it from its own venv (target/bench-venv-sdk, made on demand).
"""

import argparse

import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("sdk-python-echo", version="0.1.0", log_level="WARNING")


@server.tool()
async def echo(text: str) -> str:
    """Returns its text argument."""
    return text


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    opts = ap.parse_args()
    app = server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True, json_response=True, host=opts.host)
    uvicorn.run(app, host=opts.host, port=opts.port, log_level="warning", access_log=False)

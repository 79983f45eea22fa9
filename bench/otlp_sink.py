"""An OTLP/HTTP sink for the telemetry rows of bench/run.py: takes every export, answers it
with an empty (valid) response, keeps nothing. Prints "PORT <n>" once it listens on 127.0.0.1."""

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Sink(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()


server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
print(f"PORT {server.server_address[1]}", flush=True)
server.serve_forever()

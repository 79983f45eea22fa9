"""A test collector of OTLP over HTTP: what mcpaxle's tests export spans and metrics to.

It decodes each export with OpenTelemetry's own protobuf definitions (the opentelemetry-proto
package), keeps every span and metric point, and answers what it holds as JSON for the tests
to assert on:

    python tests/otel/collector.py [--port N]     prints "PORT <n>" once it listens on 127.0.0.1

    POST /v1/traces, /v1/metrics    OTLP/HTTP, protobuf (or JSON), gzip or not, sized or chunked
    GET  /spans                     [{traceId, spanId, parentSpanId, name, kind, service, scope,
                                      attributes, status: {code, message}, events, links}]
    GET  /metrics                   [{name, service, scope, unit, kind, attributes, count, sum,
                                      value, buckets}]  every data point of every export
    POST /reset                     forgets everything
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

SPAN_KINDS = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
STATUS_CODES = {0: "unset", 1: "ok", 2: "error"}

lock = threading.Lock()
spans: list[dict[str, Any]] = []
points: list[dict[str, Any]] = []


def value(v: AnyValue) -> Any:
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return attributes(v.kvlist_value.values)
    if kind == "bytes_value":
        return v.bytes_value.hex()
    return getattr(v, kind)


def attributes(kvs: Any) -> dict[str, Any]:
    return {kv.key: value(kv.value) for kv in kvs}


def service(resource_attrs: dict[str, Any]) -> str | None:
    return resource_attrs.get("service.name")


def take_traces(req: ExportTraceServiceRequest) -> None:
    got = []
    for rs in req.resource_spans:
        svc = service(attributes(rs.resource.attributes))
        for ss in rs.scope_spans:
            for s in ss.spans:
                got.append(
                    {
                        "traceId": s.trace_id.hex(),
                        "spanId": s.span_id.hex(),
                        "parentSpanId": s.parent_span_id.hex(),
                        "name": s.name,
                        "kind": SPAN_KINDS.get(s.kind, str(s.kind)),
                        "service": svc,
                        "scope": ss.scope.name,
                        "attributes": attributes(s.attributes),
                        "status": {"code": STATUS_CODES.get(s.status.code, str(s.status.code)), "message": s.status.message},
                        "events": [e.name for e in s.events],
                        "links": [{"traceId": l.trace_id.hex(), "spanId": l.span_id.hex()} for l in s.links],
                        "startNs": s.start_time_unix_nano,
                        "endNs": s.end_time_unix_nano,
                    }
                )
    with lock:
        spans.extend(got)


def take_metrics(req: ExportMetricsServiceRequest) -> None:
    got = []
    for rm in req.resource_metrics:
        svc = service(attributes(rm.resource.attributes))
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                kind = m.WhichOneof("data")
                base = {"name": m.name, "service": svc, "scope": sm.scope.name, "unit": m.unit, "kind": kind}
                data = getattr(m, kind)
                for p in data.data_points:
                    point = dict(base, attributes=attributes(p.attributes))
                    if kind in ("histogram", "exponential_histogram"):
                        point.update(count=p.count, sum=p.sum)
                        if kind == "histogram":
                            point["buckets"] = {"bounds": list(p.explicit_bounds), "counts": list(p.bucket_counts)}
                    else:
                        point["value"] = p.as_int if p.WhichOneof("value") == "as_int" else p.as_double
                    got.append(point)
    with lock:
        points.extend(got)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def answer(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        with lock:
            held = {"/spans": list(spans), "/metrics": list(points)}.get(self.path)
        if held is None:
            self.answer(404, b"not found", "text/plain")
        else:
            self.answer(200, json.dumps(held).encode(), "application/json")

    def body(self) -> bytes:
        """The request body, sized by Content-Length or chunked (Node's exporters chunk)."""
        if "chunked" not in (self.headers.get("Transfer-Encoding") or "").lower():
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))
        chunks = []
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(chunks)
            chunks.append(self.rfile.read(size))
            self.rfile.readline()

    def do_POST(self) -> None:
        body = self.body()
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        if self.path == "/reset":
            with lock:
                spans.clear()
                points.clear()
            self.answer(200, b"{}", "application/json")
            return
        kinds = {
            "/v1/traces": (ExportTraceServiceRequest, ExportTraceServiceResponse, take_traces),
            "/v1/metrics": (ExportMetricsServiceRequest, ExportMetricsServiceResponse, take_metrics),
        }
        if self.path not in kinds:
            self.answer(404, b"not found", "text/plain")
            return
        request_type, response_type, take = kinds[self.path]
        request = request_type()
        as_json = (self.headers.get("Content-Type") or "").startswith("application/json")
        try:
            if as_json:
                json_format.Parse(body, request)
            else:
                request.ParseFromString(body)
        except Exception as e:  # a malformed export is the exporter's bug: say so
            print(f"collector: cannot decode {self.path}: {e}", file=sys.stderr, flush=True)
            self.answer(400, str(e).encode(), "text/plain")
            return
        take(request)
        if as_json:
            self.answer(200, json_format.MessageToJson(response_type()).encode(), "application/json")
        else:
            self.answer(200, response_type().SerializeToString(), "application/x-protobuf")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()

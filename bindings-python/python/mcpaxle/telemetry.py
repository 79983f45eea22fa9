"""Traces and metrics by OpenTelemetry, for the whole process.

>>> from mcpaxle import telemetry
>>> telemetry.configure(endpoint="http://127.0.0.1:4318", service_name="notes")  # doctest: +SKIP

Once configured, the core makes one span per request a server serves (kind server) and one per
request a client sends (kind client), named like ``tools/call forecast`` and with the attributes
of OpenTelemetry's MCP semantic conventions (``mcp.method.name``, ``gen_ai.tool.name``,
``mcp.protocol.version``, ``jsonrpc.request.id``, ``mcp.session.id``, ``error.type``, ...), and
records the request metrics (``mcp.server.operation.duration``,
``mcp.client.operation.duration``, requests in flight, listen streams, legacy sessions, MRTR
rounds). They are exported over OTLP/HTTP (protobuf) by the core, whatever the application's
own OpenTelemetry setup. Trace context travels in each request's ``_meta`` (W3C
``traceparent``, ``tracestate``, ``baggage``).

With the ``opentelemetry`` package installed, the core's spans join the application's: a
handler runs with its request's span as OpenTelemetry's current context (``async def`` on the
loop and plain ``def`` on the thread pool alike), so the spans its code starts are children of
the server span; and a client request made inside a span of the application carries that span's
context, so the client span is its child. Without the package, or without a trace context,
handlers and calls run as they would without telemetry.

Telemetry is off until :func:`configure` is called, or until the process's runtime starts with
``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``,
``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT``) set in the environment; off, it costs nothing. The
built-in HTTP server answers the metrics in Prometheus's text format at its ``metrics_path``
(``server.start_http(..., metrics_path="/metrics")``) when telemetry was configured with
``prometheus=True``.
"""

from __future__ import annotations

from typing import Any, Mapping

from . import _native
from ._durations import ms_options

__all__ = ["configure", "flush", "is_enabled", "prometheus_text", "shutdown"]


def configure(**options: Any) -> None:
    """Turns traces and metrics on for the process, replacing an earlier configuration (whose
    pending spans and metrics are exported first). The options are the core's, as in every
    binding; each one left out (or ``None``) falls back to OpenTelemetry's standard environment
    variables (``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_EXPORTER_OTLP_HEADERS``,
    ``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_TRACES_SAMPLER``/``_ARG``,
    ``OTEL_METRIC_EXPORT_INTERVAL``, the per-signal ``OTEL_EXPORTER_OTLP_TRACES_*`` and
    ``_METRICS_*``), then to its default:

    * ``endpoint``: the OTLP/HTTP base URL, e.g. ``"http://127.0.0.1:4318"`` (spans go to
      ``{endpoint}/v1/traces``, metrics to ``{endpoint}/v1/metrics``; default
      ``http://localhost:4318``);
    * ``headers``: a dict of headers sent with every export (a hosted backend's API key);
    * ``service_name``: the ``service.name`` of the process (default ``unknown_service``);
    * ``sample_ratio``: the share of new traces sampled, 0.0 to 1.0 (default: every trace); a
      request whose caller's trace is sampled, or not, follows its caller;
    * ``traces``, ``metrics``: whether spans and metrics are exported (default ``True``);
    * ``metrics_interval_ms``: how often metrics are exported, in milliseconds or a
      ``timedelta`` (default 60000);
    * ``prometheus``: whether the metrics are also kept for a Prometheus scrape
      (:func:`prometheus_text`, the HTTP server's ``metrics_path``; default ``False``);
    * ``record_principal``: whether server spans record the authenticated principal as
      ``enduser.id`` (default ``False``: a subject is personal data in many deployments).

    Raises :class:`~mcpaxle.errors.UsageError` naming the option at fault for an unknown name
    or a bad value."""
    o = ms_options(options)
    if isinstance(o.get("headers"), Mapping):
        o["headers"] = dict(o["headers"])
    _native.telemetry_configure(o)


def flush() -> None:
    """Exports every span and metric recorded so far, now, and returns once the collector has
    them (each export waits at most 10 s). It blocks: from a coroutine, ``await
    asyncio.to_thread(telemetry.flush)`` keeps the event loop running meanwhile. Does nothing
    while telemetry is off."""
    _native.telemetry_flush()


def shutdown() -> None:
    """Exports what is left (blocking as :func:`flush` does) and turns telemetry off; a later
    :func:`configure` turns it on again."""
    _native.telemetry_shutdown()


def is_enabled() -> bool:
    """Whether telemetry is on (by :func:`configure` or the ``OTEL_*`` environment)."""
    return _native.telemetry_is_enabled()


def prometheus_text() -> str | None:
    """The process's metrics in Prometheus's text exposition format while telemetry is on with
    ``prometheus=True``; ``None`` otherwise."""
    return _native.telemetry_prometheus_text()

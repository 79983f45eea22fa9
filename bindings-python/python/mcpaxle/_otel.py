"""OpenTelemetry's Python API, where mcpaxle meets the application's own traces, when the
``opentelemetry`` package is installed (an optional dependency; looked up once):

* a handler runs with its request's trace context (the core's server span, and the caller's
  baggage) as OpenTelemetry's current context, so the spans its code starts nest under the
  server span (:func:`attach`, :func:`detach`);
* a client request carries the caller's current context in its ``_meta`` (``traceparent``,
  ``tracestate``, ``baggage``), so the core's client span nests under the caller's span and the
  server's under that (:func:`inject`).

Both use W3C trace context and W3C baggage, as the core does."""

from __future__ import annotations

from typing import Any

__all__ = ["attach", "detach", "inject"]


class _Api:
    """The parts of OpenTelemetry's API used here."""

    def __init__(self) -> None:
        from opentelemetry import context, trace
        from opentelemetry.baggage.propagation import W3CBaggagePropagator
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        self.context = context
        self.trace = trace
        self.propagators = (TraceContextTextMapPropagator(), W3CBaggagePropagator())


_api: _Api | None = None
_looked_up = False


def _get() -> _Api | None:
    """OpenTelemetry's API, or None when it is not installed (imported on first use only)."""
    global _api, _looked_up
    if not _looked_up:
        try:
            _api = _Api()
        except ImportError:
            _api = None
        _looked_up = True
    return _api


def attach(carrier: dict[str, str]) -> Any:
    """Makes the trace context of ``carrier`` (``traceparent``, and ``tracestate`` and
    ``baggage`` when present) OpenTelemetry's current context, in a context of its own (not
    whatever was current before). Returns the token for :func:`detach`, or None without
    OpenTelemetry."""
    api = _get()
    if api is None:
        return None
    cx = api.context.Context()
    for p in api.propagators:
        cx = p.extract(carrier, context=cx)
    return api.context.attach(cx)


def detach(token: Any) -> None:
    """Restores the context :func:`attach` replaced (nothing for a None token)."""
    if token is not None and _api is not None:
        _api.context.detach(token)


def inject(meta: dict[str, Any] | None) -> dict[str, Any] | None:
    """A request's ``_meta`` members with OpenTelemetry's current context added, when there is
    a valid current span and ``meta`` has no ``traceparent`` of its own (the caller's wins);
    ``meta`` as it is otherwise."""
    if meta is not None and "traceparent" in meta:
        return meta
    api = _get()
    if api is None or not api.trace.get_current_span().get_span_context().is_valid:
        return meta
    carrier: dict[str, Any] = {}
    for p in api.propagators:
        p.inject(carrier)
    return carrier if meta is None else {**carrier, **meta}

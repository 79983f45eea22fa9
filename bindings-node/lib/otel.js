'use strict'
// OpenTelemetry's JavaScript API (`@opentelemetry/api`, an optional peer dependency, loaded the
// first time it could serve and kept), where mcpaxle meets the application's own traces:
//
// * a handler runs in its request's trace context (the core's server span, the caller's
//   baggage) as the active context, so the spans its code starts nest under the server span
//   (`inTrace`);
// * a client request carries the active context in its `_meta` (`traceparent`, `tracestate`,
//   `baggage`), so the core's client span nests under the caller's span, and the server's under
//   that (`withActiveTrace`).
//
// Both in W3C trace context and W3C baggage, as the core carries them. Without the API installed,
// neither does anything.

/** The API: undefined until looked up, null when not installed. */
let api

function otel() {
  if (api === undefined) {
    try {
      api = require('@opentelemetry/api')
    } catch {
      api = null
    }
  }
  return api
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

/**
 * Calls `fn` with the trace context of `traceJson` (`{traceparent, tracestate?, baggage?}`, the
 * request's server span as the core hands it over) as OpenTelemetry's active context: its spans,
 * and those started after an `await` in it, are children of the server span.
 */
function inTrace(traceJson, fn) {
  const a = otel()
  if (a == null) return fn()
  const { traceparent, tracestate, baggage } = JSON.parse(traceJson)
  const m = TRACEPARENT.exec(traceparent)
  if (m == null) return fn()
  let ctx = a.trace.setSpanContext(a.ROOT_CONTEXT, {
    traceId: m[1],
    spanId: m[2],
    traceFlags: parseInt(m[3], 16),
    isRemote: true,
    traceState: tracestate ? a.createTraceState(tracestate) : undefined,
  })
  if (baggage) ctx = a.propagation.setBaggage(ctx, a.propagation.createBaggage(parseBaggage(a, baggage)))
  return a.context.with(ctx, fn)
}

/** The entries of a W3C `baggage` header: `key=value;metadata,...`, percent-decoded. */
function parseBaggage(a, header) {
  const entries = {}
  for (const member of header.split(',')) {
    const [pair, ...metadata] = member.split(';')
    const eq = pair.indexOf('=')
    if (eq <= 0) continue
    const entry = { value: decode(pair.slice(eq + 1).trim()) }
    if (metadata.length > 0) entry.metadata = a.baggageEntryMetadataFromString(metadata.join(';'))
    entries[decode(pair.slice(0, eq).trim())] = entry
  }
  return entries
}

function decode(s) {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

/**
 * A request's `_meta` members with OpenTelemetry's active context added (`traceparent`, and
 * `tracestate` and `baggage` when there are any), when there is a valid active span and `meta`
 * has no `traceparent` of its own (the caller's wins); `meta` as it is otherwise.
 */
function withActiveTrace(meta) {
  if (meta != null && (typeof meta !== 'object' || Array.isArray(meta) || Object.hasOwn(meta, 'traceparent'))) return meta
  const a = otel()
  if (a == null) return meta
  const active = a.context.active()
  const span = a.trace.getSpanContext(active)
  if (span == null || !a.trace.isSpanContextValid(span)) return meta
  const carrier = { traceparent: `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 0xff).toString(16).padStart(2, '0')}` }
  const state = span.traceState?.serialize()
  if (state) carrier.tracestate = state
  const baggage = a.propagation.getBaggage(active)?.getAllEntries() ?? []
  if (baggage.length > 0) {
    carrier.baggage = baggage
      .map(([k, e]) => `${encodeURIComponent(k)}=${encodeURIComponent(e.value)}${e.metadata ? `;${e.metadata.toString()}` : ''}`)
      .join(',')
  }
  return { ...carrier, ...meta }
}

module.exports = { inTrace, withActiveTrace }

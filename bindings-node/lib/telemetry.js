'use strict'
// The core's traces and metrics by OpenTelemetry, for the whole process: a span per request on
// each side (with the attributes of OpenTelemetry's MCP conventions), the request metrics,
// exported over OTLP/HTTP and optionally kept for a Prometheus scrape (`metricsPath`).
//
//   const { telemetry } = require('mcpaxle')
//   telemetry.configure({ endpoint: 'http://127.0.0.1:4318', serviceName: 'notes' })
//   ...
//   await telemetry.shutdown()
//
// Off by default, unless OTEL_EXPORTER_OTLP_ENDPOINT (or a per-signal one) is set when mcpaxle
// starts. With `@opentelemetry/api` installed, handlers run in their request's trace context and
// client calls carry the caller's (lib/otel.js).

const native = require('../native.js')
const { optionsJson } = require('./options.js')
const { attempt, rethrow, sync } = require('./errors.js')

const telemetry = Object.freeze({
  /**
   * Turns traces and metrics on for the process with `options` (each optional): `endpoint` (the
   * OTLP/HTTP base URL), `headers`, `serviceName`, `sampleRatio`, `traces`, `metrics`,
   * `metricsIntervalMs`, `prometheus`, `recordPrincipal`; what is left out comes from the
   * `OTEL_*` environment, then the defaults. The core checks them (a bad one throws an
   * `McpError` of kind `usage` naming it). Called again, it replaces the earlier setting once
   * that one's pending exports are sent (this call waits for them: configure once, at start).
   */
  configure(options) {
    sync(() => native.telemetryConfigure(optionsJson(options, 'the telemetry options')))
  },

  /** Exports every span and metric recorded so far; resolves once the collector has them. */
  flush() {
    return attempt(() => native.telemetryFlush().catch(rethrow))
  },

  /** Exports what is left and turns telemetry off. */
  shutdown() {
    return attempt(() => native.telemetryShutdown().catch(rethrow))
  },

  /** The metrics in Prometheus's text format while telemetry is on with `prometheus: true`, else null. */
  prometheusText() {
    return native.telemetryPrometheusText() ?? null
  },

  /** Whether telemetry is on. */
  isEnabled() {
    return native.telemetryIsEnabled()
  },
})

module.exports = { telemetry }

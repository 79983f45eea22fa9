// Telemetry end to end over real HTTP on 127.0.0.1: an application traced with OpenTelemetry's
// JavaScript SDK (service `node-app`) calls an mcpaxle Node server with the mcpaxle Node client,
// the core exporting its spans and metrics (service `mcpaxle-node`) to the test collector
// (tests/otel/collector.py), which answers what it received. Checked: the span tree of a call
// (the application's span -> client span -> server span -> the handler's own span, before and
// after an await), the caller's baggage in the handler, a caller's own traceparent, the semconv
// attributes, the legacy session, an error's code, the metrics of a known load, the Prometheus
// text and route, telemetry from the OTEL_* environment (a child process). Telemetry is
// process-global: configured once here (node --test runs each file in its own process).

import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { mcpaxle, require, root, runNode, sleep, stop, text } from './helpers.mjs'

const { Client, ErrorKind, McpError, Server, telemetry } = mcpaxle
const api = require('@opentelemetry/api')
const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node')
const { SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base')
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto')
const { resourceFromAttributes } = require('@opentelemetry/resources')

/** Starts the test collector (its venv made by tests/otel/setup.sh): `{url, proc}`. */
async function startCollector() {
  const python = execFileSync('bash', [path.join(root, 'tests', 'otel', 'setup.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim()
  const proc = spawn(python, [path.join(root, 'tests', 'otel', 'collector.py')], { stdio: ['ignore', 'pipe', 'inherit'] })
  const port = await new Promise((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`the collector printed no PORT line in 20 s: ${JSON.stringify(out)}`)), 20_000)
    proc.stdout.on('data', (d) => {
      out += d
      const m = /^PORT (\d+)$/m.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve(Number(m[1]))
      }
    })
    proc.once('exit', (code) => reject(new Error(`the collector exited (${code}) before listening`)))
  })
  return { url: `http://127.0.0.1:${port}`, proc }
}

/** Polls `get()` until `done(value)` (at most 15 s), then returns the value; fails with `what`. */
async function eventually(get, done, what) {
  const end = Date.now() + 15_000
  let value
  while (Date.now() < end) {
    value = await get()
    if (done(value)) return value
    await sleep(100)
  }
  assert.fail(`${what}; last seen: ${JSON.stringify(value, null, 1).slice(0, 4000)}`)
}

describe('telemetry: the Node client and server in one OpenTelemetry trace', () => {
  let collector
  let provider
  let tracer
  let handle
  let client

  before(async () => {
    collector = await startCollector()
    provider = new NodeTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'node-app' }),
      spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${collector.url}/v1/traces` }))],
    })
    provider.register() // the AsyncLocalStorage context manager, the W3C propagators
    tracer = api.trace.getTracer('telemetry-test')
    telemetry.configure({ endpoint: collector.url, serviceName: 'mcpaxle-node', metricsIntervalMs: 1000, prometheus: true })

    const server = new Server({ name: 'traced', version: '1.0.0' })
    server.tool({ name: 'lookup' }, () =>
      tracer.startActiveSpan('db.query', (span) => {
        span.end()
        return `tenant=${api.propagation.getActiveBaggage()?.getEntry('tenant')?.value}`
      }),
    )
    server.tool({ name: 'lookup_async' }, async () => {
      await sleep(20)
      await new Promise((resolve) => setImmediate(resolve))
      return tracer.startActiveSpan('db.query', (span) => {
        span.end()
        return 'found'
      })
    })
    server.tool({ name: 'active_trace' }, () => api.trace.getSpanContext(api.context.active())?.traceId ?? 'none')
    server.tool({ name: 'reject' }, () => {
      throw new McpError(ErrorKind.INVALID_PARAMS, 'no such row')
    })
    server.tool({ name: 'tally' }, () => 'counted')
    handle = await server.serveHttp({ port: 0, metricsPath: '/metrics' })
    client = await Client.connectHttp(handle.url)
  })

  after(async () => {
    await client?.close()
    await handle?.close()
    await telemetry.shutdown()
    await provider?.shutdown()
    if (collector) await stop(collector.proc)
  })

  /** Runs `fn` in a new root span of the application; its trace id and `fn`'s outcome. */
  function inRootSpan(name, fn) {
    return tracer.startActiveSpan(name, async (span) => {
      try {
        return { traceId: span.spanContext().traceId, result: await fn() }
      } catch (error) {
        return { traceId: span.spanContext().traceId, error }
      } finally {
        span.end()
      }
    })
  }

  /** The spans of a trace once `count` of them reached the collector (both sides flushed). */
  async function spansOf(traceId, count) {
    await Promise.all([telemetry.flush(), provider.forceFlush()])
    return eventually(
      async () => (await (await fetch(`${collector.url}/spans`)).json()).filter((s) => s.traceId === traceId),
      (spans) => spans.length >= count,
      `${count} spans of trace ${traceId} never reached the collector`,
    )
  }

  function only(spans, name, kind) {
    const found = spans.filter((s) => s.name === name && s.kind === kind)
    assert.equal(found.length, 1, `one ${kind} span ${name} in ${JSON.stringify(spans.map((s) => [s.name, s.kind]))}`)
    return found[0]
  }

  /** Checks agent-turn -> client span -> server span -> db.query in `spans`; the server span. */
  function assertTree(spans, tool) {
    const root = only(spans, 'agent-turn', 'internal')
    const clientSpan = only(spans, `tools/call ${tool}`, 'client')
    const serverSpan = only(spans, `tools/call ${tool}`, 'server')
    const query = only(spans, 'db.query', 'internal')
    assert.equal(spans.length, 4, JSON.stringify(spans.map((s) => s.name)))
    assert.equal(root.parentSpanId, '')
    assert.equal(root.service, 'node-app')
    assert.equal(clientSpan.parentSpanId, root.spanId, 'the client span is a child of the caller span')
    assert.equal(clientSpan.service, 'mcpaxle-node')
    assert.equal(serverSpan.parentSpanId, clientSpan.spanId, 'the server span is a child of the client span')
    assert.equal(serverSpan.service, 'mcpaxle-node')
    assert.equal(query.parentSpanId, serverSpan.spanId, "the handler's span is a child of the server span")
    assert.equal(query.service, 'node-app')
    return serverSpan
  }

  test('one call: agent-turn -> client span -> server span -> db.query, with the MCP attributes and the baggage', async () => {
    const withTenant = api.propagation.setBaggage(api.context.active(), api.propagation.createBaggage({ tenant: { value: 'acme co' } }))
    const { traceId, result, error } = await api.context.with(withTenant, () => inRootSpan('agent-turn', () => client.callTool('lookup', {})))
    assert.ifError(error)
    assert.equal(text(result), 'tenant=acme co', "the caller's baggage reaches the handler")
    const serverSpan = assertTree(await spansOf(traceId, 4), 'lookup')
    const a = serverSpan.attributes
    assert.equal(a['mcp.method.name'], 'tools/call')
    assert.equal(a['gen_ai.tool.name'], 'lookup')
    assert.equal(a['gen_ai.operation.name'], 'execute_tool')
    assert.equal(a['mcp.protocol.version'], client.protocolVersion)
    assert.equal(a['network.transport'], 'tcp')
    assert.ok(a['jsonrpc.request.id'] != null && a['jsonrpc.request.id'] !== '', JSON.stringify(a))
    assert.equal(serverSpan.status.code, 'unset')
  })

  test('an async handler: its span, started after awaits, is still a child of the server span', async () => {
    const { traceId, result, error } = await inRootSpan('agent-turn', () => client.callTool('lookup_async', {}))
    assert.ifError(error)
    assert.equal(text(result), 'found')
    assertTree(await spansOf(traceId, 4), 'lookup_async')
  })

  test("a traceparent of the caller's own in meta wins over the active span", async () => {
    const parent = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' }
    const meta = { traceparent: `00-${parent.traceId}-${parent.spanId}-01` }
    const { result, error } = await inRootSpan('ignored', () => client.callTool('active_trace', {}, { meta }))
    assert.ifError(error)
    assert.equal(text(result), parent.traceId, "the handler runs in the meta's trace")
    const spans = await spansOf(parent.traceId, 2)
    assert.equal(only(spans, 'tools/call active_trace', 'client').parentSpanId, parent.spanId)
  })

  test('without an active span, the client span is a root and the handler runs in its trace', async () => {
    const traceId = text(await client.callTool('active_trace'))
    assert.match(traceId, /^[0-9a-f]{32}$/)
    const spans = await spansOf(traceId, 2)
    const clientSpan = only(spans, 'tools/call active_trace', 'client')
    assert.equal(clientSpan.parentSpanId, '')
    assert.equal(only(spans, 'tools/call active_trace', 'server').parentSpanId, clientSpan.spanId)
  })

  test('a legacy (2025-11-25) session: the server span has mcp.session.id', async () => {
    const legacy = await Client.connectHttp(handle.url, { protocolVersions: ['2025-11-25'] })
    try {
      assert.equal(legacy.era, 'legacy')
      const { traceId, error } = await inRootSpan('agent-turn', () => legacy.callTool('lookup', {}))
      assert.ifError(error)
      const serverSpan = assertTree(await spansOf(traceId, 4), 'lookup')
      assert.equal(serverSpan.attributes['mcp.session.id'], legacy.sessionId)
      assert.equal(serverSpan.attributes['mcp.protocol.version'], '2025-11-25')
    } finally {
      await legacy.close()
    }
  })

  test('errors: the server span has the JSON-RPC code as error.type and rpc.response.status_code, status error', async () => {
    // A handler's protocol error, and a tool the server does not have (its server span named
    // without the made-up name: the core's rule).
    for (const tool of ['reject', 'no_such_tool']) {
      const { traceId, error } = await inRootSpan('agent-turn', () => client.callTool(tool, {}))
      assert.ok(error instanceof McpError, `${tool}: ${error}`)
      assert.equal(error.code, -32602, tool)
      const spans = await spansOf(traceId, 3)
      const servers = spans.filter((s) => s.kind === 'server')
      assert.equal(servers.length, 1, JSON.stringify(spans.map((s) => [s.name, s.kind])))
      const serverSpan = servers[0]
      assert.equal(serverSpan.parentSpanId, only(spans, `tools/call ${tool}`, 'client').spanId, tool)
      assert.equal(serverSpan.attributes['error.type'], '-32602', tool)
      assert.equal(serverSpan.attributes['rpc.response.status_code'], '-32602', tool)
      assert.equal(serverSpan.status.code, 'error', tool)
      assert.equal(only(spans, `tools/call ${tool}`, 'client').status.code, 'error', tool)
    }
  })

  test('metrics of a known load: the duration histograms count every call; Prometheus text and route', async () => {
    const N = 7
    for (let i = 0; i < N; i++) assert.equal(text(await client.callTool('tally', {})), 'counted')
    await telemetry.flush()
    const count = (points, name) =>
      Math.max(0, ...points.filter((p) => p.name === name && p.attributes['gen_ai.tool.name'] === 'tally').map((p) => p.count))
    const points = await eventually(
      async () => (await (await fetch(`${collector.url}/metrics`)).json()),
      (p) => count(p, 'mcp.server.operation.duration') >= N && count(p, 'mcp.client.operation.duration') >= N,
      `the duration histograms of tool tally never counted ${N} calls`,
    )
    assert.equal(count(points, 'mcp.server.operation.duration'), N)
    assert.equal(count(points, 'mcp.client.operation.duration'), N)
    const server = points.find((p) => p.name === 'mcp.server.operation.duration' && p.attributes['gen_ai.tool.name'] === 'tally')
    assert.equal(server.service, 'mcpaxle-node')
    assert.equal(server.attributes['mcp.method.name'], 'tools/call')

    assert.equal(telemetry.isEnabled(), true)
    assert.match(telemetry.prometheusText(), /mcp_server_operation_duration/)
    const scraped = await fetch(new URL('/metrics', handle.url))
    assert.equal(scraped.status, 200)
    assert.match(await scraped.text(), /mcp_server_operation_duration\w*\{[^}]*gen_ai_tool_name="tally"/)
  })

  test('OTEL_EXPORTER_OTLP_ENDPOINT turns telemetry on as mcpaxle starts', async () => {
    const r = await runNode(`
      import { createRequire } from 'node:module'
      const { Client, Server, telemetry } = createRequire(import.meta.url)('./index.js')
      const before = telemetry.isEnabled()
      const server = new Server({ name: 'env', version: '1' }).tool({ name: 'from_env' }, () => 'ok')
      const client = await Client.connectInMemory(server)
      await client.callTool('from_env', {})
      console.log(JSON.stringify({ before, after: telemetry.isEnabled() }))
      await client.close()
      await telemetry.shutdown()
    `, { env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: 'node-from-env' } })
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual(JSON.parse(r.stdout), { before: false, after: true })
    await eventually(
      async () => (await (await fetch(`${collector.url}/spans`)).json()).filter((s) => s.service === 'node-from-env'),
      (spans) => spans.some((s) => s.name === 'tools/call from_env' && s.kind === 'server'),
      'the span of a process telemetry was turned on for by the environment never reached the collector',
    )
  })

  test('bad options are refused by the core, naming the option', () => {
    assert.throws(() => telemetry.configure({ sampleRatio: 2 }), { kind: 'usage', message: /sampleRatio: 2 is not a ratio between 0.0 and 1.0/ })
    assert.throws(() => telemetry.configure({ endpont: 'x' }), { kind: 'usage', message: /unknown field `endpont`, expected one of `endpoint`/ })
    assert.throws(() => telemetry.configure('http://x'), { kind: 'usage', message: /the telemetry options must be an object/ })
    assert.equal(telemetry.isEnabled(), true, 'a refused setting leaves the current one on')
  })
})

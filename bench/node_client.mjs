#!/usr/bin/env node
// A load generator for bench/run.py in Node: tools/call round trips of the `echo` tool over
// Streamable HTTP from one client, with N calls in flight at once (N workers, each a closed loop:
// a call, its answer, the next call). The client is mcpaxle's Node package (`--client mcpaxle`)
// or the official TypeScript client, @modelcontextprotocol/client@2.4.0 (`--client sdk`).
//
//   node bench/node_client.mjs --client mcpaxle --url http://127.0.0.1:8080/mcp \
//       [--concurrency 8] [--warmup 1] [--duration 5]
//
// It speaks bench/run.py's load generator protocol on stdout (see bench/README.md):
// {"event":"warmup_done"}, {"event":"measure_done"}, then {"event":"result", ...} counting only
// the calls completed inside the measured window. The first call's answer is checked in full;
// every answer is checked for isError.
//
// Needs: the mcpaxle Node package built (`bash bindings-node/scripts/build.sh`)
// and this directory's dependencies (`npm ci` in bench/, done here when they are missing).

import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)

function die(message) {
  process.stderr.write(`node_client: ${message}\n`)
  process.exit(2)
}

function parseArgs(argv) {
  const o = { client: 'mcpaxle', url: null, concurrency: 8, warmup: 1, duration: 5, text: 'hello' }
  for (let i = 0; i < argv.length; i++) {
    const [k, v] = [argv[i], argv[i + 1]]
    if (k === '--client') o.client = v
    else if (k === '--url') o.url = v
    else if (k === '--concurrency' || k === '--connections') o.concurrency = Number(v)
    else if (k === '--warmup') o.warmup = Number(v)
    else if (k === '--duration') o.duration = Number(v)
    else if (k === '--text') o.text = v
    else die(`unknown argument ${k}`)
    i++
  }
  if (!o.url) die('usage: node_client.mjs --client mcpaxle|sdk --url URL [--concurrency N] [--warmup S] [--duration S]')
  if (!['mcpaxle', 'sdk'].includes(o.client)) die(`--client must be mcpaxle or sdk, not ${o.client}`)
  return o
}

const emit = (v) => process.stdout.write(`${JSON.stringify(v)}\n`)

/** `{call(), close()}` for the chosen client. */
async function connect(o) {
  if (o.client === 'mcpaxle') {
    let mcpaxle
    try {
      mcpaxle = require('../bindings-node/index.js')
    } catch (e) {
      die(`the mcpaxle Node package is not built (run \`bash bindings-node/scripts/build.sh\`): ${e.message}`)
    }
    const client = await mcpaxle.Client.connectHttp(o.url, { clientInfo: { name: 'mcpaxle-bench-node', version: '1.0.0' } })
    const args = { text: o.text }
    return { call: () => client.callTool('echo', args), close: () => client.close(), describe: `mcpaxle ${client.era} ${client.protocolVersion}` }
  }
  if (!fs.existsSync(path.join(here, 'node_modules', '@modelcontextprotocol', 'client'))) {
    process.stderr.write('node_client: installing bench/package.json (npm ci)\n')
    const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: here, stdio: ['ignore', 2, 2] })
    if (r.status !== 0) die('npm ci in bench/ failed')
  }
  const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client')
  const client = new Client({ name: 'mcpaxle-bench-sdk', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(o.url)))
  const params = { name: 'echo', arguments: { text: o.text } }
  return { call: () => client.callTool(params), close: () => client.close(), describe: `@modelcontextprotocol/client ${client.getServerVersion?.()?.name ?? ''}` }
}

/** Latency percentiles of a list of nanosecond durations. */
function quantile(sorted, q) {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] / 1000
}

async function main() {
  const o = parseArgs(process.argv.slice(2))
  const c = await connect(o)
  const first = await c.call()
  const text = first?.content?.[0]?.text
  if (first?.isError || text !== o.text) die(`unexpected first answer: ${JSON.stringify(first).slice(0, 500)}`)
  process.stderr.write(`node_client: ${c.describe}, ${o.concurrency} calls in flight\n`)

  const WARMUP = 0
  const MEASURE = 1
  const STOPPED = 2
  let phase = WARMUP
  const latencies = []
  let errors = 0
  let firstError = null

  async function worker() {
    while (phase !== STOPPED) {
      const t0 = process.hrtime.bigint()
      const p = phase
      try {
        const r = await c.call()
        if (r?.isError) throw new Error(`isError: ${JSON.stringify(r).slice(0, 300)}`)
        if (p === MEASURE && phase === MEASURE) latencies.push(Number(process.hrtime.bigint() - t0))
      } catch (e) {
        if (phase === WARMUP) die(`error during warm-up: ${e.message}`)
        if (phase === MEASURE) {
          errors++
          firstError ??= String(e.message ?? e)
        }
      }
    }
  }

  const workers = Array.from({ length: o.concurrency }, worker)
  await new Promise((resolve) => setTimeout(resolve, o.warmup * 1000))
  phase = MEASURE
  const t0 = process.hrtime.bigint()
  emit({ event: 'warmup_done' })
  await new Promise((resolve) => setTimeout(resolve, o.duration * 1000))
  phase = STOPPED
  const elapsed = Number(process.hrtime.bigint() - t0) / 1e9
  emit({ event: 'measure_done' })
  await Promise.all(workers)
  latencies.sort((a, b) => a - b)
  const mean = latencies.reduce((s, x) => s + x, 0) / Math.max(1, latencies.length) / 1000
  const result = {
    event: 'result',
    transport: 'http',
    client: o.client,
    warmup_s: o.warmup,
    duration_s: elapsed,
    count: latencies.length,
    errors,
    throughput_rps: latencies.length / elapsed,
    p50_us: quantile(latencies, 0.5),
    p90_us: quantile(latencies, 0.9),
    p99_us: quantile(latencies, 0.99),
    p999_us: quantile(latencies, 0.999),
    max_us: latencies.length ? latencies[latencies.length - 1] / 1000 : 0,
    mean_us: mean,
    connections: o.concurrency,
  }
  if (firstError) result.first_error = firstError.slice(0, 500)
  emit(result)
  await c.close()
  process.exit(0)
}

main().catch((e) => die(e.stack ?? String(e)))

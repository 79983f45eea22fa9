#!/usr/bin/env node
// The benchmark's trivial tool in JavaScript (bench/run.py, row `node-http`): `echo` returns its
// `text` argument, served by the core's HTTP server through `serveHttp()`.
//
//   node bindings-node/examples/echo_server.mjs --http 127.0.0.1:8080   # endpoint /mcp
//   node bindings-node/examples/echo_server.mjs --stdio
//
// SIGTERM and Ctrl-C close the server and the process exits.

import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { Server } = require('../index.js')

const server = new Server({ name: 'mcpaxle-node-echo', version: '0.1.0' })
server.tool(
  { name: 'echo', description: 'Returns its text argument', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
  ({ text }) => text ?? '',
)

const [mode, addr] = process.argv.slice(2)
if (mode === '--stdio') {
  await server.serveStdio().closed
} else if (mode === '--http' && addr) {
  const i = addr.lastIndexOf(':')
  const handle = await server.serveHttp({ host: addr.slice(0, i), port: Number(addr.slice(i + 1)) })
  console.error(`echo_server: listening on ${handle.url}`)
  for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => handle.close())
  await handle.closed
} else {
  console.error('usage: echo_server.mjs --http HOST:PORT | --stdio')
  process.exit(2)
}

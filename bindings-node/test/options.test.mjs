// Every option of the core reaches Node: each area of the core's examples (a valid value for
// every option the core knows, `optionsExamples()`) goes through the JavaScript API that takes
// it, by the same names. An option added in the core is in its examples (the core checks
// that), so this fails when Node stops handing it over; an area added in the core fails the
// coverage check at the end until a test here takes it.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { mcpaxle, require, runNode } from './helpers.mjs'

const { Server, Client, optionsSchema } = mcpaxle
const { optionsExamples } = require('../lib/options.js')
const ex = optionsExamples()
const covered = new Set()
const use = (area) => {
  covered.add(area)
  return ex[area]
}

test('the schema names every example', () => {
  const schema = optionsSchema()
  assert.deepEqual(Object.keys(schema).sort(), Object.keys(ex).sort())
  for (const [area, names] of Object.entries(schema)) assert.deepEqual(Object.keys(ex[area]).sort(), [...names].sort(), area)
})

test('every server, HTTP, client and call option is taken by its name', async () => {
  const server = new Server({ name: 'opts', version: '1', ...use('server') })
  new Server({ name: 'opts', version: '1', legacy: use('legacy'), cache: use('cache') })
  server.tool({ name: 'echo' }, async () => 'ok', use('tool'))
  server.resource({ uri: 'test://r', name: 'r' }, async () => 'r', { cache: use('cacheHint') })
  server.resourceTemplate({ uriTemplate: 'test://t/{id}', name: 't' }, async () => 't', { ...use('template'), cache: ex.cacheHint })
  // The example sets jwt and introspection: the built-in verifiers, no verify callback.
  const auth = { ...use('bearerAuth') }
  const guarded = await server.serveHttp({ ...use('http'), port: 0, auth })
  await guarded.close()
  const builtIn = { resource: auth.resource, authorizationServers: auth.authorizationServers, jwt: use('jwt'), introspection: use('introspection') }
  await (await server.serveHttp({ port: 0, auth: builtIn })).close()
  // The mounted handlers take the same options (connections are read, and left to the host).
  server.nodeHandler({ ...ex.http, auth }).close()
  server.fetchHandler({ ...ex.http, auth }).close()
  const http = await server.serveHttp({ port: 0, connections: use('connections'), cors: use('cors') })
  try {
    const client = await Client.connectHttp(http.url, { ...use('client'), oauth: use('oauth') })
    try {
      const r = await client.callTool('echo', {}, use('call'))
      assert.equal(r.content[0].text, 'ok')
    } finally {
      await client.close()
    }
  } finally {
    await http.close()
  }
})

test('every stdio serve option is taken by its name', async () => {
  const stdio = use('stdio')
  const r = await runNode(`
    import { createRequire } from 'node:module'
    const { Server } = createRequire(import.meta.url)('./index.js')
    const handle = new Server({ name: 'opts', version: '1' }).serveStdio(${JSON.stringify(stdio)})
    await handle.closed
    console.log('served')
  `)
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /served/)
})

test('every telemetry option is taken by its name', async () => {
  const { telemetry } = mcpaxle
  telemetry.configure(use('telemetry'))
  try {
    assert.equal(telemetry.isEnabled(), true)
    assert.equal(typeof telemetry.prometheusText(), 'string', 'prometheus: true keeps the metrics for a scrape')
  } finally {
    await telemetry.shutdown()
  }
  assert.equal(telemetry.isEnabled(), false)
  assert.equal(telemetry.prometheusText(), null)
})

test('an unknown option is refused with the valid names', () => {
  assert.throws(() => new Server({ name: 'x', version: '1', pageSise: 3 }), { kind: 'usage', message: /pageSise: unknown field `pageSise`, expected one of `title`/ })
})

test('every area of the core is covered', () => {
  assert.deepEqual([...covered].sort(), Object.keys(ex).sort())
})

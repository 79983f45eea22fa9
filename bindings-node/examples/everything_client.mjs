#!/usr/bin/env node
// The "everything" client: what the official MCP conformance suite's client scenarios ask of a
// client, in one program (the JavaScript twin of core/examples/everything_client.rs).
//
//   MCP_CONFORMANCE_SCENARIO=tools_call MCP_CONFORMANCE_PROTOCOL_VERSION=2026-07-28 \
//       node bindings-node/examples/everything_client.mjs http://localhost:3000/mcp
//
// The server URL is the last argument. MCP_CONFORMANCE_PROTOCOL_VERSION picks the wire
// (2026-07-28: per-request _meta; 2025-11-25 and earlier: the initialize session);
// MCP_CONFORMANCE_CONTEXT carries a scenario's test data (toolCalls, pre-registered
// client_id/client_secret/issuer); with MCPAXLE_AUTO_ERA=1 the client detects the era itself
// instead. The program exits at once on SIGTERM or Ctrl-C, and starts no process of its own.
//
// OAuth is on for every scenario (it only acts on a 401): the suite's authorization servers
// approve without a user, so the user-agent step (a JavaScript callback, to go through the
// host-callback path) fetches the authorization URL and answers with its redirect; the client
// offers a Client ID Metadata Document URL and falls back to dynamic registration.

import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { Client, applySchemaDefaults, SUPPORTED_VERSIONS } = require('../index.js')

for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(143))

/** A plausible value for a property of a JSON Schema, by its declared type. */
function sampleValue(name, schema) {
  schema = schema ?? {}
  if ('default' in schema) return schema.default
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0]
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  switch (type) {
    case 'integer': return 1
    case 'number': return 1.5
    case 'boolean': return true
    case 'object': return {}
    case 'array': return []
    case 'null': return null
    default: return name.includes('region') ? 'us-east1' : 'test'
  }
}

/** Arguments for a tool: every required property, with a plausible value. */
function sampleArguments(tool) {
  const schema = tool.inputSchema ?? {}
  const props = schema.properties ?? {}
  const args = {}
  for (const name of schema.required ?? []) args[name] = sampleValue(name, props[name])
  return args
}

/** Accepts an elicitation, filling the fields the schema gives a default for (SEP-1034). */
async function elicit(params) {
  if (params.mode === 'url') return { action: 'accept' }
  const schema = params.requestedSchema ?? {}
  const content = applySchemaDefaults(schema, {})
  const props = schema.properties ?? {}
  for (const name of schema.required ?? []) {
    if (!(name in content)) content[name] = sampleValue(name, props[name])
  }
  return { action: 'accept', content }
}

async function sample() {
  return {
    role: 'assistant',
    content: { type: 'text', text: 'This is a sampled answer from the everything client.' },
    model: 'mcpaxle-everything-client',
    stopReason: 'endTurn',
  }
}

async function roots() {
  return { roots: [{ uri: 'file:///tmp/mcpaxle-conformance', name: 'conformance' }] }
}

/** Where the suite's authorization servers send the user-agent back (never listened on). */
const REDIRECT_URI = 'http://localhost:3000/callback'
/** The Client ID Metadata Document URL the suite expects (never fetched). */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json'

/** The user-agent step without a user: the authorization server's redirect is the answer. */
async function authorize(authorizationUrl) {
  const response = await fetch(authorizationUrl, { redirect: 'manual' })
  const location = response.headers.get('location')
  await response.body?.cancel()
  console.error(`authorize: ${response.status} from ${authorizationUrl.split('?')[0]}`)
  if (response.status < 300 || response.status >= 400 || !location) {
    throw new Error(`the authorization server answered the authorization request with ${response.status} and no redirect`)
  }
  return new URL(location, authorizationUrl).href
}

function oauth(scenario, context) {
  if (scenario.startsWith('auth/client-credentials')) {
    // A machine client: its secret, or its private key for private_key_jwt.
    const o = { grantType: 'client_credentials', clientId: context?.client_id }
    if (typeof context?.client_secret === 'string') o.clientSecret = context.client_secret
    if (typeof context?.private_key_pem === 'string') o.privateKeyPem = context.private_key_pem
    if (typeof context?.signing_algorithm === 'string') o.signingAlgorithm = context.signing_algorithm
    return o
  }
  const o = { redirectUri: REDIRECT_URI, authorize, clientMetadataUrl: CLIENT_METADATA_URL }
  if (typeof context?.client_id === 'string') {
    o.clientId = context.client_id
    if (typeof context.client_secret === 'string') o.clientSecret = context.client_secret
    if (typeof context.issuer === 'string') o.issuer = context.issuer
  }
  return o
}

function options(scenario, version, context) {
  return {
    clientInfo: { name: 'mcpaxle-everything-client', version: require('../package.json').version },
    // MCPAXLE_AUTO_ERA=1: every supported revision, the era found by detection.
    protocolVersions: process.env.MCPAXLE_AUTO_ERA ? [...SUPPORTED_VERSIONS] : [version],
    requestTimeoutMs: 25_000,
    onElicitation: elicit,
    onSampling: sample,
    onRoots: roots,
    oauth: oauth(scenario, context),
  }
}

async function callEach(client, tools) {
  for (const tool of tools) {
    const r = await client.callTool(tool.name, sampleArguments(tool))
    console.error(`called ${tool.name}: isError=${r.isError}`)
  }
}

function find(tools, name) {
  const t = tools.find((t) => t.name === name)
  if (!t) throw new Error(`the server lists no tool ${name}`)
  return t
}

async function scenario(client, name, tools, context) {
  switch (name) {
    case 'initialize':
    case 'request-metadata':
    case 'json-schema-ref-no-deref':
      return
    case 'tools_call': {
      const r = await client.callTool('add_numbers', { a: 5, b: 3 })
      console.error('add_numbers:', JSON.stringify(r.content))
      return
    }
    case 'sep-2322-client-request-state': {
      const names = ['test_mrtr_echo_state', 'test_mrtr_no_state', 'test_mrtr_unrelated', 'test_mrtr_no_result_type']
      const results = await Promise.all(names.map((n) => client.callTool(n, {})))
      names.forEach((n, i) => console.error(`${n}:`, JSON.stringify(results[i].content)))
      return
    }
    case 'http-standard-headers': {
      await callEach(client, tools)
      for (const r of await client.listAllResources()) await client.readResource(r.uri)
      for (const p of await client.listAllPrompts()) await client.getPrompt(p.name, {})
      return
    }
    case 'http-custom-headers': {
      for (const call of context?.toolCalls ?? []) await client.callTool(call.name, call.arguments ?? {})
      return
    }
    case 'json-schema-2020-12-preservation': {
      const focal = find(tools, 'json_schema_2020_12_tool')
      const r = await client.callTool('json_schema_echo', { schema: focal.inputSchema })
      console.error('json_schema_echo:', JSON.stringify(r.content))
      return
    }
    case 'elicitation-sep1034-client-defaults': {
      find(tools, 'test_client_elicitation_defaults')
      const r = await client.callTool('test_client_elicitation_defaults', {})
      console.error('test_client_elicitation_defaults:', JSON.stringify(r.content))
      return
    }
    case 'sse-retry': {
      const r = await client.callTool('test_reconnection', {})
      console.error('test_reconnection:', JSON.stringify(r.content))
      return
    }
    // http-invalid-tool-headers, and anything else: every listed tool (the invalid ones were
    // dropped by listAllTools).
    default:
      return callEach(client, tools)
  }
}

async function main() {
  const url = process.argv.at(-1)
  if (!url || process.argv.length < 3) {
    console.error('usage: everything_client.mjs SERVER_URL (with MCP_CONFORMANCE_SCENARIO set)')
    return 2
  }
  const name = process.env.MCP_CONFORMANCE_SCENARIO ?? ''
  const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION ?? '2026-07-28'
  let context = null
  try {
    context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? 'null')
  } catch {}
  console.error(`everything_client.mjs: scenario ${JSON.stringify(name)}, protocol ${version}, server ${url}`)
  const client = await Client.connectHttp(url, options(name, version, context))
  try {
    console.error(`connected: era ${client.era}, protocol version ${client.protocolVersion}`)
    const tools = await client.listAllTools()
    console.error('tools:', JSON.stringify(tools.map((t) => t.name)))
    await scenario(client, name, tools, context)
    return 0
  } finally {
    await client.close()
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(`everything_client.mjs: ${e.kind ?? e.name}: ${e.message}`)
    process.exit(1)
  },
)

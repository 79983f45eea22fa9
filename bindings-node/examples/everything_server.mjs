#!/usr/bin/env node
// The "everything" server: every fixture the official MCP conformance suite's server scenarios
// exercise, with handlers in JavaScript (the port of core/examples/everything_server.rs).
//
//   node bindings-node/examples/everything_server.mjs --http 127.0.0.1:3000   # endpoint /mcp
//   node bindings-node/examples/everything_server.mjs --stdio
//   node bindings-node/examples/everything_server.mjs --express 127.0.0.1:3000   # nodeHandler() in Express
//   node bindings-node/examples/everything_server.mjs --fetch 127.0.0.1:3000     # fetchHandler() behind node:http
//
// One endpoint serves both protocol eras: 2026-07-28 requests (per-request _meta, where an ask
// of the client is a Multi Round-Trip Request round) and 2025-11-25 sessions (initialize, where
// the same ask is a real request to the client). SIGTERM and Ctrl-C close the server (stop
// accepting, drain the requests in flight) and the process exits.

import http from 'node:http'
import { createRequire } from 'node:module'
import { setTimeout as sleep } from 'node:timers/promises'
import { fetchListener } from './fetch_listener.mjs'

const require = createRequire(import.meta.url)
const { Server, McpError, ToolError, ErrorKind } = require('../index.js')

/** A 1×1 red PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=='
/** A minimal WAV file (44-byte header, 8 silent samples). */
const WAV = 'UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA=='

const NO_ARGS = { type: 'object', properties: {} }

const server = new Server({
  name: 'mcpaxle-everything-server',
  version: require('../package.json').version,
  title: 'mcpaxle everything server (Node)',
  instructions: 'A server with every fixture of the MCP conformance suite.',
  enable: ['logging'],
})

/** A tool without arguments. */
function tool(name, description, handler) {
  server.tool({ name, description, inputSchema: NO_ARGS }, handler)
}

function elicitName(message) {
  return {
    mode: 'form',
    message,
    requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  }
}

function sampling(prompt) {
  return { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 }
}

const answeredName = (a) => (typeof a?.content?.name === 'string' ? a.content.name : 'stranger')
const sampledText = (a) => (typeof a?.content?.text === 'string' ? a.content.text : '')
const rootCount = (a) => (Array.isArray(a?.roots) ? a.roots.length : 0)
const embeddedText = (uri, mimeType, text) => ({ type: 'resource', resource: { uri, mimeType, text } })
const image = { type: 'image', data: PNG, mimeType: 'image/png' }

// Content --------------------------------------------------------------------------------------

tool('test_simple_text', 'Returns a simple text response', () => 'This is a simple text response for testing.')
tool('test_image_content', 'Returns an image', () => ({ content: [image] }))
tool('test_audio_content', 'Returns audio', () => ({ content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] }))
tool('test_embedded_resource', 'Returns an embedded resource', () => ({
  content: [embeddedText('test://embedded-resource', 'text/plain', 'This is an embedded resource content.')],
}))
tool('test_multiple_content_types', 'Returns text, image and a resource', () => ({
  content: [
    { type: 'text', text: 'Multiple content types test:' },
    image,
    embeddedText('test://mixed-content-resource', 'application/json', '{"test":"data","value":123}'),
  ],
}))
tool('test_error_handling', 'Always fails with a tool error', () => {
  throw new ToolError('This tool intentionally returns an error for testing')
})
tool('test_tool_with_progress', 'Reports progress 0, 50, 100', async (_args, ctx) => {
  for (const p of [0, 50, 100]) {
    ctx.progress(p, 100, `Completed step ${p / 50}`)
    await sleep(20)
  }
  return 'Progress tool completed'
})
// SEP-1699 polling: the response stream ends at once; the result reaches a legacy client after
// it reconnects with Last-Event-ID.
tool('test_reconnection', 'Closes the response stream mid-call; the result comes after the client reconnects', async (_args, ctx) => {
  ctx.closeStream(500)
  await sleep(100)
  return 'Reconnection test completed'
})
for (const name of ['test_logging_tool', 'test_tool_with_logging']) {
  tool(name, 'Logs three messages at info level (only when the request sets a log level)', async (_args, ctx) => {
    for (const step of ['Tool execution started', 'Tool processing data', 'Tool execution completed']) {
      ctx.log('info', step, 'everything_server')
      await sleep(10)
    }
    return 'Logging tool completed'
  })
}
server.tool(
  {
    name: 'json_schema_2020_12_tool',
    description: 'Tool with JSON Schema 2020-12 features',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: {
        address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } },
      },
      properties: {
        name: { type: 'string' },
        address: { $ref: '#/$defs/address' },
        contactMethod: { type: 'string', enum: ['phone', 'email'] },
        phone: { type: 'string' },
        email: { type: 'string' },
      },
      allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
      if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
      then: { required: ['phone'] },
      else: { required: ['email'] },
      additionalProperties: false,
    },
  },
  (args) => `ok: ${JSON.stringify(args)}`,
)
server.tool(
  {
    name: 'test_custom_header',
    description: 'Mirrors its region argument into the Mcp-Param-Region header',
    inputSchema: {
      type: 'object',
      properties: {
        region: { type: 'string', description: 'Where to run', 'x-mcp-header': 'Region' },
        query: { type: 'string' },
      },
      required: ['region'],
    },
  },
  ({ region }) => `region=${region ?? ''}`,
)

// Changes at run time --------------------------------------------------------------------------

tool('test_trigger_tool_change', 'Adds or removes a tool, firing tools/list_changed', () => {
  if (!server.removeTool('test_dynamic_tool')) tool('test_dynamic_tool', 'Added at run time', () => 'dynamic')
  return 'Tool list changed'
})
tool('test_trigger_prompt_change', 'Adds or removes a prompt, firing prompts/list_changed', () => {
  if (!server.removePrompt('test_dynamic_prompt')) {
    server.prompt({ name: 'test_dynamic_prompt', description: 'Added at run time' }, () => 'dynamic')
  }
  return 'Prompt list changed'
})
tool('test_trigger_resource_update', 'Announces an update of test://watched-resource', () => {
  server.notifyResourceUpdated('test://watched-resource')
  return 'Resource updated'
})

// Multi Round-Trip Requests: an ask rejects with INPUT_REQUIRED until its answer is there; the
// rejection propagates and the handler runs again, from the start, with the answer.

tool('test_missing_capability', "Needs the client's sampling capability", async (_args, ctx) => {
  const answer = await ctx.sample('summary', sampling('Summarize: MCP'))
  return `Sampled: ${sampledText(answer)}`
})
for (const name of ['test_streaming_elicitation', 'test_input_required_result_elicitation', 'test_input_required_result_tampered_state']) {
  tool(name, "Asks for the user's name (MRTR elicitation)", async (_args, ctx) => {
    const answer = await ctx.elicit('user_name', elicitName('What is your name?'))
    return `Hello, ${answeredName(answer)}!`
  })
}
tool('test_input_required_result_sampling', 'Asks the client to sample an LLM (MRTR)', async (_args, ctx) => {
  const answer = await ctx.sample('capital_of_france', sampling('What is the capital of France?'))
  return `The model said: ${sampledText(answer)}`
})
tool('test_input_required_result_list_roots', 'Asks the client for its roots (MRTR)', async (_args, ctx) => {
  const answer = await ctx.listRoots('roots')
  return `The client has ${rootCount(answer)} root(s)`
})
tool('test_input_required_result_request_state', 'MRTR with request state', async (_args, ctx) => {
  if (ctx.requestState === undefined) ctx.setRequestState({ started: true })
  const answer = await ctx.elicit('user_name', elicitName('What is your name?'))
  return `Hello, ${answeredName(answer)} (state ${JSON.stringify(ctx.requestState ?? null)})`
})
tool('test_input_required_result_multiple_inputs', 'Asks for elicitation, sampling and roots in one round', async (_args, ctx) => {
  const [name, , roots] = await Promise.all([
    ctx.elicit('user_name', elicitName('What is your name?')),
    ctx.sample('greeting', sampling('Write a greeting')),
    ctx.listRoots('roots'),
  ])
  return `Hello, ${answeredName(name)}; ${rootCount(roots)} root(s)`
})
tool('test_input_required_result_multi_round', 'Three rounds: two asks, then the result', async (_args, ctx) => {
  const first = await ctx.elicit('step_1', elicitName('Round 1: what is your name?'))
  const second = await ctx.elicit('step_2', elicitName('Round 2: what is your name again?'))
  return `Rounds done: ${answeredName(first)} and ${answeredName(second)}`
})
tool('test_input_required_result_capabilities', 'Asks only for what the client supports', async (_args, ctx) => {
  if (ctx.clientSupports('elicitation')) {
    return `Hello, ${answeredName(await ctx.elicit('user_name', elicitName('What is your name?')))}!`
  }
  if (ctx.clientSupports('sampling')) {
    await ctx.sample('fallback', sampling('Say hello'))
    return 'Sampled a greeting'
  }
  if (ctx.clientSupports('roots')) {
    await ctx.listRoots('roots')
    return 'Listed roots'
  }
  throw new McpError(ErrorKind.MISSING_REQUIRED_CLIENT_CAPABILITY, 'This tool requires the client capability elicitation', {
    data: { requiredCapabilities: { elicitation: {} } },
  })
})

// Fixtures of the tasks-* scenarios (the Tasks extension, SEP-2663): plain handlers that run as
// tasks for a client that declares the extension; their asks become the task's input requests.

const optionalTask = { taskSupport: 'optional' }

server.tool(
  { name: 'greet', description: 'Greets by name (never a task)', inputSchema: { type: 'object', properties: { name: { type: 'string' } } } },
  ({ name }) => `Hello, ${typeof name === 'string' ? name : 'World'}!`,
)
server.tool(
  {
    name: 'slow_compute',
    description: 'Sleeps `seconds` seconds, then answers (a task when the client can)',
    inputSchema: { type: 'object', properties: { seconds: { type: 'number', minimum: 0 }, label: { type: 'string' } } },
  },
  async ({ seconds = 1, label = 'result' }, ctx) => {
    await sleep(Math.min(Math.max(Number(seconds) || 0, 0), 3600) * 1000, undefined, { signal: ctx.signal })
    return `Computed ${label} after ${seconds} s`
  },
  optionalTask,
)
server.tool(
  { name: 'failing_job', description: 'Fails with a tool error after a second (only as a task)', inputSchema: NO_ARGS },
  async () => {
    await sleep(1000)
    throw new ToolError('The job failed: the input could not be processed')
  },
  { taskSupport: 'required' },
)
server.tool(
  { name: 'protocol_error_job', description: 'Fails with a JSON-RPC error: the task fails', inputSchema: NO_ARGS },
  async () => {
    await sleep(100)
    // A protocol error, not a tool error (which, like any other Error, is an isError result).
    throw new McpError(ErrorKind.INVALID_PARAMS, 'protocol_error_job: a deliberate protocol error, reported as a failed task')
  },
  optionalTask,
)
server.tool(
  {
    name: 'confirm_delete',
    description: 'Asks the user to confirm, then deletes (pretends to)',
    inputSchema: { type: 'object', properties: { filename: { type: 'string' } } },
  },
  async ({ filename = 'the file' }, ctx) => {
    const answer = await ctx.elicit('confirm', {
      mode: 'form',
      message: `Delete ${filename}?`,
      requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } } },
    })
    const yes = answer?.action === 'accept' && answer?.content?.confirm !== false
    return yes ? `Deleted ${filename}` : `Kept ${filename}`
  },
  optionalTask,
)
server.tool(
  { name: 'multi_input', description: 'Asks two questions at once', inputSchema: NO_ARGS },
  async (_args, ctx) => {
    const [first, second] = await Promise.all([ctx.elicit('first', elicitName('First name?')), ctx.elicit('second', elicitName('Second?'))])
    return `Got ${answeredName(first)} and ${answeredName(second)}`
  },
  optionalTask,
)
server.tool(
  { name: 'test_tool_with_task', description: 'Asks for a name (MRTR), then greets as a task', inputSchema: NO_ARGS },
  async (_args, ctx) => {
    const answer = await ctx.elicit('user_name', elicitName('What is your name?'))
    await ctx.startTask()
    await sleep(200)
    return `Hello, ${answeredName(answer)}!`
  },
  { taskSupport: 'required', deferTask: true },
)

// Fixtures of the 2025-11-25 suite: under a legacy session these asks are real requests to the
// client; under 2026-07-28 the same code is an MRTR round.

server.tool(
  {
    name: 'test_sampling',
    description: "Asks the client's LLM to answer a prompt",
    inputSchema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
  },
  async ({ prompt }, ctx) => `LLM response: ${sampledText(await ctx.sample('sampling', sampling(String(prompt ?? ''))))}`,
)

/** An elicitation's outcome as the Rust server words it. */
const completed = (prefix, a) => `${prefix}: action=${a?.action ?? ''}, content=${JSON.stringify(a?.content ?? null)}`

server.tool(
  {
    name: 'test_elicitation',
    description: 'Asks the user for a username and email',
    inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  },
  async ({ message }, ctx) => {
    const answer = await ctx.elicit('elicitation', {
      message: String(message ?? ''),
      requestedSchema: {
        type: 'object',
        properties: {
          username: { type: 'string', description: "User's response" },
          email: { type: 'string', description: "User's email address" },
        },
        required: ['username', 'email'],
      },
    })
    return completed('User response', answer)
  },
)
tool('test_elicitation_sep1034_defaults', 'Elicitation with defaults for every primitive type', async (_args, ctx) => {
  const answer = await ctx.elicit('defaults', {
    message: 'Please review and update the form fields with defaults',
    requestedSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'User name', default: 'John Doe' },
        age: { type: 'integer', description: 'User age', default: 30 },
        score: { type: 'number', description: 'User score', default: 95.5 },
        status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
        verified: { type: 'boolean', description: 'Verification status', default: true },
      },
    },
  })
  return completed('Elicitation completed', answer)
})
tool('test_elicitation_sep1330_enums', 'Elicitation with the five enum schema variants', async (_args, ctx) => {
  const choices = (word) => ['First', 'Second', 'Third'].map((t, i) => ({ const: `value${i + 1}`, title: `${t} ${word}` }))
  const answer = await ctx.elicit('enums', {
    message: 'Please select options from the enum fields',
    requestedSchema: {
      type: 'object',
      properties: {
        untitledSingle: { type: 'string', description: 'Untitled single-select', enum: ['option1', 'option2', 'option3'] },
        titledSingle: { type: 'string', description: 'Titled single-select', oneOf: choices('Option') },
        legacyEnum: {
          type: 'string',
          description: 'Legacy titled enum',
          enum: ['opt1', 'opt2', 'opt3'],
          enumNames: ['Option One', 'Option Two', 'Option Three'],
        },
        untitledMulti: { type: 'array', description: 'Untitled multi-select', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
        titledMulti: { type: 'array', description: 'Titled multi-select', items: { anyOf: choices('Choice') } },
      },
    },
  })
  return completed('Elicitation completed', answer)
})

// Prompts --------------------------------------------------------------------------------------

const userText = (text) => ({ role: 'user', content: { type: 'text', text } })

server.prompt({ name: 'test_simple_prompt', description: 'A simple prompt without arguments' }, () => 'This is a simple prompt for testing.')
server.prompt(
  {
    name: 'test_prompt_with_arguments',
    description: 'A prompt with two arguments',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
  },
  ({ arg1, arg2 }) => `Prompt with arguments: arg1='${arg1 ?? ''}', arg2='${arg2 ?? ''}'`,
)
server.completion({ type: 'ref/prompt', name: 'test_prompt_with_arguments' }, ({ value }) =>
  ['test', 'testing', 'tested', 'value', 'paris', 'park'].filter((o) => o.startsWith(value)),
)
server.prompt(
  {
    name: 'test_prompt_with_embedded_resource',
    description: 'A prompt with an embedded resource',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource', required: true }],
  },
  ({ resourceUri }) => ({
    messages: [
      { role: 'user', content: embeddedText(resourceUri ?? 'test://example-resource', 'text/plain', 'Embedded resource content for testing.') },
      userText('Please process the embedded resource above.'),
    ],
  }),
)
server.prompt({ name: 'test_prompt_with_image', description: 'A prompt with an image' }, () => ({
  messages: [{ role: 'user', content: image }, userText('Please analyze the image above.')],
}))
server.prompt({ name: 'test_input_required_result_prompt', description: "Asks for the user's name first (MRTR)" }, async (_args, ctx) => {
  const answer = await ctx.elicit('user_name', elicitName('Who is this prompt for?'))
  return `Write a short poem for ${answeredName(answer)}.`
})

// Resources ------------------------------------------------------------------------------------

server.resource(
  { uri: 'test://static-text', name: 'Static text resource', mimeType: 'text/plain', description: 'A static text resource' },
  (uri) => ({ contents: [{ uri, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }] }),
)
server.resource(
  { uri: 'test://static-binary', name: 'Static binary resource', mimeType: 'image/png', description: 'A static binary resource' },
  (uri) => ({ contents: [{ uri, mimeType: 'image/png', blob: PNG }] }),
)
server.resource(
  {
    uri: 'test://watched-resource',
    name: 'Watched resource',
    mimeType: 'text/plain',
    description: 'Subscribe to it, then call test_trigger_resource_update',
  },
  (uri) => ({ contents: [{ uri, mimeType: 'text/plain', text: 'Watched resource content' }] }),
)
server.resourceTemplate(
  { uriTemplate: 'test://template/{id}/data', name: 'Template resource', mimeType: 'application/json', description: 'Data for an id' },
  (uri, { id }) => ({
    contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }],
  }),
)

// Serving --------------------------------------------------------------------------------------

function usageExit() {
  console.error('usage: everything_server.mjs --http HOST:PORT | --express HOST:PORT | --fetch HOST:PORT | --stdio')
  process.exit(2)
}

/** Serves the endpoint mounted in an application server (`express` or `fetch`) at /mcp. */
async function serveMounted(kind, host, port) {
  let listener
  let mcp
  if (kind === 'express') {
    const express = require('express')
    const app = express()
    mcp = server.nodeHandler()
    app.use('/mcp', mcp)
    app.use(express.json())
    listener = http.createServer(app)
  } else {
    mcp = server.fetchHandler()
    listener = http.createServer(fetchListener(mcp))
  }
  await new Promise((resolve, reject) => {
    listener.once('error', reject)
    listener.listen(port, host, resolve)
  })
  const closed = new Promise((resolve) => listener.once('close', resolve))
  const close = () => {
    mcp.close()
    listener.close()
    listener.closeAllConnections()
    return closed
  }
  return { url: `http://${host}:${listener.address().port}/mcp`, closed, close }
}

async function main(argv) {
  let handle = null
  for (const signal of ['SIGTERM', 'SIGINT']) {
    process.once(signal, () => {
      if (handle == null) process.exit(0)
      // A second signal, or a drain that takes too long, ends the process at once.
      process.once(signal, () => process.exit(130))
      setTimeout(() => process.exit(1), 5000).unref()
      handle.close().then(() => process.exit(0), () => process.exit(1))
    })
  }
  if (argv.length === 1 && argv[0] === '--stdio') {
    handle = server.serveStdio()
  } else if (argv.length === 2 && argv[0] === '--http') {
    const at = argv[1].lastIndexOf(':')
    const port = Number(argv[1].slice(at + 1))
    if (at < 1 || !Number.isInteger(port)) usageExit()
    handle = await server.serveHttp({ host: argv[1].slice(0, at), port })
    console.error(`everything_server: listening on ${handle.url}`)
  } else if (argv.length === 2 && (argv[0] === '--express' || argv[0] === '--fetch')) {
    const at = argv[1].lastIndexOf(':')
    const port = Number(argv[1].slice(at + 1))
    if (at < 1 || !Number.isInteger(port)) usageExit()
    handle = await serveMounted(argv[0].slice(2), argv[1].slice(0, at), port)
    console.error(`everything_server: ${argv[0].slice(2)} listening on ${handle.url}`)
  } else {
    usageExit()
  }
  await handle.closed
}

main(process.argv.slice(2)).catch((e) => {
  console.error(`everything_server: ${e.stack ?? e}`)
  process.exit(1)
})

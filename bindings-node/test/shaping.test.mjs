// Shorthand return values, shaped by the core's one rule: every case of the table shared with
// the core, Python and C (tests/shaping_cases.json) served by a JavaScript handler and read back.

import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { mcpaxle, root } from './helpers.mjs'

const { Client, Server } = mcpaxle
const { cases } = JSON.parse(fs.readFileSync(path.join(root, 'tests', 'shaping_cases.json'), 'utf8'))

/** A case's value as a JavaScript handler returns it (bytes as a `Uint8Array`). */
function host(tagged) {
  if ('json' in tagged) return tagged.json
  if ('bytes' in tagged) return new Uint8Array(Buffer.from(tagged.bytes, 'base64'))
  if ('list' in tagged) return tagged.list.map(host)
  return Object.fromEntries(Object.entries(tagged.object).map(([k, v]) => [k, host(v)]))
}

function bare(result) {
  const out = { ...result }
  for (const k of ['resultType', '_meta', 'ttlMs', 'cacheScope']) delete out[k]
  return out
}

/** Registers a handler returning the case's value; the request that reads it back. */
function register(server, c) {
  const value = host(c.returned)
  const handler = async () => value
  switch (c.kind) {
    case 'tool':
      server.tool({ name: 't', ...(c.outputSchema ? { outputSchema: c.outputSchema } : {}) }, handler)
      return ['tools/call', { name: 't' }]
    case 'resource':
      server.resource({ uri: c.uri, name: 'r', ...(c.mimeType ? { mimeType: c.mimeType } : {}) }, handler)
      return ['resources/read', { uri: c.uri }]
    case 'prompt':
      server.prompt({ name: 'p' }, handler)
      return ['prompts/get', { name: 'p' }]
    default:
      server.prompt({ name: 'p', arguments: [{ name: 'a' }] }, async () => 'x')
      server.completion({ type: 'ref/prompt', name: 'p' }, handler)
      return ['completion/complete', { ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'a', value: '' } }]
  }
}

test('every shared case gives the same result as in the core', async () => {
  assert.ok(cases.length >= 20)
  for (const c of cases) {
    const server = new Server({ name: 'shaping', version: '1' })
    const [method, params] = register(server, c)
    const handle = await server.serveHttp({ host: '127.0.0.1', port: 0 })
    const client = await Client.connectHttp(handle.url)
    try {
      assert.deepEqual(bare(await client.request(method, params)), c.expected, c.name)
    } finally {
      await client.close()
      await handle.close()
    }
  }
})

test('asks without a key take the core automatic keys, in the order of the asks', async () => {
  const server = new Server({ name: 'keys', version: '1' })
  server.tool({ name: 'asks' }, async (_args, ctx) => {
    await Promise.all([ctx.elicit(undefined, { mode: 'form', message: 'a', requestedSchema: { type: 'object', properties: {} } }),
      ctx.elicit(null, { mode: 'form', message: 'b', requestedSchema: { type: 'object', properties: {} } }), ctx.listRoots()])
    return 'never'
  })
  const handle = await server.serveHttp({ host: '127.0.0.1', port: 0 })
  try {
    const body = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'asks',
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, roots: {} },
        },
      },
    }
    const r = await fetch(handle.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'asks' },
      body: JSON.stringify(body),
    })
    const text = await r.text()
    const json = JSON.parse(text.startsWith('{') ? text : text.split('\n').filter((l) => l.startsWith('data:')).pop().slice(5))
    assert.equal(json.result.resultType, 'input_required')
    assert.deepEqual(Object.keys(json.result.inputRequests).sort(), ['elicitation_1', 'elicitation_2', 'roots_1'])
    assert.equal(json.result.inputRequests.elicitation_2.params.message, 'b')
  } finally {
    await handle.close()
  }
})

test('a thrown error shows its message unless maskErrorDetails; ToolError and McpError never masked', async () => {
  for (const mask of [false, true]) {
    const server = new Server({ name: 'policy', version: '1', maskErrorDetails: mask })
    server
      .tool({ name: 'broken' }, async () => {
        throw new Error('the file is missing')
      })
      .tool({ name: 'refuses' }, async () => {
        throw new mcpaxle.ToolError('no such city')
      })
      .prompt({ name: 'p' }, async () => {
        throw new TypeError('bad prompt')
      })
      .prompt({ name: 'explicit' }, async () => {
        throw new mcpaxle.McpError(mcpaxle.ErrorKind.INTERNAL, 'meant to say this')
      })
    const handle = await server.serveHttp({ host: '127.0.0.1', port: 0 })
    const client = await Client.connectHttp(handle.url)
    try {
      const r = await client.request('tools/call', { name: 'broken' })
      assert.equal(r.isError, true)
      assert.equal(r.content[0].text, mask ? 'Internal error in tool "broken"' : 'the file is missing')
      assert.equal((await client.request('tools/call', { name: 'refuses' })).content[0].text, 'no such city')
      await assert.rejects(client.request('prompts/get', { name: 'p' }), (e) => {
        assert.equal(e.code, -32603)
        assert.equal(e.message, mask ? 'Internal error in prompt "p"' : 'bad prompt')
        return true
      })
      await assert.rejects(client.request('prompts/get', { name: 'explicit' }), (e) => e.message === 'meant to say this')
    } finally {
      await client.close()
      await handle.close()
    }
  }
})

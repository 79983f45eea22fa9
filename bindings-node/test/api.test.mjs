// The package's surface without a server: exports, errors, helpers, argument checks.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { mcpaxle } from './helpers.mjs'

const { Client, Server, McpError, ToolError, ErrorCode, applySchemaDefaults, SUPPORTED_VERSIONS } = mcpaxle

test('the supported protocol versions come from the core', () => {
  assert.equal(SUPPORTED_VERSIONS[0], '2026-07-28')
  assert.ok(SUPPORTED_VERSIONS.includes('2025-11-25'))
  assert.ok(Object.isFrozen(SUPPORTED_VERSIONS))
})

test('McpError and ToolError are Errors with a code', () => {
  const e = new McpError(ErrorCode.TIMEOUT, 'too slow', { rpcCode: -1, data: { a: 1 } })
  assert.ok(e instanceof Error)
  assert.equal(e.name, 'McpError')
  assert.equal(e.code, 'TIMEOUT')
  assert.equal(e.rpcCode, -1)
  assert.deepEqual(e.data, { a: 1 })
  const t = new ToolError('for the model')
  assert.ok(t instanceof McpError)
  assert.equal(t.code, 'TOOL')
  assert.equal(ErrorCode.INVALID_PARAMS, 'INVALID_PARAMS')
  assert.ok(Object.isFrozen(ErrorCode))
})

test('applySchemaDefaults fills missing fields with their defaults (SEP-1034)', () => {
  const schema = {
    type: 'object',
    properties: { name: { type: 'string', default: 'John Doe' }, age: { type: 'integer', default: 30 }, city: { type: 'string' } },
  }
  assert.deepEqual(applySchemaDefaults(schema, { name: 'Ada' }), { name: 'Ada', age: 30 })
  assert.deepEqual(applySchemaDefaults(schema), { name: 'John Doe', age: 30 })
})

test('bad arguments reject with USAGE, never throw synchronously', async () => {
  const p = Client.connectHttp('http://127.0.0.1:1/mcp', { requestTimeoutMs: 'soon' })
  assert.ok(p instanceof Promise)
  await assert.rejects(p, (e) => e instanceof McpError && e.code === 'USAGE')
  await assert.rejects(Client.connectHttp('http://127.0.0.1:1/mcp', { logLevel: 'loud' }), { code: 'USAGE' })
  await assert.rejects(Client.connectHttp('ftp://example/mcp'), (e) => e instanceof McpError)
  await assert.rejects(Client.connectHttp('http://127.0.0.1:1/mcp', { protocolVersions: [] }), { code: 'USAGE' })
  assert.throws(() => new Client({}), { code: 'USAGE' })
})

test('server definitions and options are checked', () => {
  const s = new Server({ name: 's', version: '1' })
  assert.throws(() => s.tool({ name: 't' }, 'not a function'), { code: 'USAGE' })
  assert.throws(() => s.completion({ type: 'ref/other' }, async () => []), { code: 'USAGE' })
  assert.throws(() => new Server({ name: 's', version: '1', cache: { nothing: { ttlMs: 1 } } }), { code: 'USAGE' })
  assert.equal(s.removeTool('absent'), false)
  assert.equal(s.tool({ name: 't' }, async () => 'x'), s)
  assert.equal(s.removeTool('t'), true)
})

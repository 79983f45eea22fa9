// The package's surface without a server: exports, errors, helpers, argument checks.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import fs from 'node:fs'
import path from 'node:path'
import { mcpaxle, pkg, require } from './helpers.mjs'

const { Client, Server, McpError, ToolError, ErrorKind, applySchemaDefaults, SUPPORTED_VERSIONS } = mcpaxle

test('the supported protocol versions come from the core', () => {
  assert.equal(SUPPORTED_VERSIONS[0], '2026-07-28')
  assert.ok(SUPPORTED_VERSIONS.includes('2025-11-25'))
  assert.ok(Object.isFrozen(SUPPORTED_VERSIONS))
})

test('the error kinds are the core\'s: every kind has its name, its code and its constant, and back', () => {
  const kinds = require('../native.js').errorKinds()
  assert.ok(kinds.length >= 16)
  assert.deepEqual(Object.values(ErrorKind), kinds.map((k) => k.name))
  for (const { name, code } of kinds) {
    assert.equal(ErrorKind[name.toUpperCase()], name)
    const e = new McpError(name, 'm')
    assert.equal(e.kind, name)
    assert.equal(e.code, code)
  }
  assert.equal(new McpError(ErrorKind.INVALID_PARAMS, 'm').code, -32602)
  assert.equal(new McpError(ErrorKind.TOOL, 'm').code, -32603)
  assert.throws(() => new McpError('INVALID_PARAMS', 'm'), (e) => e instanceof TypeError && /unknown error kind "INVALID_PARAMS"/.test(e.message))
  // index.d.ts lists the same kinds (it is written by hand: this catches drift).
  const dts = fs.readFileSync(path.join(pkg, 'index.d.ts'), 'utf8')
  const union = dts.slice(dts.indexOf('export type ErrorKindName ='), dts.indexOf('export declare const ErrorKind'))
  assert.deepEqual([...union.matchAll(/\| '([a-z_]+)'/g)].map((m) => m[1]), kinds.map((k) => k.name))
})

test('McpError and ToolError are Errors with a kind and a code', () => {
  const e = new McpError(ErrorKind.TIMEOUT, 'too slow', { code: -1, data: { a: 1 } })
  assert.ok(e instanceof Error)
  assert.equal(e.name, 'McpError')
  assert.equal(e.kind, 'timeout')
  assert.equal(e.code, -1)
  assert.deepEqual(e.data, { a: 1 })
  const t = new ToolError('for the model')
  assert.ok(t instanceof McpError)
  assert.equal(t.kind, 'tool')
  assert.equal(ErrorKind.INVALID_PARAMS, 'invalid_params')
  assert.ok(Object.isFrozen(ErrorKind))
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
  await assert.rejects(p, (e) => e instanceof McpError && e.kind === 'usage')
  await assert.rejects(Client.connectHttp('http://127.0.0.1:1/mcp', { logLevel: 'loud' }), { kind: 'usage' })
  await assert.rejects(Client.connectHttp('ftp://example/mcp'), (e) => e instanceof McpError)
  await assert.rejects(Client.connectHttp('http://127.0.0.1:1/mcp', { protocolVersions: [] }), { kind: 'usage' })
  assert.throws(() => new Client({}), { kind: 'usage' })
})

test('server definitions and options are checked', () => {
  const s = new Server({ name: 's', version: '1' })
  assert.throws(() => s.tool({ name: 't' }, 'not a function'), { kind: 'usage' })
  assert.throws(() => s.completion({ type: 'ref/other' }, async () => []), { kind: 'usage' })
  assert.throws(() => new Server({ name: 's', version: '1', cache: { nothing: { ttlMs: 1 } } }), { kind: 'usage' })
  assert.equal(s.removeTool('absent'), false)
  assert.equal(s.tool({ name: 't' }, async () => 'x'), s)
  assert.equal(s.removeTool('t'), true)
})

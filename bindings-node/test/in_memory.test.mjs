// Client.connectInMemory: the package's Client joined to a Server of this process with no port
// and no child process, in both eras: calls, MRTR asks answered by the client's handlers,
// progress, a listen stream, cancellation, and what it refuses; the README's node:test example
// ("Testing your server") runs as pasted.

import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, test } from 'node:test'
import { mcpaxle, pkg, root, text } from './helpers.mjs'

const { Client, Server } = mcpaxle

function testServer() {
  const state = { cancelled: 0, started: 0 }
  const server = new Server({ name: 'in-memory', version: '1.0.0' })
    .tool({ name: 'greet', inputSchema: { type: 'object', properties: { who: { type: 'string' } } } }, ({ who }) => `Hello, ${who}!`)
    .tool({ name: 'ask_name' }, async (_args, ctx) => {
      const a = await ctx.elicit('name', {
        mode: 'form',
        message: 'Who are you?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      })
      return `Hello, ${a.content.name}!`
    })
    .tool({ name: 'progress' }, async (_args, ctx) => {
      for (let i = 1; i <= 3; i++) ctx.progress(i, 3)
      return 'progressed'
    })
    .tool({ name: 'wait' }, (_args, ctx) => {
      state.started++
      return new Promise((resolve) =>
        ctx.signal.addEventListener('abort', () => {
          state.cancelled++
          resolve('cancelled')
        }),
      )
    })
  return { server, state }
}

const onElicitation = async () => ({ action: 'accept', content: { name: 'Ada' } })

describe('Client.connectInMemory', () => {
  for (const [era, versions] of [
    ['modern', ['2026-07-28']],
    ['legacy', ['2025-11-25']],
  ]) {
    test(`${era} era: calls, asks, progress, a listen stream`, async () => {
      const { server } = testServer()
      const client = await Client.connectInMemory(server, { protocolVersions: versions, onElicitation })
      try {
        assert.equal(client.era, era)
        assert.equal(client.serverInfo.name, 'in-memory')
        assert.equal(text(await client.callTool('greet', { who: 'Bob' })), 'Hello, Bob!')
        assert.equal(text(await client.callTool('ask_name', {})), 'Hello, Ada!')
        const seen = []
        await client.callTool('progress', {}, { onProgress: (p) => seen.push(p.progress) })
        assert.deepEqual(seen, [1, 2, 3])
        const sub = await client.subscribe({ toolsListChanged: true })
        server.tool({ name: 'added' }, () => 'new')
        assert.equal((await sub.next()).value.method, 'notifications/tools/list_changed')
        sub.close()
      } finally {
        await client.close()
      }
    })
  }

  test('an aborted call is cancelled in the server', { timeout: 10_000 }, async () => {
    const { server, state } = testServer()
    const client = await Client.connectInMemory(server)
    try {
      const controller = new AbortController()
      const call = client.callTool('wait', {}, { signal: controller.signal })
      while (state.started === 0) await new Promise((r) => setImmediate(r))
      controller.abort()
      await assert.rejects(call, { kind: 'cancelled' })
      while (state.cancelled === 0) await new Promise((r) => setImmediate(r))
    } finally {
      await client.close()
    }
  })

  test('two clients share a server; a closed one fails alone', async () => {
    const { server } = testServer()
    const a = await Client.connectInMemory(server)
    const b = await Client.connectInMemory(server)
    await a.close()
    await assert.rejects(a.callTool('greet', { who: 'x' }))
    assert.equal(text(await b.callTool('greet', { who: 'B' })), 'Hello, B!')
    await b.close()
  })

  test("a handler's ctx serves while the handler runs, and is refused once it answered", async () => {
    let kept
    const server = new Server({ name: 'ctx-life', version: '1.0.0' })
      .tool({ name: 'keep' }, (_args, ctx) => {
        kept = ctx
        return 'kept'
      })
      .tool({ name: 'late' }, async (_args, ctx) => {
        await new Promise((r) => setImmediate(r))
        return `${ctx.method} after a turn`
      })
    const client = await Client.connectInMemory(server)
    try {
      assert.equal(text(await client.callTool('late', {})), 'tools/call after a turn')
      assert.equal(text(await client.callTool('keep', {})), 'kept')
      assert.throws(() => kept.method, { kind: 'usage', message: /this request is over/ })
    } finally {
      await client.close()
    }
  })

  test('it takes a Server', async () => {
    await assert.rejects(Client.connectInMemory({}), { kind: 'usage', message: /takes a Server/ })
    await assert.rejects(Client.connectInMemory(null), { kind: 'usage', message: /takes a Server, not null/ })
  })
})

test('the README example weather.test.mjs runs as pasted', { timeout: 60_000 }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpaxle-in-memory-'))
  try {
    execFileSync('python3', [path.join(root, 'packaging', 'quickstarts.py'), dir])
    fs.mkdirSync(path.join(dir, 'node_modules'))
    fs.symlinkSync(pkg, path.join(dir, 'node_modules', 'mcpaxle'), 'dir')
    // A test run of its own, not a subtest of this one (node --test marks its children).
    const env = { ...process.env }
    delete env.NODE_TEST_CONTEXT
    const out = execFileSync(process.execPath, ['--test', '--test-reporter=tap', 'weather.test.mjs'], { cwd: dir, env, timeout: 50_000, encoding: 'utf8' })
    assert.match(out, /^# pass 2$/m)
    assert.match(out, /^# fail 0$/m)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

// The client over stdio: the Rust everything server and the JavaScript fixture server as child
// processes, both eras, MRTR, subscriptions, cancellation, shutdown, and a server that dies in
// the middle of a call.

import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, test } from 'node:test'
import { EVERYTHING, JS_SERVER, alive, handlers, mcpaxle, sleep, text } from './helpers.mjs'

const { Client } = mcpaxle

async function waitGone(pid, ms = 5000) {
  const end = Date.now() + ms
  while (alive(pid) && Date.now() < end) await sleep(20)
  return !alive(pid)
}

describe('client over stdio (Rust everything server)', () => {
  test('modern era: discover probe, calls, MRTR, subscription, shutdown', async () => {
    const h = handlers()
    const client = await Client.connectStdio(EVERYTHING, ['--stdio'], { ...h, stderr: 'null' })
    const pid = client.pid
    try {
      assert.equal(client.era, 'modern')
      assert.ok(pid > 0 && alive(pid))
      assert.equal(client.serverInfo.name, 'mcpaxle-everything-server')
      assert.ok((await client.listAllTools()).length > 10)
      assert.equal(text(await client.callTool('test_simple_text', {})), 'This is a simple text response for testing.')
      assert.equal(text(await client.callTool('test_input_required_result_multiple_inputs', {})), 'Hello, Ada; 2 root(s)')
      const seen = []
      await client.callTool('test_tool_with_progress', {}, { onProgress: (p) => seen.push(p.progress) })
      assert.deepEqual(seen, [0, 50, 100])
      const r = await client.readResource('test://static-text')
      assert.match(r.contents[0].text, /static text resource/)
      const sub = await client.subscribe({ promptsListChanged: true })
      await client.callTool('test_trigger_prompt_change', {})
      assert.equal((await sub.next()).value.method, 'notifications/prompts/list_changed')
      sub.close()
      await client.callTool('test_trigger_prompt_change', {})
    } finally {
      await client.close()
    }
    assert.ok(await waitGone(pid), 'the server process is gone after close()')
  })

  test('legacy era (2025-11-25): initialize, server requests answered by the same handlers', async () => {
    const h = handlers()
    const client = await Client.connectStdio(EVERYTHING, ['--stdio'], { ...h, protocolVersions: ['2025-11-25'], stderr: 'null' })
    try {
      assert.equal(client.era, 'legacy')
      assert.equal(client.protocolVersion, '2025-11-25')
      const e = await client.callTool('test_elicitation', { message: 'Who are you?' })
      assert.match(text(e), /action=accept/)
      const s = await client.callTool('test_sampling', { prompt: 'Capital of France?' })
      assert.equal(text(s), 'LLM response: Paris')
      assert.deepEqual(h.calls, { elicitation: 1, sampling: 1, roots: 0 })
      const d = await client.discover()
      assert.deepEqual(d.supportedVersions, ['2025-11-25'])
      const sub = await client.subscribe({ resourceSubscriptions: ['test://watched-resource'] })
      await client.callTool('test_trigger_resource_update', {})
      const n = await sub.next()
      assert.equal(n.value.method, 'notifications/resources/updated')
      sub.close()
    } finally {
      await client.close()
    }
  })

  test('the server dies in the middle of a call: the call rejects promptly with TRANSPORT', async () => {
    let client
    let killedAt = 0
    client = await Client.connectStdio(EVERYTHING, ['--stdio'], {
      protocolVersions: ['2025-11-25'],
      stderr: 'null',
      // The server waits for this answer inside tools/call: kill it meanwhile.
      onElicitation: async () => {
        process.kill(client.pid, 'SIGKILL')
        killedAt = Date.now()
        await sleep(5000)
        return { action: 'decline' }
      },
    })
    try {
      await assert.rejects(client.callTool('test_elicitation', { message: 'x' }), { kind: 'transport' })
      assert.ok(Date.now() - killedAt < 2000, `rejected ${Date.now() - killedAt} ms after the kill`)
    } finally {
      await client.close()
    }
  })
})

describe('client over stdio (JavaScript fixture server)', () => {
  test('calls, cancellation with notifications/cancelled', async () => {
    const h = handlers()
    const client = await Client.connectStdio(process.execPath, [JS_SERVER, '--stdio'], { ...h })
    try {
      assert.equal(client.era, 'modern')
      assert.equal(client.serverInfo.name, 'js-fixture')
      assert.equal(text(await client.callTool('echo', { text: 'hi' })), 'hi')
      assert.equal(text(await client.callTool('ask_name', {})), 'Hello, Ada!')
      const controller = new AbortController()
      let started
      const progressed = new Promise((resolve) => (started = resolve))
      const call = client.callTool('slow', { ms: 30_000 }, { signal: controller.signal, onProgress: started })
      await progressed
      const t0 = Date.now()
      controller.abort()
      await assert.rejects(call, { kind: 'cancelled' })
      assert.ok(Date.now() - t0 < 1000)
      // The server was told (notifications/cancelled) and the connection is still good.
      let stats
      for (let i = 0; i < 50; i++) {
        stats = JSON.parse(text(await client.callTool('stats', {})))
        if (stats.cancelled === 1) break
        await sleep(20)
      }
      assert.equal(stats.cancelled, 1)
      assert.equal(text(await client.callTool('echo', { text: 'again' })), 'again')
    } finally {
      await client.close()
    }
  })

  test('the server is killed during a slow call: the call rejects promptly with TRANSPORT', async () => {
    const client = await Client.connectStdio(process.execPath, [JS_SERVER, '--stdio'])
    const pid = client.pid
    try {
      let started
      const progressed = new Promise((resolve) => (started = resolve))
      const call = client.callTool('slow', { ms: 30_000 }, { onProgress: started })
      await progressed
      const t0 = Date.now()
      process.kill(pid, 'SIGKILL')
      await assert.rejects(call, { kind: 'transport' })
      assert.ok(Date.now() - t0 < 1000, `rejected after ${Date.now() - t0} ms`)
      await assert.rejects(client.callTool('echo', { text: 'x' }), { kind: 'transport' })
    } finally {
      await client.close()
    }
  })

  test('the server gets a small environment unless inheritEnv', async () => {
    process.env.MCPAXLE_TEST_SECRET = 's3cret'
    const dump = async (options) => {
      const file = path.join(os.tmpdir(), `mcpaxle-env-${process.pid}-${options.inheritEnv ?? false}`)
      const script = `env > '${file}'; exec '${process.execPath}' '${JS_SERVER}' --stdio`
      const client = await Client.connectStdio('sh', ['-c', script], { env: { GIVEN: 'yes' }, ...options })
      await client.close()
      const text = fs.readFileSync(file, 'utf8')
      fs.rmSync(file, { force: true })
      return Object.fromEntries(text.split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))
    }
    try {
      const small = await dump({})
      assert.equal(small.GIVEN, 'yes')
      assert.equal(small.PATH, process.env.PATH)
      assert.equal(small.MCPAXLE_TEST_SECRET, undefined, 'the host environment stays out')
      const all = await dump({ inheritEnv: true })
      assert.equal(all.MCPAXLE_TEST_SECRET, 's3cret')
      assert.equal(all.GIVEN, 'yes')
    } finally {
      delete process.env.MCPAXLE_TEST_SECRET
    }
  })

  test('a command that does not exist fails to connect', async () => {
    await assert.rejects(Client.connectStdio('/nonexistent/mcp-server', []), { kind: 'transport' })
  })
})

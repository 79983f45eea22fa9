// Process lifecycle: a Node process exits by itself once its clients, subscriptions and
// servers are closed (nothing native keeps the event loop alive), and the conformance client
// exits at once on SIGTERM.

import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import net from 'node:net'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { EVERYTHING, JS_SERVER, pkg, runNode, startEverything } from './helpers.mjs'

const INDEX = JSON.stringify(path.join(pkg, 'index.js'))

/** A script that does `body`, prints `closed` and returns: the process must then exit at once. */
function script(body) {
  return `
    import { createRequire } from 'node:module'
    const { Client, Server } = createRequire(import.meta.url)(${INDEX})
    ${body}
    console.log('closed ' + Date.now())
  `
}

async function exitsAfterClose(body, env) {
  const r = await runNode(script(body), { env, timeoutMs: 15_000 })
  assert.equal(r.signal, null, `the process was killed (it did not exit by itself): ${r.stderr}`)
  assert.equal(r.code, 0, r.stderr)
  const closedAt = Number(/closed (\d+)/.exec(r.stdout)?.[1])
  const exitedAt = Date.now()
  assert.ok(closedAt > 0, r.stdout + r.stderr)
  // Exit within a second of closing (measured generously, from the parent).
  assert.ok(exitedAt - closedAt < 1000, `exited ${exitedAt - closedAt} ms after closing`)
}

describe('the process exits by itself once everything is closed', () => {
  let server
  before(async () => {
    server = await startEverything()
  })
  after(async () => {
    await server?.stop()
  })

  test('HTTP client: connect, call, close', () =>
    exitsAfterClose(`
      const c = await Client.connectHttp(process.env.URL, { onElicitation: async () => ({ action: 'accept', content: { name: 'x' } }) })
      await c.callTool('test_simple_text', {})
      await c.callTool('test_input_required_result_elicitation', {})
      await c.callTool('test_tool_with_progress', {}, { onProgress: () => {} })
      await c.close()
    `, { URL: server.url }))

  test('HTTP client with a subscription, closed', () =>
    exitsAfterClose(`
      const c = await Client.connectHttp(process.env.URL)
      const sub = await c.subscribe({ toolsListChanged: true })
      await c.callTool('test_trigger_tool_change', {})
      await sub.next()
      sub.close()
      await c.callTool('test_trigger_tool_change', {})
      await c.close()
    `, { URL: server.url }))

  test('stdio client: connect, call, close', () =>
    exitsAfterClose(`
      const c = await Client.connectStdio(process.env.SERVER, ['--stdio'], { stderr: 'null' })
      await c.callTool('test_simple_text', {})
      await c.close()
    `, { SERVER: EVERYTHING }))

  test('legacy HTTP session with its GET stream, closed', () =>
    exitsAfterClose(`
      const c = await Client.connectHttp(process.env.URL, { protocolVersions: ['2025-11-25'] })
      await c.callTool('test_simple_text', {})
      await c.close()
    `, { URL: server.url }))

  test('a JavaScript HTTP server, closed', () =>
    exitsAfterClose(`
      const s = new Server({ name: 'x', version: '1' }).tool({ name: 'echo' }, async () => 'e')
      const h = await s.serveHttp()
      const c = await Client.connectHttp(h.url)
      await c.callTool('echo', {})
      await c.close()
      await h.close()
    `))

  test('an open subscription keeps the process alive until closed', async () => {
    const r = await runNode(script(`
      const c = await Client.connectHttp(process.env.URL)
      const sub = await c.subscribe({ toolsListChanged: true })
      setTimeout(() => { sub.close(); c.close() }, 500)
      const t0 = Date.now()
      for await (const n of sub) {}
      if (Date.now() - t0 < 400) throw new Error('the loop ended early')
    `), { env: { URL: server.url } })
    assert.equal(r.code, 0, r.stderr)
  })

  test('a stdio server started by an unclosed client does not outlive the script', async () => {
    const r = await runNode(`
      import { createRequire } from 'node:module'
      const { Client } = createRequire(import.meta.url)(${INDEX})
      const c = await Client.connectStdio(process.execPath, [process.env.JS_SERVER, '--stdio'])
      console.log(c.pid)
    `, { env: { JS_SERVER } })
    assert.equal(r.code, 0, r.stderr)
    const pid = Number(r.stdout.trim())
    const end = Date.now() + 3000
    let gone = false
    while (!gone && Date.now() < end) {
      try {
        process.kill(pid, 0)
        await new Promise((resolve) => setTimeout(resolve, 50))
      } catch {
        gone = true
      }
    }
    assert.ok(gone, 'the server saw its stdin close and exited')
  })
})

describe('the conformance client', () => {
  test('exits at once on SIGTERM, leaving no child', async () => {
    // A server that accepts connections and never answers.
    const sockets = []
    const silent = net.createServer((s) => sockets.push(s))
    await new Promise((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${silent.address().port}/mcp`
    const child = spawn(process.execPath, [path.join(pkg, 'examples', 'everything_client.mjs'), url], {
      env: { ...process.env, MCP_CONFORMANCE_SCENARIO: 'tools_call', MCP_CONFORMANCE_PROTOCOL_VERSION: '2026-07-28' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, at: Date.now() })))
    const stdoutClosed = new Promise((resolve) => child.stdout.on('close', resolve))
    while (sockets.length === 0) await new Promise((resolve) => setTimeout(resolve, 20))
    const t0 = Date.now()
    child.kill('SIGTERM')
    const r = await exited
    await stdoutClosed
    assert.equal(r.code, 143)
    assert.ok(r.at - t0 < 1000, `exited ${r.at - t0} ms after SIGTERM`)
    for (const s of sockets) s.destroy()
    silent.close()
  })
})

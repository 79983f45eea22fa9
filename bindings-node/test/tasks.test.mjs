// Tools that run as tasks of the Tasks extension (`taskSupport`), served by a JavaScript server
// and called by the Node client over Streamable HTTP: the client follows each task to its result
// (polling `tasks/get`, answering input requests through `tasks/update`), the handler sees its
// task id, its asks are answered by the client's input handlers, `tasks/cancel` aborts its
// `ctx.signal`, a protocol error fails the task, and `deferTask` starts the task on request.
// The explicit handle (`callToolAsTask`, `task`) polls, follows and cancels such a task.

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { handlers, mcpaxle, sleep, text } from './helpers.mjs'

const { Client, ErrorKind, McpError, Server } = mcpaxle
const NO_ARGS = { type: 'object', properties: {} }

describe('tasks (taskSupport) in a JavaScript server', () => {
  let handle
  let client
  const seen = { taskIds: {}, aborted: false, started: null, waitsAborted: false }
  const h = handlers()
  before(async () => {
    const server = new Server({ name: 'tasks', version: '1.0.0', tasks: { pollIntervalMs: 20 } })
    server
      .tool({ name: 'plain', inputSchema: NO_ARGS }, (_a, ctx) => {
        seen.taskIds.plain = ctx.taskId
        return 'plain'
      })
      .tool(
        { name: 'job', inputSchema: NO_ARGS },
        async (_a, ctx) => {
          seen.taskIds.job = ctx.taskId
          ctx.progress(1, 2, 'half-way')
          await sleep(50)
          return 'job done'
        },
        { taskSupport: 'optional' },
      )
      .tool(
        { name: 'ask', inputSchema: NO_ARGS },
        async (_a, ctx) => {
          const answer = await ctx.elicit('name', { mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } })
          return `Hello, ${answer.content.name}!`
        },
        { taskSupport: 'required' },
      )
      .tool(
        { name: 'forever', inputSchema: NO_ARGS },
        async (_a, ctx) => {
          await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))
          seen.aborted = true
          return 'stopped'
        },
        { taskSupport: 'optional' },
      )
      .tool(
        { name: 'broken', inputSchema: NO_ARGS },
        async () => {
          throw new McpError(ErrorKind.INVALID_PARAMS, 'bad input for the job')
        },
        { taskSupport: 'optional' },
      )
      .tool(
        { name: 'deferred', inputSchema: NO_ARGS },
        async (_a, ctx) => {
          const before = ctx.taskId
          seen.started = await ctx.startTask()
          return `before: ${before ?? 'none'}, after: ${ctx.taskId == null ? 'none' : 'a task'}`
        },
        { taskSupport: 'optional', deferTask: true },
      )
      .tool(
        { name: 'waits', inputSchema: NO_ARGS },
        async (_a, ctx) => {
          await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))
          seen.waitsAborted = true
          return 'stopped'
        },
        { taskSupport: 'optional' },
      )
    handle = await server.serveHttp({ host: '127.0.0.1', port: 0 })
    client = await Client.connectHttp(handle.url, { cache: false, onElicitation: h.onElicitation })
  })
  after(async () => {
    await client?.close()
    await handle?.close()
  })

  test('a task runs the handler with its id and the client gets the result', async () => {
    assert.equal(text(await client.callTool('job', {})), 'job done')
    assert.match(seen.taskIds.job, /^[A-Za-z0-9_-]{16,}$/, 'an unguessable task id')
    assert.equal(text(await client.callTool('plain', {})), 'plain')
    assert.equal(seen.taskIds.plain, undefined, 'an ordinary call has no task id')
  })

  test("a task's ask is answered by the client's input handler", async () => {
    const before = h.calls.elicitation
    assert.equal(text(await client.callTool('ask', {})), 'Hello, Ada!')
    assert.equal(h.calls.elicitation, before + 1)
  })

  test('aborting the call cancels the task and aborts the handler', async () => {
    const controller = new AbortController()
    const pending = client.callTool('forever', {}, { signal: controller.signal })
    await sleep(200)
    controller.abort()
    await assert.rejects(pending, (e) => e.kind === 'cancelled')
    const end = Date.now() + 5000
    while (!seen.aborted && Date.now() < end) await sleep(20)
    assert.ok(seen.aborted, "tasks/cancel did not reach the handler's signal")
  })

  test('a protocol error fails the task with that error', async () => {
    await assert.rejects(client.callTool('broken', {}), (e) => e.kind === 'invalid_params' && /bad input for the job/.test(e.message))
  })

  test('deferTask: the call becomes a task when the handler starts it', async () => {
    assert.equal(text(await client.callTool('deferred', {})), 'before: none, after: a task')
    assert.equal(seen.started, true)
  })

  async function statusUntil(task, status) {
    const end = Date.now() + 10000
    for (;;) {
      const current = await task.status()
      if (current.status === status) return current
      assert.ok(Date.now() < end, `task ${task.taskId} stayed ${current.status}, never ${status}`)
      await sleep(20)
    }
  }

  test('callToolAsTask: the handle shows the input request, result() answers it and follows the task', async () => {
    const task = await client.callToolAsTask('ask', {})
    assert.match(task.taskId, /^[A-Za-z0-9_-]{16,}$/)
    const waiting = await statusUntil(task, 'input_required')
    assert.equal(waiting.taskId, task.taskId)
    assert.equal(waiting.inputRequests.name.method, 'elicitation/create')
    assert.equal(text(await task.result()), 'Hello, Ada!')
    const done = await task.status()
    assert.equal(done.status, 'completed')
    assert.equal(text(done.result), 'Hello, Ada!')
    // Picked up again from its id alone, by another client (as after a restart).
    const other = await Client.connectHttp(handle.url, { cache: false })
    try {
      assert.equal(text(await other.task(task.taskId).result()), 'Hello, Ada!')
    } finally {
      await other.close()
    }
  })

  test('subscribe({ taskIds }): the caller\'s task on a listen stream, each change a notifications/tasks', async () => {
    const task = await client.callToolAsTask('ask', {})
    const sub = await client.subscribe({ taskIds: [task.taskId, 'someone-elses'] })
    try {
      assert.deepEqual(sub.acknowledged, { taskIds: [task.taskId] })
      const seen = []
      for await (const n of sub) {
        assert.equal(n.method, 'notifications/tasks')
        assert.equal(n.params.taskId, task.taskId)
        assert.notEqual(n.params.status, 'failed', JSON.stringify(n.params))
        seen.push(n.params.status)
        if (n.params.status === 'input_required') {
          const answer = { action: 'accept', content: { name: 'Grace' } }
          await client.request('tasks/update', { taskId: task.taskId, inputResponses: { name: answer } })
        }
        if (n.params.status === 'completed') {
          assert.equal(text(n.params.result), 'Hello, Grace!')
          break
        }
      }
      assert.ok(seen.includes('input_required'), seen.join())
    } finally {
      await sub.close()
    }
  })

  test('callToolAsTask: a failed task, and a tool that answers at once', async () => {
    const failing = await client.callToolAsTask('broken', {})
    await assert.rejects(failing.result(), (e) => e.kind === 'invalid_params' && /bad input for the job/.test(e.message))
    assert.equal((await failing.status()).error.code, -32602)
    const atOnce = await client.callToolAsTask('plain', {})
    assert.equal(atOnce.taskId, undefined)
    assert.equal(text(await atOnce.result()), 'plain')
    await assert.rejects(atOnce.status(), (e) => e.kind === 'usage')
    await atOnce.cancel()
  })

  test('callToolAsTask: aborting a wait leaves the task running; cancel() cancels it', async () => {
    const task = await client.callToolAsTask('waits', {})
    const controller = new AbortController()
    const waiting = task.result({ signal: controller.signal })
    await sleep(100)
    controller.abort()
    await assert.rejects(waiting, (e) => e.kind === 'cancelled')
    await sleep(100)
    assert.equal(seen.waitsAborted, false)
    const again = client.task(task.taskId)
    assert.equal((await again.status()).status, 'working')
    await again.cancel()
    await statusUntil(again, 'cancelled')
    await assert.rejects(again.result(), (e) => e.kind === 'cancelled')
    const end = Date.now() + 5000
    while (!seen.waitsAborted && Date.now() < end) await sleep(20)
    assert.ok(seen.waitsAborted, "tasks/cancel did not reach the handler's signal")
    await assert.rejects(client.task('not-a-task').status(), (e) => e.kind === 'invalid_params')
  })

  test('bad task options are usage errors naming the option', () => {
    const s = new Server({ name: 'x', version: '1' })
    assert.throws(() => s.tool({ name: 't', inputSchema: NO_ARGS }, () => 'x', { taskSupport: 'sometimes' }), (e) => e.kind === 'usage' && /taskSupport/.test(e.message))
    assert.throws(() => new Server({ name: 'x', version: '1', tasks: { ttlMs: 0 } }), (e) => e.kind === 'usage' && /ttlMs/.test(e.message))
  })
})

// An AbortSignal on every client method: `discover`, the lists, `complete` and `subscribe`,
// against a server that never answers (test/fixtures/blocking_server.mjs). Aborting rejects
// the call at once with CANCELLED, and the server sees the protocol's cancellation: the
// request's stream closed (Streamable HTTP), `notifications/cancelled` (stdio, both eras).

import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { here, mcpaxle, sleep } from './helpers.mjs'
import { startBlockingHttp } from './fixtures/blocking_server.mjs'

const { Client } = mcpaxle
const BLOCKING_SERVER = path.join(here, 'fixtures', 'blocking_server.mjs')

/** Waits (at most 5 s) for an event of `events()` matching `match`; returns it. */
async function eventOf(events, match) {
  const end = Date.now() + 5000
  for (;;) {
    const e = events().find((e) => Object.entries(match).every(([k, v]) => e[k] === v))
    if (e) return e
    if (Date.now() > end) assert.fail(`no event ${JSON.stringify(match)} in ${JSON.stringify(events())}`)
    await sleep(10)
  }
}

// Each method with a signal, and the request it sends.
const CALLS = [
  ['discover', 'server/discover', (c, signal) => c.discover({ signal })],
  ['listTools', 'tools/list', (c, signal) => c.listTools(undefined, { signal })],
  ['listAllTools', 'tools/list', (c, signal) => c.listAllTools({ signal })],
  ['listResources', 'resources/list', (c, signal) => c.listResources('page-2', { signal })],
  ['listAllResources', 'resources/list', (c, signal) => c.listAllResources({ signal })],
  ['listResourceTemplates', 'resources/templates/list', (c, signal) => c.listResourceTemplates(undefined, { signal })],
  ['listAllResourceTemplates', 'resources/templates/list', (c, signal) => c.listAllResourceTemplates({ signal })],
  ['listPrompts', 'prompts/list', (c, signal) => c.listPrompts(undefined, { signal })],
  ['listAllPrompts', 'prompts/list', (c, signal) => c.listAllPrompts({ signal })],
  ['complete', 'completion/complete', (c, signal) => c.complete({ type: 'ref/prompt', name: 'p' }, { name: 'a', value: 'x' }, undefined, { signal })],
  ['subscribe', 'subscriptions/listen', (c, signal) => c.subscribe({ toolsListChanged: true }, { signal })],
]

/**
 * Starts `call` with a signal, waits until the server holds its request, aborts: the call
 * rejects with CANCELLED (the abort reason as its cause) within a second. Returns the event of
 * the held request.
 */
async function abortWhileHeld(client, events, method, call) {
  const controller = new AbortController()
  const before = events().length
  const pending = call(client, controller.signal)
  const received = await eventOf(() => events().slice(before), { event: 'received', method })
  const t0 = Date.now()
  const reason = new Error('never mind')
  controller.abort(reason)
  const outcome = await Promise.race([
    pending.then((value) => ({ value }), (error) => ({ error })),
    sleep(2000).then(() => ({ late: true })),
  ])
  assert.ok(!outcome.late, 'the call did not settle within 2 s of the abort')
  assert.ok(outcome.error, `the call resolved: ${JSON.stringify(outcome.value)}`)
  assert.equal(outcome.error.kind, 'cancelled')
  assert.equal(outcome.error.cause, reason)
  assert.ok(Date.now() - t0 < 1000, `the call took ${Date.now() - t0} ms to reject`)
  return received
}

describe('AbortSignal on every client method, Streamable HTTP', () => {
  let server
  let client
  before(async () => {
    server = await startBlockingHttp()
    client = await Client.connectHttp(server.url, { cache: false })
  })
  after(async () => {
    await client?.close()
    await server?.close()
  })

  for (const [name, method, call] of CALLS) {
    test(`${name}: aborting closes the request's stream`, async () => {
      const received = await abortWhileHeld(client, () => server.events, method, call)
      await eventOf(() => server.events, { event: 'closed', id: received.id })
    })
  }

  test('a signal aborted before the call rejects at once, sending nothing', async () => {
    const controller = new AbortController()
    controller.abort(new Error('too late'))
    const sent = server.events.length
    for (const [, , call] of CALLS) {
      await assert.rejects(call(client, controller.signal), (e) => {
        assert.equal(e.kind, 'cancelled')
        assert.equal(e.cause.message, 'too late')
        return true
      })
    }
    await sleep(50)
    assert.deepEqual(server.events.slice(sent), [])
  })

  test('a call whose signal is never aborted is not affected by it', async () => {
    const s = await startBlockingHttp({ acknowledge: true })
    const c = await Client.connectHttp(s.url, { cache: false })
    try {
      const sub = await c.subscribe({ toolsListChanged: true }, { signal: new AbortController().signal })
      assert.equal(sub.acknowledged.toolsListChanged, true)
      sub.close()
    } finally {
      await c.close()
      await s.close()
    }
  })
})

describe('AbortSignal on an open subscription', () => {
  test('aborting after the acknowledgment closes the subscription and its stream', async () => {
    const server = await startBlockingHttp({ acknowledge: true })
    const client = await Client.connectHttp(server.url, { cache: false })
    try {
      const controller = new AbortController()
      const sub = await client.subscribe({ toolsListChanged: true }, { signal: controller.signal })
      assert.equal(sub.acknowledged.toolsListChanged, true)
      const next = sub.next()
      controller.abort()
      assert.deepEqual(await next, { value: undefined, done: true })
      await eventOf(() => server.events, { event: 'closed', method: 'subscriptions/listen' })
    } finally {
      await client.close()
      await server.close()
    }
  })
})

for (const legacy of [false, true]) {
  const era = legacy ? 'legacy' : 'modern'
  describe(`AbortSignal on every client method, stdio, ${era} era`, () => {
    let dir
    let eventsFile
    let client
    const events = () =>
      fs.existsSync(eventsFile) ? fs.readFileSync(eventsFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []
    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpaxle-cancel-'))
      eventsFile = path.join(dir, 'events.jsonl')
      const args = [BLOCKING_SERVER, ...(legacy ? ['--legacy'] : [])]
      client = await Client.connectStdio(process.execPath, args, { cache: false, env: { BLOCKING_EVENTS: eventsFile } })
      assert.equal(client.era, era)
    })
    after(async () => {
      await client?.close()
      fs.rmSync(dir, { recursive: true, force: true })
    })

    // In a legacy session `discover` is answered from `initialize` (nothing is sent), and
    // `subscribe` sends `resources/subscribe` for each URI.
    const calls = legacy
      ? [
          ...CALLS.filter(([name]) => name !== 'discover' && name !== 'subscribe'),
          ['subscribe', 'resources/subscribe', (c, signal) => c.subscribe({ resourceSubscriptions: ['test://r'] }, { signal })],
        ]
      : CALLS
    for (const [name, method, call] of calls) {
      test(`${name}: aborting sends notifications/cancelled`, async () => {
        const received = await abortWhileHeld(client, events, method, call)
        const cancelled = await eventOf(events, { event: 'cancelled', id: received.id })
        assert.equal(cancelled.method, method)
      })
    }
  })
}

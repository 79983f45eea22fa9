// The `bus` option: Node servers of a fleet share change announcements through a real Redis
// (the pinned Debian redis-server installed by scripts/debian-tool.sh, started and stopped
// here on 127.0.0.1).

import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import net from 'node:net'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { mcpaxle } from './helpers.mjs'

const { Server, Client } = mcpaxle
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })

const listening = (port) =>
  new Promise((resolve) => {
    const c = net.connect(port, '127.0.0.1', () => {
      c.destroy()
      resolve(true)
    })
    c.on('error', () => resolve(false))
  })

let redis
let redisUrl
before(async () => {
  const exe = execFileSync('bash', [path.join(root, 'scripts', 'debian-tool.sh'), 'redis-server'], { encoding: 'utf8' }).trim()
  const port = await freePort()
  redis = spawn(exe, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  const deadline = Date.now() + 10_000
  while (!(await listening(port))) {
    assert.ok(Date.now() < deadline, 'redis-server did not listen within 10 s')
    await sleep(20)
  }
  redisUrl = `redis://127.0.0.1:${port}/0`
})
after(() => redis?.kill('SIGKILL'))

test('a bad bus is refused at once with the core message', () => {
  assert.throws(() => new Server({ name: 'x', version: '1', bus: 'http://127.0.0.1:6379' }), /is not a Redis URL/)
  assert.throws(() => new Server({ name: 'x', version: '1', bus: { url: 'redis://127.0.0.1/0', channel: '' } }), /must not be empty/)
})

test('a change on one instance reaches a listener of another', async () => {
  const bus = { url: redisUrl, channel: 'node:fleet' }
  const a = new Server({ name: 'a', version: '1', bus, enable: ['tools'] })
  const b = new Server({ name: 'b', version: '1', bus, enable: ['tools'] })
  const httpA = await a.serveHttp({ port: 0 })
  const httpB = await b.serveHttp({ port: 0 })
  const client = await Client.connectHttp(httpB.url)
  try {
    const sub = await client.subscribe({ toolsListChanged: true })
    // The bus subscribes to Redis in the background: add tools on a until b's listener hears
    // one (each try is a new change), within 10 s.
    const deadline = Date.now() + 10_000
    const pending = sub.next()
    let n
    for (let i = 0; !n; i++) {
      a.tool({ name: `made_on_a_${i}` }, async () => 'ok')
      const next = await Promise.race([pending, sleep(200).then(() => null)])
      if (next) n = next.value
      else assert.ok(Date.now() < deadline, 'no change from a reached b within 10 s')
    }
    assert.equal(n.method, 'notifications/tools/list_changed')
    sub.close()
    // Now that both are connected, a fresh subscription hears the next change at once.
    const fresh = await client.subscribe({ toolsListChanged: true })
    a.tool({ name: 'made_on_a_last' }, async () => 'ok')
    const last = await Promise.race([fresh.next(), sleep(5000).then(() => null)])
    assert.ok(last, 'no change within 5 s')
    assert.equal(last.value.method, 'notifications/tools/list_changed')
    fresh.close()
  } finally {
    await client.close()
    await httpA.close()
    await httpB.close()
  }
})

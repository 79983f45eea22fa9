// Helpers of the node:test suite: the Rust everything and OAuth servers (target/release/examples),
// the JavaScript fixture server, free ports, child Node processes with a deadline.

import { spawn } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

export const here = path.dirname(fileURLToPath(import.meta.url))
export const pkg = path.resolve(here, '..')
export const root = path.resolve(pkg, '..')
export const require = createRequire(import.meta.url)
export const mcpaxle = require('../index.js')

/** The Rust everything server (`make test-servers`, a debug build). */
export const EVERYTHING = process.env.MCPAXLE_EVERYTHING_SERVER ?? path.join(root, 'target', 'debug', 'examples', 'everything_server')
export const JS_SERVER = path.join(here, 'fixtures', 'js_server.mjs')
/** The Rust OAuth-protected server with its own authorization server (`make test-servers`). */
export const OAUTH_SERVER = process.env.MCPAXLE_OAUTH_SERVER ?? path.join(root, 'target', 'debug', 'oauth_server')

if (!fs.existsSync(EVERYTHING)) {
  throw new Error(`${EVERYTHING} is missing: run \`make test-servers\``)
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

export async function waitForPort(port, deadlineMs = 10_000) {
  const end = Date.now() + deadlineMs
  while (Date.now() < end) {
    const ok = await new Promise((resolve) => {
      const c = net.connect(port, '127.0.0.1')
      c.once('connect', () => {
        c.destroy()
        resolve(true)
      })
      c.once('error', () => resolve(false))
    })
    if (ok) return
    await sleep(25)
  }
  throw new Error(`nothing listens on port ${port}`)
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts the Rust everything server over HTTP: `{url, proc, stop()}`. */
export async function startEverything() {
  const port = await freePort()
  const proc = spawn(EVERYTHING, ['--http', `127.0.0.1:${port}`], { stdio: ['ignore', 'ignore', 'inherit'] })
  await waitForPort(port)
  return { url: `http://127.0.0.1:${port}/mcp`, proc, stop: () => stop(proc) }
}

/**
 * Starts the Rust OAuth server (`--token-ttl` seconds when given): `{url, issuer, proc,
 * stats(), stop()}`; `stats()` fetches its counters (`authorizations`, `token_requests`,
 * `refreshes`, `registrations`).
 */
export async function startOAuthServer({ tokenTtl } = {}) {
  if (!fs.existsSync(OAUTH_SERVER)) {
    throw new Error(`${OAUTH_SERVER} is missing: run \`cargo build --release -p mcpaxle-fixtures\``)
  }
  const port = await freePort()
  const args = ['--http', `127.0.0.1:${port}`]
  if (tokenTtl != null) args.push('--token-ttl', String(tokenTtl))
  const proc = spawn(OAUTH_SERVER, args, { stdio: ['ignore', 'ignore', 'inherit'] })
  await waitForPort(port)
  const issuer = `http://127.0.0.1:${port}`
  const stats = async () => (await fetch(`${issuer}/stats`)).json()
  return { url: `${issuer}/mcp`, issuer, proc, stats, stop: () => stop(proc) }
}

/** Starts the JavaScript fixture server over HTTP in a child process: `{url, proc, stop()}`. */
export async function startJsServer() {
  const proc = spawn(process.execPath, [JS_SERVER, '--http'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const url = await new Promise((resolve, reject) => {
    let out = ''
    proc.stdout.on('data', (d) => {
      out += d
      const nl = out.indexOf('\n')
      if (nl >= 0) resolve(out.slice(0, nl))
    })
    proc.once('exit', (code) => reject(new Error(`the fixture server exited (${code})`)))
  })
  return { url, proc, stop: () => stop(proc) }
}

export function stop(proc) {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    proc.once('exit', resolve)
    proc.kill('SIGTERM')
    setTimeout(() => proc.kill('SIGKILL'), 3000).unref()
  })
}

/** Whether a process exists. */
export function alive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Runs a Node script (ESM source); resolves `{code, signal, stdout, stderr, ms}`. */
export function runNode(source, { env = {}, timeoutMs = 15_000 } = {}) {
  return new Promise((resolve) => {
    const t0 = Date.now()
    const proc = spawn(process.execPath, ['--input-type=module', '-e', source], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: pkg,
    })
    let stdout = ''
    let stderr = ''
    proc.stdout.on('data', (d) => (stdout += d))
    proc.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs)
    proc.on('exit', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr, ms: Date.now() - t0, proc })
    })
  })
}

/**
 * Answers of the input handlers, counting calls: client options to spread into `connect*`;
 * `calls` is not enumerable, so it is not passed as an (unknown) option.
 */
export function handlers() {
  const calls = { elicitation: 0, sampling: 0, roots: 0 }
  const options = {
    onElicitation: async (params) => {
      calls.elicitation++
      return { action: 'accept', content: { name: 'Ada', username: 'ada', email: 'ada@example.com' } }
    },
    onSampling: async () => {
      calls.sampling++
      return { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'test-model', stopReason: 'endTurn' }
    },
    onRoots: async () => {
      calls.roots++
      return { roots: [{ uri: 'file:///tmp/a', name: 'a' }, { uri: 'file:///tmp/b', name: 'b' }] }
    },
  }
  return Object.defineProperty(options, 'calls', { value: calls, enumerable: false })
}

export const text = (result) => result.content.map((c) => c.text ?? '').join('')

/** The table shared with the core, Python and C (tests/auth_option_cases.json): invalid auth
 * options and verifier answers, and what the core says of each. */
export const AUTH_CASES = JSON.parse(fs.readFileSync(path.join(root, 'tests', 'auth_option_cases.json'), 'utf8'))

/** `valid` with the members of `set` applied, a null removing one (a case of AUTH_CASES). */
export function overlay(valid, set) {
  const o = { ...valid }
  for (const [k, v] of Object.entries(set)) {
    if (v === null) delete o[k]
    else o[k] = v
  }
  return o
}

/** Whether `message` says `<prefix>.<path>: <expected>` (`<prefix>: <expected>` for an empty path). */
export function says(message, prefix, casePath, expected) {
  return message.includes(casePath === '' ? `${prefix}: ${expected}` : `${prefix}.${casePath}: ${expected}`)
}

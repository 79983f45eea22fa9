'use strict'
// The server mounted in the application's own HTTP server: a `node:http` request listener
// (Express, Fastify, plain `http.createServer`) and a fetch handler (Hono, Bun, Deno, workers),
// over one native `NativeMount` (src/mount.rs) each. Every request goes whole to the core
// (`McpService::handle_routed`, the same endpoint as `serveHttp`'s); its answer is streamed back
// chunk by chunk as the core yields it, and a client that goes away cancels its request.

const native = require('../native.js')
const { McpError, ErrorKind, rethrow } = require('./errors.js')

/** Statuses whose response has no body (fetch refuses one). */
const NULL_BODY = new Set([101, 204, 205, 304])

/**
 * The request body, at most `limit + 1` bytes: past the endpoint's `maxBody` the core answers
 * `413` without the rest being read. A body a parser already read (`express.json()`,
 * `express.raw()`, `express.text()`) is taken from `req.body`, re-encoded as JSON if parsed
 * (none if the stream was read but `req.body` not set).
 */
function nodeBody(req, limit) {
  if ((req.body !== undefined && req._body === true) || req.readableEnded) {
    const b = req.body
    if (b === undefined) return Promise.resolve(Buffer.alloc(0))
    if (Buffer.isBuffer(b)) return Promise.resolve(b)
    if (typeof b === 'string') return Promise.resolve(Buffer.from(b))
    return Promise.resolve(Buffer.from(JSON.stringify(b)))
  }
  return new Promise((resolve, reject) => {
    const chunks = []
    let size = 0
    const done = () => {
      req.off('data', onData)
      req.off('end', done)
      req.off('error', reject)
      resolve(Buffer.concat(chunks))
    }
    const onData = (chunk) => {
      chunks.push(chunk)
      size += chunk.length
      if (size > limit) {
        req.pause()
        done()
      }
    }
    req.on('data', onData)
    req.once('end', done)
    req.once('error', reject)
  })
}

/** The same for a fetch `Request`. */
async function fetchBody(request, limit) {
  if (request.body == null) return Buffer.alloc(0)
  const reader = request.body.getReader()
  const chunks = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength))
    size += value.byteLength
    if (size > limit) {
      reader.cancel().catch(() => {})
      break
    }
  }
  return Buffer.concat(chunks)
}

/** Resolves when `res` can take more, or when it closed. */
function drained(res) {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done)
      res.off('close', done)
      resolve()
    }
    res.on('drain', done)
    res.on('close', done)
  })
}

/** The failure of a mounted request before its response started, as a plain-text status. */
function failed(res, e) {
  if (res.headersSent) {
    res.destroy(e)
    return
  }
  const status = e instanceof McpError && e.kind === ErrorKind.USAGE ? 400 : 500
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' })
  res.end(`${status === 400 ? 'Bad Request' : 'Internal Server Error'}: ${e.message}`)
}

/** A `node:http` request listener serving `mount`. */
function nodeHandler(mount) {
  const limit = mount.maxBody
  const handler = (req, res) => {
    const token = new native.CancelToken()
    // The client went away before the whole response was sent: drop the request.
    res.once('close', () => {
      if (!res.writableFinished) token.cancel()
    })
    ;(async () => {
      const body = await nodeBody(req, limit)
      if (token.cancelled) return
      const request = {
        method: req.method,
        url: req.originalUrl ?? req.url,
        headers: req.rawHeaders,
        body,
        remoteAddress: req.socket?.remoteAddress,
        remotePort: req.socket?.remotePort,
      }
      const r = await mount.handle(request, token).catch(rethrow)
      res.writeHead(r.status, r.headers)
      // An SSE stream's head goes out at once, before its first event.
      res.flushHeaders()
      for (;;) {
        const chunk = await r.next()
        if (chunk === null || res.destroyed) break
        if (!res.write(chunk)) await drained(res)
      }
      r.close()
      res.end()
    })().catch((e) => {
      if (!token.cancelled) failed(res, e)
    })
  }
  handler.close = () => mount.close()
  return handler
}

/** The client's address from a fetch handler's second argument, whatever the runtime's shape. */
function remote(info) {
  if (info == null) return {}
  if (typeof info.remoteAddress === 'string') return { remoteAddress: info.remoteAddress, remotePort: info.remotePort }
  const a = info.remoteAddr // Deno
  if (a != null && typeof a.hostname === 'string') return { remoteAddress: a.hostname, remotePort: a.port }
  return {}
}

/** A fetch handler serving `mount`. */
function fetchHandler(mount) {
  const limit = mount.maxBody
  const handler = async (request, info) => {
    const token = new native.CancelToken()
    const signal = request.signal
    const abort = () => token.cancel()
    signal?.addEventListener('abort', abort, { once: true })
    const url = new URL(request.url)
    const headers = []
    for (const [name, value] of request.headers) headers.push(name, value)
    if (!request.headers.has('host')) headers.push('host', url.host)
    let r
    try {
      const body = await fetchBody(request, limit)
      const routed = { method: request.method, url: url.pathname + url.search, headers, body, ...remote(info) }
      r = await mount.handle(routed, token).catch(rethrow)
    } catch (e) {
      signal?.removeEventListener('abort', abort)
      // The request was aborted (its request cancelled): nobody reads this answer.
      if (token.cancelled) return new Response(null, { status: 499 })
      if (!(e instanceof McpError) || e.kind !== ErrorKind.USAGE) throw e
      return new Response(`Bad Request: ${e.message}`, { status: 400, headers: { 'content-type': 'text/plain; charset=utf-8' } })
    }
    const out = new Headers()
    const h = r.headers
    for (let i = 0; i + 1 < h.length; i += 2) out.append(h[i], h[i + 1])
    const finish = () => {
      signal?.removeEventListener('abort', abort)
      r.close()
    }
    if (NULL_BODY.has(r.status)) {
      finish()
      return new Response(null, { status: r.status, headers: out })
    }
    const body = new ReadableStream({
      async pull(controller) {
        const chunk = await r.next()
        if (chunk === null) {
          finish()
          controller.close()
        } else {
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength))
        }
      },
      cancel: finish,
    })
    return new Response(body, { status: r.status, headers: out })
  }
  handler.close = () => mount.close()
  return handler
}

module.exports = { nodeHandler, fetchHandler }

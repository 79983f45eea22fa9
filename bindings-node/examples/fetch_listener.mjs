// A fetch handler (`(Request) => Promise<Response>`) behind `node:http`: what Hono's Node
// adapter, Bun or Deno do, in a dozen lines (the request body streamed in, the response body
// streamed out, the request's signal aborted when the client goes away). Node has no fetch
// server of its own; the everything server's `--fetch` mode and the mount tests use this.

import { Readable } from 'node:stream'

/** A `node:http` request listener that serves `handler`. */
export function fetchListener(handler) {
  return async (req, res) => {
    const controller = new AbortController()
    res.once('close', () => {
      if (!res.writableFinished) controller.abort()
    })
    const headers = new Headers()
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1])
    const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : Readable.toWeb(req)
    const request = new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body, duplex: 'half', signal: controller.signal })
    const response = await handler(request, { remoteAddress: req.socket.remoteAddress, remotePort: req.socket.remotePort })
    res.writeHead(response.status, [...response.headers].flat())
    res.flushHeaders()
    try {
      if (response.body != null) for await (const chunk of response.body) res.write(chunk)
    } catch {
      // The client went away.
    }
    res.end()
  }
}

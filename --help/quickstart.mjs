// quickstart.mjs: a server with one tool and a client calling it (node quickstart.mjs)
import { Client, Server } from 'mcpaxle'

const server = new Server({ name: 'weather', version: '1.0.0' })
server.tool(
  { name: 'forecast', description: 'Forecast for a city',
    inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
  async ({ city }, ctx) => {
    ctx.progress(50, 100, 'looking outside')
    return `Sunny in ${city}`
  },
)
const handle = await server.serveHttp({ port: 0 })       // any free port; endpoint /mcp

const client = await Client.connectHttp(handle.url, {
  requestTimeoutMs: 30_000,
  // Input handlers declare the client's capabilities and answer the server's asks
  // (multi round-trip requests, or a legacy session's requests).
  onElicitation: async (req) => ({ action: 'accept', content: { name: 'Ada' } }),
})
for (const tool of await client.listAllTools()) console.log(tool.name)

const controller = new AbortController()
const result = await client.callTool('forecast', { city: 'Paris' }, {
  signal: controller.signal,            // abort() cancels the call on the server too
  onProgress: (p) => console.log(p.progress, p.total),
})
console.log(result.content)

const sub = await client.subscribe({ toolsListChanged: true })
server.tool({ name: 'alerts', inputSchema: { type: 'object' } }, async () => 'none')  // subscribers are told
for await (const n of sub) { console.log(n.method); break }   // break closes it

await client.close()
await handle.close()                      // the process then exits by itself

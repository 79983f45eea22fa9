// Compiled (never run) by scripts/check-dts.mjs: code a user would write type-checks against
// index.d.ts.
import { Client, Server, McpError, ToolError, ErrorCode, applySchemaDefaults, SUPPORTED_VERSIONS, type BearerAuthOptions, type CallToolResult, type ConnectionLimits, type OAuthOptions } from '../index'

async function client(): Promise<void> {
  const c = await Client.connectHttp('http://127.0.0.1:3000/mcp', {
    headers: { Authorization: 'Bearer t' },
    requestTimeoutMs: 5000,
    cache: true,
    clientInfo: { name: 'app', version: '1.0.0' },
    onElicitation: async (req) => ({ action: 'accept', content: applySchemaDefaults(req.requestedSchema ?? {}, {}) }),
    onSampling: async () => ({ role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' }),
    onRoots: () => ({ roots: [{ uri: 'file:///tmp' }] }),
  })
  const era: 'modern' | 'legacy' = c.era
  const tools = await c.listAllTools()
  const page = await c.listTools()
  const controller = new AbortController()
  const r: CallToolResult = await c.callTool(tools[0].name, { a: 1 }, {
    signal: controller.signal,
    timeoutMs: 1000,
    onProgress: (p) => console.log(p.progress, p.total),
  })
  await c.readResource('test://x')
  await c.getPrompt('p', { a: 'b' })
  await c.complete({ type: 'ref/prompt', name: 'p' }, { name: 'a', value: 'x' })
  await c.discover()
  const sub = await c.subscribe({ toolsListChanged: true })
  for await (const n of sub) {
    console.log(n.method)
    break
  }
  sub.close()
  c.onElicitation(async () => ({ action: 'decline' }))
  try {
    await c.callTool('x')
  } catch (e) {
    if (e instanceof McpError && e.code === ErrorCode.INVALID_PARAMS) console.log(e.rpcCode)
  }
  await c.close()
  const oauth: OAuthOptions = {
    redirectUri: 'http://127.0.0.1:8765/callback',
    authorize: async (authorizationUrl) => new URL(authorizationUrl).searchParams.get('redirect_uri') ?? '',
    clientId: 'app',
    clientSecret: 'secret',
    issuer: 'https://auth.example.com',
    clientMetadataUrl: 'https://app.example.com/oauth/client.json',
    clientName: 'App',
    maxAuthorizations: 2,
  }
  const authorized = await Client.connectHttp(new URL('https://mcp.example.com/mcp'), { oauth })
  await Client.connectHttp('https://mcp.example.com/mcp', { oauth: { redirectUri: 'http://localhost:3000/callback' } })
  await authorized.close()
  const s = await Client.connectStdio('node', ['server.js'], { env: { A: '1' }, cwd: '/tmp', stderr: 'null' })
  console.log(era, page.nextCursor, r.isError, s.pid, SUPPORTED_VERSIONS[0])
}

async function server(): Promise<void> {
  const s = new Server({ name: 'demo', version: '1.0.0', instructions: 'Say hi' })
  s.tool({ name: 'add', inputSchema: { type: 'object' } }, async (args, ctx) => {
    ctx.progress(1, 2, 'half')
    ctx.closeStream(500)
    const answer = await ctx.elicit('name', { message: 'Name?', requestedSchema: { type: 'object' } })
    if (answer.action !== 'accept') throw new ToolError('declined')
    ctx.signal.addEventListener('abort', () => {})
    return String(Number(args.a) + Number(args.b))
  })
  s.resource({ uri: 'test://x', name: 'x' }, async (uri) => `content of ${uri}`, { cache: { ttlMs: 1000, cacheScope: 'public' } })
  s.resourceTemplate({ uriTemplate: 'test://{id}', name: 't' }, async (uri, vars) => ({ contents: [{ uri, text: String(vars.id) }] }))
  s.prompt({ name: 'p' }, async (args) => `Hello ${args.who}`)
  s.completion({ type: 'ref/prompt', name: 'p' }, async ({ value }) => [value + '1'])
  s.removeTool('add')
  const h = await s.serveHttp({ port: 0 })
  console.log(h.url, h.port)
  await h.close()
  const limits: ConnectionLimits = { maxConnections: 100, headerReadTimeoutMs: 5000, http2KeepAliveIntervalMs: 0 }
  await (await s.serveHttp({ port: 0, connections: limits })).close()
  const auth: BearerAuthOptions = {
    resource: 'https://mcp.example.com/mcp',
    authorizationServers: ['https://auth.example.com'],
    verify: async (token) => (token === 't' ? { subject: 'alice', scopes: ['notes:read'] } : null),
    requiredScopes: ['notes:read'],
    toolScopes: { write_note: ['notes:write'] },
  }
  s.tool({ name: 'whoami' }, async (_args, ctx) => ctx.principal ?? 'anonymous')
  const bounded = new Server({ name: 'bounded', version: '1.0.0', handlerTimeoutMs: 30_000 })
  bounded.tool({ name: 'slow' }, async () => 'done', { timeoutMs: 5_000 })
  await (await s.serveHttp({ port: 0, auth })).close()
  await s.serveStdio().closed
}

void client
void server

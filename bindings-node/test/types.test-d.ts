// Compiled (never run) by scripts/check-dts.mjs: code a user would write type-checks against
// index.d.ts.
import { Client, Server, McpError, ToolError, ErrorKind, applySchemaDefaults, SUPPORTED_VERSIONS, telemetry, type TelemetryOptions, type BearerAuthOptions, type CallToolResult, type ConnectionLimits, type DetailedTask, type TaskStatus, type ToolTask, type ContentBlock, type FetchHandler, type MountOptions, type NodeHandler, type OAuthOptions, type ServerNotification, type Tool } from '../index'

async function client(): Promise<void> {
  const c = await Client.connectHttp('http://127.0.0.1:3000/mcp', {
    headers: { Authorization: 'Bearer t' },
    requestTimeoutMs: 5000,
    cache: true,
    clientInfo: { name: 'app', version: '1.0.0' },
    // ElicitRequestParams is the schema's union of form and URL mode: narrow on `mode`.
    onElicitation: async (req) => (req.mode === 'url' ? { action: 'decline' } : { action: 'accept', content: applySchemaDefaults(req.requestedSchema, { name: 'Ada' }) }),
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
  // The explicit task handle (the Tasks extension).
  const job: ToolTask = await c.callToolAsTask('rebuild_index', {}, { timeoutMs: 1000 })
  const jobId: string | undefined = job.taskId
  const state: DetailedTask = await job.status({ signal: controller.signal })
  const status: TaskStatus = state.status
  if (state.status === 'failed') console.log(state.error?.code)
  const done: CallToolResult = await (jobId ? c.task(jobId) : job).result()
  await job.cancel()
  console.log(status, done.content.length)
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

  // The protocol's types (generated from the schema) on what the client returns.
  const tool: Tool = tools[0]
  const schemaType: 'object' = tool.inputSchema.type
  const block: ContentBlock = r.content[0]
  if (block.type === 'text') console.log(block.text.length)
  else if (block.type === 'image' || block.type === 'audio') console.log(block.mimeType, block.data.length)
  else if (block.type === 'resource_link') console.log(block.uri)
  else console.log(block.resource.uri)
  const read = await c.readResource('test://x')
  for (const contents of read.contents) console.log('text' in contents ? contents.text : contents.blob)
  const prompt = await c.getPrompt('p')
  const role: 'user' | 'assistant' = prompt.messages[0].role
  const discovered = await c.discover()
  const versions: string[] = discovered.supportedVersions
  const listChanged: boolean | undefined = c.serverCapabilities.tools?.listChanged
  const completion = await c.complete({ type: 'ref/resource', uri: 'test://{id}' }, { name: 'id', value: '1' }, { arguments: { a: 'b' } })
  const values: string[] = completion.completion.values
  const templates = await c.listAllResourceTemplates()
  const template: string = templates[0].uriTemplate
  // @ts-expect-error a completion reference is a prompt or a resource template
  await c.complete({ type: 'ref/tool', name: 't' }, { name: 'a', value: 'x' })
  // @ts-expect-error a tool's content is a list of blocks
  const notBlocks: string = r.content
  console.log(schemaType, role, versions, listChanged, values, template, notBlocks)

  // Every method takes a signal.
  const { signal } = new AbortController()
  await c.discover({ signal })
  await c.listTools(undefined, { signal })
  await c.listAllTools({ signal })
  await c.listResources('cursor', { signal })
  await c.listAllResources({ signal })
  await c.listResourceTemplates(undefined, { signal })
  await c.listAllResourceTemplates({ signal })
  await c.listPrompts(undefined, { signal })
  await c.listAllPrompts({ signal })
  await c.readResource('test://x', { signal })
  await c.getPrompt('p', {}, { signal })
  await c.complete({ type: 'ref/prompt', name: 'p' }, { name: 'a', value: 'x' }, undefined, { signal })
  await c.request('tools/list', {}, { signal })
  const watched = await c.subscribe({ resourceSubscriptions: ['test://x'] }, { signal })
  // Notifications are the schema's ServerNotification union, narrowed by `method`.
  const n: IteratorResult<ServerNotification, undefined> = await watched.next()
  if (!n.done && n.value.method === 'notifications/resources/updated') console.log(n.value.params.uri)
  // @ts-expect-error the signal is an AbortSignal
  await c.listAllTools({ signal: true })
  c.onElicitation(async () => ({ action: 'decline' }))
  try {
    await c.callTool('x')
  } catch (e) {
    if (e instanceof McpError && e.kind === ErrorKind.INVALID_PARAMS) console.log(e.code)
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
    const answer = await ctx.elicit('name', { message: 'Name?', requestedSchema: { type: 'object', properties: {} } })
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
  const tasked = new Server({ name: 'tasked', version: '1.0.0', tasks: { ttlMs: 60_000, pollIntervalMs: 500 } })
  tasked.tool({ name: 'job' }, async (_args, ctx) => {
    const id: string | undefined = ctx.taskId
    const started: boolean = await ctx.startTask()
    return `${id ?? 'none'} ${started}`
  }, { taskSupport: 'optional', deferTask: true })
  await (await s.serveHttp({ port: 0, auth })).close()
  const mounted: NodeHandler = s.nodeHandler({ allowedHosts: ['mcp.example.com'], auth })
  mounted({}, {})
  mounted.close()
  const options: MountOptions = { path: '/apps/mcp', maxBody: 1 << 20 }
  const fetched: FetchHandler = s.fetchHandler(options)
  const response: Response = await fetched(new Request('http://127.0.0.1/mcp'), { remoteAddress: '127.0.0.1' })
  console.log(response.status, response.body)
  const inMemory: Client = await Client.connectInMemory(s, { protocolVersions: ['2025-11-25'] })
  await inMemory.close()
  await s.serveStdio().closed
}

async function traced(): Promise<void> {
  const options: TelemetryOptions = { endpoint: 'http://127.0.0.1:4318', serviceName: 'notes', metricsIntervalMs: 10_000, prometheus: true }
  telemetry.configure(options)
  const on: boolean = telemetry.isEnabled()
  const text: string | null = telemetry.prometheusText()
  const s = new Server({ name: 'traced', version: '1.0.0' })
  await (await s.serveHttp({ port: 0, metricsPath: '/metrics' })).close()
  await telemetry.flush()
  await telemetry.shutdown()
  console.log(on, text?.length)
}

void client
void server
void traced

// quickstart.cjs: the same client in CommonJS, where `await` needs an async function
const { Client, Server } = require('mcpaxle')

async function main() {
  const server = new Server({ name: 'weather', version: '1.0.0' })
  server.tool({ name: 'forecast', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } },
    async ({ city }) => `Sunny in ${city}`)
  const handle = await server.serveHttp({ port: 0 })
  const client = await Client.connectHttp(handle.url)
  const result = await client.callTool('forecast', { city: 'Paris' })
  console.log(result.content[0].text)
  await client.close()
  await handle.close()
}

main().catch((e) => { console.error(e); process.exitCode = 1 })

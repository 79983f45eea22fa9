#!/usr/bin/env node
// The npm packages of mcpaxle, in napi-rs's prebuilt layout, as `npm pack` tarballs in dist/:
//
//   mcpaxle-VERSION.tgz                    the JavaScript layer, the .d.ts files and the loader
//                                          (native.js); one optionalDependency per platform
//                                          package packed with it; no install script, no Rust
//   mcpaxle-PLATFORM-VERSION.tgz           one native module (mcpaxle.PLATFORM.node), with the
//                                          os/cpu/libc fields npm uses to pick it
//
// Each native module found in the artifacts directory (default bindings-node/, where
// `napi build --platform --release` writes it) becomes a platform package; the release workflow
// (.github/workflows/release.yml) passes the directory where it gathered every platform's.
// Debug info is stripped from the copies that are packed (`strip --strip-debug`, where it exists).
//
//   node packaging/node/pack.mjs [--artifacts DIR] [--out DIR]
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const pkgDir = path.join(root, 'bindings-node')
const args = process.argv.slice(2)
const opt = (name, fallback) => {
  const i = args.indexOf(name)
  return i >= 0 ? path.resolve(args[i + 1]) : fallback
}
const artifacts = opt('--artifacts', pkgDir)
const out = opt('--out', path.join(root, 'dist'))
const stage = path.join(root, 'target', 'npm-stage')

const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'))
const binaryName = pkg.napi.binaryName

// napi-rs's platform names (`mcpaxle.<platform>.node`) and what npm matches them on.
const PLATFORMS = {
  'linux-x64-gnu': { os: ['linux'], cpu: ['x64'], libc: ['glibc'] },
  'linux-x64-musl': { os: ['linux'], cpu: ['x64'], libc: ['musl'] },
  'linux-arm64-gnu': { os: ['linux'], cpu: ['arm64'], libc: ['glibc'] },
  'linux-arm64-musl': { os: ['linux'], cpu: ['arm64'], libc: ['musl'] },
  'darwin-x64': { os: ['darwin'], cpu: ['x64'] },
  'darwin-arm64': { os: ['darwin'], cpu: ['arm64'] },
  'win32-x64-msvc': { os: ['win32'], cpu: ['x64'] },
}

function copy(from, to) {
  fs.mkdirSync(path.dirname(to), { recursive: true })
  fs.cpSync(from, to, { recursive: true })
}

function npmPack(dir) {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const json = execFileSync(npm, ['pack', '--json', '--pack-destination', out], { cwd: dir, encoding: 'utf8', shell: process.platform === 'win32' })
  const [{ filename, size, unpackedSize }] = JSON.parse(json)
  console.log(`node: ${filename} (${Math.round(size / 1024)} KiB, ${Math.round(unpackedSize / 1024)} KiB unpacked)`)
}

const common = {
  version: pkg.version,
  license: pkg.license,
  repository: pkg.repository,
  engines: pkg.engines,
}

fs.rmSync(stage, { recursive: true, force: true })
fs.mkdirSync(out, { recursive: true })
for (const f of fs.readdirSync(out)) {
  if (f.startsWith(`${pkg.name}-`) && f.endsWith('.tgz')) fs.rmSync(path.join(out, f))
}

const found = fs.readdirSync(artifacts)
  .map((f) => f.match(new RegExp(`^${binaryName}\\.(.+)\\.node$`)))
  .filter(Boolean)
  .map((m) => m[1])
  .sort()
if (found.length === 0) {
  console.error(`pack.mjs: no ${binaryName}.<platform>.node in ${artifacts} (run bindings-node/scripts/build.sh)`)
  process.exit(1)
}

const unknown = found.filter((p) => !PLATFORMS[p])
if (unknown.length > 0) {
  console.error(`pack.mjs: unknown platform(s) ${unknown.join(', ')} in ${artifacts} (known: ${Object.keys(PLATFORMS).join(', ')})`)
  process.exit(1)
}

for (const platform of found) {
  const fields = PLATFORMS[platform]
  const dir = path.join(stage, platform)
  const file = `${binaryName}.${platform}.node`
  copy(path.join(artifacts, file), path.join(dir, file))
  if (!platform.startsWith('darwin') && !platform.startsWith('win32')) {
    const strip = spawnSync('strip', ['--strip-debug', path.join(dir, file)], { stdio: 'inherit' })
    if (strip.error && strip.error.code !== 'ENOENT') throw strip.error
  }
  copy(path.join(root, 'LICENSE'), path.join(dir, 'LICENSE'))
  copy(path.join(root, 'CHANGELOG.md'), path.join(dir, 'CHANGELOG.md'))
  fs.writeFileSync(path.join(dir, 'README.md'), `# ${pkg.name}-${platform}\n\nThe native module of [\`${pkg.name}\`](https://www.npmjs.com/package/${pkg.name}) for ${platform}. Install \`${pkg.name}\`, which depends on this package where it fits.\n`)
  const platformPkg = {
    name: `${pkg.name}-${platform}`,
    ...common,
    description: `The ${platform} native module of ${pkg.name}`,
    main: file,
    files: [file, 'LICENSE', 'CHANGELOG.md'],
    ...fields,
  }
  fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(platformPkg, null, 2)}\n`)
  npmPack(dir)
}

// The main package: the files of bindings-node/package.json but the Rust sources, the native
// modules and the from-source install script.
const dir = path.join(stage, pkg.name)
const source = ['Cargo.toml', 'build.rs', 'src/', '*.node', 'scripts/install.js']
const files = pkg.files.filter((f) => !source.includes(f))
for (const f of files) copy(path.join(pkgDir, f), path.join(dir, f))
copy(path.join(pkgDir, 'README.md'), path.join(dir, 'README.md'))
copy(path.join(root, 'LICENSE'), path.join(dir, 'LICENSE'))
copy(path.join(root, 'CHANGELOG.md'), path.join(dir, 'CHANGELOG.md'))
const { scripts, devDependencies, files: _files, ...rest } = pkg
const mainPkg = {
  ...rest,
  files: [...files, 'LICENSE', 'CHANGELOG.md'],
  optionalDependencies: Object.fromEntries(found.map((p) => [`${pkg.name}-${p}`, pkg.version])),
}
fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(mainPkg, null, 2)}\n`)
npmPack(dir)

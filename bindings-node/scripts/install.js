#!/usr/bin/env node
'use strict'
// `npm install` of this package: use the native module for this platform if one is already
// there (a prebuilt binary, or an earlier build), otherwise build it from source with the napi
// CLI (`napi build --platform --release`).
//
// cargo builds into the workspace's target/ directory (this crate is a member of the mcpaxle
// workspace), so the core is compiled once for every binding. The napi CLI is this package's
// pinned devDependency when installed (`npm ci` here); when the package is installed as a
// dependency (`npm install ./bindings-node`) devDependencies are not, and the same pinned
// version is run through `npm exec` instead.
//
//   MCPAXLE_NODE_SKIP_BUILD=1   do nothing (e.g. when the binary is provided another way)
//   MCPAXLE_NODE_FORCE_BUILD=1  build even if a binary loads

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const here = fs.realpathSync(path.resolve(__dirname, '..'))
const pkg = JSON.parse(fs.readFileSync(path.join(here, 'package.json'), 'utf8'))
const BUILD_ARGS = ['build', '--platform', '--release', '--js', 'native.js', '--dts', 'native.d.ts']

function log(message) {
  process.stderr.write(`mcpaxle: ${message}\n`)
}

function loads() {
  const r = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(path.join(here, 'native.js'))})`], { stdio: 'ignore' })
  return r.status === 0
}

function run(command, args) {
  log(`${command} ${args.join(' ')}`)
  const r = spawnSync(command, args, { cwd: here, stdio: 'inherit', env: process.env })
  if (r.error) throw r.error
  return r.status ?? 1
}

function main() {
  if (process.env.MCPAXLE_NODE_SKIP_BUILD) return 0
  if (!process.env.MCPAXLE_NODE_FORCE_BUILD && loads()) return 0
  if (!fs.existsSync(path.join(here, 'Cargo.toml'))) {
    log('no native module for this platform and no Rust sources to build one from')
    return 1
  }
  const cargo = spawnSync('cargo', ['--version'], { stdio: 'ignore' })
  if (cargo.error || cargo.status !== 0) {
    log('building the native module needs Rust (cargo on PATH): https://rustup.rs')
    return 1
  }
  log('building the native module (cargo, release; the first build takes a few minutes)')
  let cli = null
  try {
    const cliPkg = require.resolve('@napi-rs/cli/package.json', { paths: [here] })
    cli = path.join(path.dirname(cliPkg), JSON.parse(fs.readFileSync(cliPkg, 'utf8')).bin.napi)
  } catch {
    cli = null
  }
  if (cli) return run(process.execPath, [cli, ...BUILD_ARGS])
  const version = pkg.devDependencies['@napi-rs/cli']
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  return run(npm, ['exec', '--yes', `--package=@napi-rs/cli@${version}`, '--', 'napi', ...BUILD_ARGS])
}

process.exitCode = main()

'use strict'
// The core's log events (a connection limit reached, a Redis bus reconnecting, a stdio server's
// stderr, a token verifier's issuer unreachable, ...) in the application's logging.
//
//   setLogHandler((record) => logger[record.level === 'warning' ? 'warn' : record.level](record.message, record))
//
// Without a handler they go nowhere, unless NODE_DEBUG names mcpaxle (NODE_DEBUG=mcpaxle node app.js):
// then they are printed to stderr the way Node's own debug logs are (util.debuglog).

const util = require('node:util')
const native = require('../native.js')

const LEVELS = new Set(['error', 'warning', 'info', 'debug'])

/**
 * Hands each log record of the core to `handler(record)`: `{ level, target, message, fields }`,
 * `level` being `'error'`, `'warning'`, `'info'` or `'debug'`, `target` where in the core it
 * comes from (`mcpaxle::transport::http::server`), `fields` its other values by name. `null`
 * stops. The handler runs on the JavaScript thread, one record at a time; one that throws is
 * reported with `process.emitWarning` and keeps getting the next records. Records the
 * application's logging does not take up fast enough are dropped (at most 1,024 wait) and the
 * next record says how many.
 */
function setLogHandler (handler) {
  if (handler !== null && typeof handler !== 'function') {
    throw new TypeError('setLogHandler: handler must be a function (record) => void, or null')
  }
  native.setLogHandler(handler === null ? null : (json) => {
    const record = JSON.parse(json)
    if (!LEVELS.has(record.level)) record.level = 'warning'
    try {
      handler(record)
    } catch (e) {
      process.emitWarning(`the mcpaxle log handler threw: ${e && e.stack ? e.stack : e}`)
    }
  })
}

const debug = util.debuglog('mcpaxle')
if (debug.enabled) {
  setLogHandler((r) => debug('%s %s: %s%s', r.level.toUpperCase(), r.target, r.message,
    Object.keys(r.fields).length ? ' ' + JSON.stringify(r.fields) : ''))
}

module.exports = { setLogHandler }

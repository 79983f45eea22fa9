'use strict'
// Options are data read by the core (mcpaxle::options): this only separates the callbacks,
// which stay JavaScript functions, from the data, which goes to the native side as JSON. The
// core checks the names (an unknown one is an error listing the valid ones), the types, the
// units (durations in milliseconds, names ending in `Ms`) and applies the defaults.

const native = require('../native.js')
const { typeName, usage } = require('./errors.js')

/**
 * The JSON text of the data options of `options` (an object, or null/undefined for none),
 * leaving out the keys in `omit` and the members that are `undefined` or `null` (absent: the
 * core's default). `what` names the options in errors.
 */
function optionsJson(options, what, omit = []) {
  if (options == null) return undefined
  if (typeof options !== 'object' || Array.isArray(options)) throw usage(`${what} must be an object, not ${typeName(options)}`)
  const data = {}
  for (const [key, value] of Object.entries(options)) {
    if (value != null && !omit.includes(key)) data[key] = value
  }
  return JSON.stringify(data)
}

/**
 * The members of the object `o` that are not `undefined` or `null`, as `optionsJson` keeps them:
 * absent, so the core's default (for an options object nested in another, such as `auth`).
 */
function present(o) {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v != null))
}

/** The core's option names per options struct: `{server: ['title', ...], client: [...], ...}`. */
function optionsSchema() {
  return JSON.parse(native.optionsSchema())
}

/** A valid value for every option of `optionsSchema()`, by the same areas (for tests). */
function optionsExamples() {
  return JSON.parse(native.optionsExamples())
}

module.exports = { optionsJson, optionsSchema, optionsExamples, present }

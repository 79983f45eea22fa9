'use strict'
// A subscription as an async iterable. The native side delivers batches of notifications on
// this thread (src/subscription.rs); they wait in a queue until read. While the subscription is
// open the native side holds a reference on the event loop (like an open socket); `close()`,
// the end of the stream or a failed connection releases it.

const { fromJson } = require('./errors.js')

/**
 * An open subscription: `for await (const n of sub)` yields each notification
 * (`{method, params}`); `close()` ends it.
 */
class Subscription {
  #native = null
  #queue = []
  #waiters = []
  #done = false
  #error = null
  #closeRequested = false
  #signal = null
  #onAbort = null

  /** @private */
  constructor() {
    this._deliver = (json) => this.#onDelivery(json)
  }

  /** @private */
  _attach(nativeSubscription, signal) {
    this.#native = nativeSubscription
    if (this.#closeRequested) {
      nativeSubscription.close()
    } else if (signal != null) {
      if (signal.aborted) return this.close()
      this.#signal = signal
      this.#onAbort = () => this.close()
      signal.addEventListener('abort', this.#onAbort, { once: true })
    }
  }

  /** The notification types the server agreed to send (a `SubscriptionFilter`). */
  get acknowledged() {
    return this.#native ? JSON.parse(this.#native.acknowledged) : {}
  }

  #onDelivery(json) {
    if (this.#done) return
    const m = JSON.parse(json)
    for (const n of m.notifications) this.#push({ value: n, done: false })
    if (m.error) {
      this.#error = fromJson(m.error)
      this.#finish()
    } else if (m.end) {
      this.#finish()
    }
  }

  #push(result) {
    const w = this.#waiters.shift()
    if (w) w.resolve(result)
    else this.#queue.push(result)
  }

  #finish() {
    this.#done = true
    if (this.#signal) {
      this.#signal.removeEventListener('abort', this.#onAbort)
      this.#signal = null
    }
    while (this.#waiters.length) {
      const w = this.#waiters.shift()
      if (this.#error) {
        w.reject(this.#error)
        this.#error = null
      } else {
        w.resolve({ value: undefined, done: true })
      }
    }
  }

  /** The next notification (`{value, done}`); rejects once if the connection failed. */
  next() {
    if (this.#queue.length) return Promise.resolve(this.#queue.shift())
    if (this.#done) {
      if (this.#error) {
        const e = this.#error
        this.#error = null
        return Promise.reject(e)
      }
      return Promise.resolve({ value: undefined, done: true })
    }
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }))
  }

  /** Ends the iteration early (`break` in a `for await` loop): closes the subscription. */
  return() {
    this.close()
    return Promise.resolve({ value: undefined, done: true })
  }

  [Symbol.asyncIterator]() {
    return this
  }

  /** Ends the subscription; notifications already received can still be read. */
  close() {
    this.#closeRequested = true
    if (this.#native) this.#native.close()
    if (!this.#done) {
      this.#done = true
      this.#finish()
    }
  }
}

module.exports = { Subscription }

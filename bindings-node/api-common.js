// The JavaScript layer above the Rust core, written once for both
// JavaScript packages: the native Node package requires this file as it is
// (main.js), and bindings-wasm/assemble.cjs copies it into the WebAssembly
// packages (pkg-node as it is, pkg-web as an ES module: like parts.js, the
// file is `'use strict'`, one `require` of names, declarations and one
// `module.exports = {...}` line). Each package passes only what differs: how
// `layout.decode(id)` reaches its core (main.js: an N-API decoder writing
// into a scratch array; js/api.js: the module's u64 fast path).
//
// What only one package has, and why (bindings-node/test/exports.test.mjs
// checks this list against both packages):
// - native only: `IdMask` (FF1 over AES; the WebAssembly module, which
//   browsers download, leaves the mask out), and of `Generator` the `lease`
//   option, `lease`, `close()` and `Symbol.dispose` (lease stores need file
//   locks and network clients). The native package's WebAssembly fallback
//   (index.js) keeps these names: `new IdMask()` and a `lease` option throw
//   `invalid_option`, `lease` is null and `close()` does nothing.
// - WebAssembly only: `Layout.prototype.decodeMany` (a batch in one module
//   call: a call into the module costs more than the decode itself), and
//   wasm-bindgen's `free()` of each class; the web package also exports
//   `default` (init) and `initSync`.
'use strict'

const { partsClass, present } = require('./parts.js')

// Bounded caches keep at most this many entries, oldest out first.
const CACHE_MAX = 256

/** The value of `key` in `map`, made by `make(key)` and kept when absent. */
function cached(map, key, make) {
  let v = map.get(key)
  if (v === undefined) {
    v = make(key)
    if (map.size >= CACHE_MAX) map.delete(map.keys().next().value)
    map.set(key, v)
  }
  return v
}

/**
 * The `Parts` constructor and node field names of a Layout: `{ Parts, names }`.
 * The sequence and node fields of at most 30 bits are read as small integers
 * (see parts.js).
 */
function shapeOf(layout) {
  const fields = layout.fields
  const nodes = fields.filter((f) => f.kind === 'node')
  const names = nodes.map((f) => f.name)
  const small = [fields.find((f) => f.kind === 'sequence'), ...nodes].map((f) => f.bits <= 30)
  return { Parts: partsClass(names, small, 0), names }
}

// Methods (writable, configurable, not enumerable), as classes define them.
function method(proto, name, fn) {
  Object.defineProperty(proto, name, { value: fn, writable: true, configurable: true })
}

/**
 * Completes a package's classes and returns its module-level functions.
 * `decode` becomes a method of every Layout (the package's own), Layout and
 * Generator get parts.js's `toJSON`, `toString` and util.inspect, and the
 * returned `decode`, `compose` and `idBounds` take a Layout, or a preset
 * name or JSON descriptor, parsed once (a bounded cache); anything else goes
 * to `Layout.parse`, which throws the core's error for it.
 */
function installShared(Layout, Generator, decode) {
  method(Layout.prototype, 'decode', decode)
  present(Layout, Generator)
  const byString = new Map()
  const parse = (s) => Layout.parse(s)
  function layoutOf(layout) {
    if (layout instanceof Layout) return layout
    return typeof layout === 'string' ? cached(byString, layout, parse) : Layout.parse(layout)
  }
  return {
    /** Splits an ID into its parts under `layout`. */
    decode: (id, layout) => layoutOf(layout).decode(id),
    /** Builds an ID under `layout` from a time (Unix ms), a sequence value and node values. */
    compose: (layout, timestampMs, sequence, nodes) => layoutOf(layout).compose(timestampMs, sequence, nodes),
    /** The smallest and largest IDs under `layout` of the time unit holding `timestampMs`. */
    idBounds: (layout, timestampMs) => layoutOf(layout).idBounds(timestampMs),
  }
}

module.exports = { cached, installShared, method, shapeOf }

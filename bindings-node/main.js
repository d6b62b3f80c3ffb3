// The package entry point (CommonJS): the napi-rs binding (`binding.js`, which
// `napi build --js binding.js` generates, and the .node file it loads), plus
// `decode`, `Layout.prototype.decode`, `Generator.prototype[Symbol.dispose]`
// (where the runtime has the symbol) and toJSON/toString/util.inspect. The Rust core reads, checks and
// splits the ID and throws every error; the `Parts` object is built here, by
// parts.js (shared with the WebAssembly package), because an N-API property
// write costs ~300 ns on Node 20 and a JavaScript constructor a few ns
// (bench/RESULTS.md, Node section).
'use strict'

const binding = require('./binding.js')
const { partsClass, present } = require('./parts.js')

const { Layout, Generator, PureGenerator, IdMask, formatId, parseId } = binding
const { toBase32, fromBase32, toBase62, fromBase62 } = binding

// What the native decoder writes: [timestampMs, sequence, ...node values],
// read back at once. One per module instance (each worker thread has its own).
const scratch = new Float64Array(8)

// Bounded caches, oldest out first: Layouts by layout string (a string is
// parsed once), and decoders by canonical layout JSON (equal layouts share one
// decoder and one Parts class, so a call site decoding one layout stays
// monomorphic).
const byString = new Map()
const byJson = new Map()
const CACHE_MAX = 256

function cached(map, key, make) {
  let v = map.get(key)
  if (v === undefined) {
    v = make(key)
    if (map.size >= CACHE_MAX) map.delete(map.keys().next().value)
    map.set(key, v)
  }
  return v
}

// The decoder of a Layout object.
function decoderFor(layout) {
  return cached(byJson, layout.toJson(), () => {
    const { fields } = layout
    const nodes = fields.filter((f) => f.kind === 'node')
    // Fields of at most 30 bits (the sequence, then each node field) are read
    // as small integers (see parts.js).
    const small = [fields.find((f) => f.kind === 'sequence'), ...nodes].map((f) => f.bits <= 30)
    const Parts = partsClass(nodes.map((f) => f.name), small, 0)
    const native = binding.__decoder(layout, scratch)
    return (id) => new Parts(native(id), scratch)
  })
}

// A layout argument as a Layout: a string parsed once; anything else goes to
// `Layout.parse`, which copies a Layout and throws the core's error for a
// value that is not one.
function layoutOf(layout) {
  return typeof layout === 'string' ? cached(byString, layout, (s) => Layout.parse(s)) : Layout.parse(layout)
}

// Decoders by Layout object: on the object under a private symbol, or in a
// WeakMap for an object that cannot take one.
const DECODER = Symbol('snowmint.decoder')
const byLayout = new WeakMap()

function decoderOf(layout) {
  if (typeof layout !== 'object' || layout === null) layout = layoutOf(layout)
  let d = layout[DECODER] ?? byLayout.get(layout)
  if (d === undefined) {
    d = decoderFor(Layout.parse(layout))
    if (Object.isExtensible(layout)) Object.defineProperty(layout, DECODER, { value: d })
    else byLayout.set(layout, d)
  }
  return d
}

/** Splits an ID into its parts under `layout` (a Layout, a preset name or a JSON descriptor). */
function decode(id, layout) {
  return decoderOf(layout)(id)
}

/** Builds an ID under `layout` from a time (Unix ms), a sequence value and node values. */
function compose(layout, timestampMs, sequence, nodes) {
  return layoutOf(layout).compose(timestampMs, sequence, nodes)
}

/** The smallest and largest IDs under `layout` of the time unit holding `timestampMs`. */
function idBounds(layout, timestampMs) {
  return layoutOf(layout).idBounds(timestampMs)
}

// toJSON, toString and util.inspect of Layout and Generator (parts.js, shared
// with the WebAssembly package).
present(Layout, Generator)

// A method (writable, configurable, not enumerable) of every Layout.
const method = { decode(id) { return decoderOf(this)(id) } }.decode
Object.defineProperty(Layout.prototype, 'decode', { value: method, writable: true, configurable: true })

// `using g = new Generator(...)` (explicit resource management) closes the
// generator, releasing its lease, where the runtime has `Symbol.dispose`.
if (typeof Symbol.dispose === 'symbol') {
  const dispose = { [Symbol.dispose]() { this.close() } }[Symbol.dispose]
  Object.defineProperty(Generator.prototype, Symbol.dispose, { value: dispose, writable: true, configurable: true })
}

module.exports = { Layout, Generator, PureGenerator, IdMask, decode, compose, idBounds, formatId, parseId }
Object.assign(module.exports, { toBase32, fromBase32, toBase62, fromBase62 })

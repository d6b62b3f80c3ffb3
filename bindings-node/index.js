// The package entry point (CommonJS): the napi-rs binding that `napi build`
// generates (binding.js and the .node file), plus `decode`, whose `Parts`
// objects are built here in JavaScript. Only that object building lives here:
// the ID is read, checked and split by the Rust core (`__decoder`, see
// src/fast.rs), and every error comes from the binding with its `code`.
//
// Why: each N-API property write on a new object costs ~300 ns on Node 20,
// so a Parts object made natively took ~3 us; an object literal here takes a
// few ns.
'use strict'

const binding = require('./binding.js')

const { Layout } = binding

// One scratch array per module instance (each worker thread loads its own).
// The native decoder writes [timestampMs, sequence, ...node values] into it
// and returns the ID; it is read back at once, before any other code runs.
const scratch = new Float64Array(8)

// Field names that a node field never overrides at the top level of Parts.
const FIXED = new Set(['id', 'timestampMs', 'date', 'sequence', 'nodes'])

function makeDecoder(layout) {
  // Throws the binding's TypeError (code invalid_layout) or the core's error
  // for a bad layout.
  const native = binding.__decoder(layout, scratch)
  const l = typeof layout === 'string' ? Layout.parse(layout) : layout
  const names = l.fields.filter((f) => f.kind === 'node').map((f) => f.name)
  return compileBuilder(names, native) ?? genericBuilder(names, native)
}

// A builder with the layout's field names written out, so the engine sees
// one fixed object shape (about twice as fast as setting keys in a loop).
// The names come from a validated layout ([a-z][a-z0-9_]*) and are quoted
// with JSON.stringify all the same. Where code generation from strings is
// disabled, the generic builder below is used.
function compileBuilder(names, native) {
  const slot = (i) => `s[${2 + i}]`
  const spread = names
    .map((n, i) => (FIXED.has(n) ? '' : `${JSON.stringify(n)}: ${slot(i)}, `))
    .join('')
  const nodes = names.map((n, i) => `${JSON.stringify(n)}: ${slot(i)}`).join(', ')
  const body =
    'return function decodeParts(id) {\n' +
    '  const big = native(id)\n' +
    '  const ms = s[0]\n' +
    `  return { id: big, timestampMs: ms, date: new Date(ms), sequence: s[1], ${spread}nodes: { ${nodes} } }\n` +
    '}'
  try {
    return new Function('s', 'native', body)(scratch, native)
  } catch {
    return undefined
  }
}

function genericBuilder(names, native) {
  const spread = names.map((n) => !FIXED.has(n))
  return function decodeParts(id) {
    const big = native(id)
    const ms = scratch[0]
    const parts = { id: big, timestampMs: ms, date: new Date(ms), sequence: scratch[1] }
    const nodes = {}
    for (let i = 0; i < names.length; i++) {
      const v = scratch[2 + i]
      nodes[names[i]] = v
      if (spread[i]) parts[names[i]] = v
    }
    parts.nodes = nodes
    return parts
  }
}

// Decoders by Layout object (freed with it) and by layout string (a bounded
// cache: strings are not garbage-collected keys).
const byLayout = new WeakMap()
const byString = new Map()
const STRING_CACHE_MAX = 64

function decoderOf(layout) {
  if (typeof layout === 'string') {
    let d = byString.get(layout)
    if (d === undefined) {
      d = makeDecoder(layout)
      if (byString.size >= STRING_CACHE_MAX) byString.clear()
      byString.set(layout, d)
    }
    return d
  }
  let d = typeof layout === 'object' && layout !== null ? byLayout.get(layout) : undefined
  if (d === undefined) {
    d = makeDecoder(layout)
    byLayout.set(layout, d)
  }
  return d
}

/** Splits an ID into its parts under `layout` (a Layout, a preset name or a JSON descriptor). */
function decode(id, layout) {
  return decoderOf(layout)(id)
}

Object.defineProperty(Layout.prototype, 'decode', {
  value: function decode(id) {
    return decoderOf(this)(id)
  },
  writable: true,
  configurable: true,
  enumerable: false,
})

module.exports = {
  Layout,
  Generator: binding.Generator,
  PureGenerator: binding.PureGenerator,
  decode,
  compose: binding.compose,
  idBounds: binding.idBounds,
  toBase32: binding.toBase32,
  fromBase32: binding.fromBase32,
  toBase62: binding.toBase62,
  fromBase62: binding.fromBase62,
  formatId: binding.formatId,
  parseId: binding.parseId,
}

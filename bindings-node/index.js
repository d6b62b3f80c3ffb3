// The package entry point (CommonJS): the napi-rs binding that `napi build`
// generates (binding.js and the .node file), plus `decode`, whose `Parts`
// objects are built here in JavaScript. Only that object building lives here:
// the ID is read, checked and split by the Rust core (`__decoder`, see
// src/fast.rs), and every error comes from the binding with its `code`.
//
// Why: each N-API property write on a new object costs ~300 ns on Node 20,
// so a Parts object made natively took ~3 us; a constructor here takes a few
// ns. What a decode costs is in bench/RESULTS.md (Node section).
//
// A bigint ID is split by the same core code compiled to WebAssembly
// (decoder.wasm, from decoder/; why, in decoder/src/lib.rs): a call into it
// costs a fraction of an N-API call. Every other case goes to the native
// decoder, which also throws every decode error.
'use strict'

const binding = require('./binding.js')

const { Layout } = binding

// One scratch array per module instance (each worker thread loads its own).
// The native decoder writes [timestampMs, sequence, ...node values] into it
// and returns the ID (a bigint argument itself, else a new bigint); it is read
// back at once, before any other code runs.
const scratch = new Float64Array(8)

// The WebAssembly decoder: { decode(h, id), view (its output as a
// Float64Array), handle(json) }; null where there is no WebAssembly
// (node --jitless), and then every decode is native. Loaded with the package:
// like the .node file, a missing decoder.wasm fails `require`, not a decode.
const wasm = loadWasmDecoder()

function loadWasmDecoder() {
  if (typeof WebAssembly !== 'object') return null
  const bytes = require('node:fs').readFileSync(require('node:path').join(__dirname, 'decoder.wasm'))
  const x = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports
  // The module never grows its memory, so these views stay valid.
  const view = new Float64Array(x.memory.buffer, x.out(), scratch.length)
  const json = new Uint8Array(x.memory.buffer, x.json_buffer(), x.json_capacity())
  const encoder = new TextEncoder()
  return {
    decode: x.decode,
    view,
    // The module's handle of a layout (by its canonical JSON), or -1.
    handle(text) {
      const { read, written } = encoder.encodeInto(text, json)
      return read === text.length ? x.layout(written) : -1
    },
  }
}

// Field names that a node field never overrides at the top level of Parts.
const FIXED = new Set(['id', 'timestampMs', 'date', 'sequence', 'nodes'])

// Decoders by canonical layout JSON, so that equal layouts (a Layout object,
// a preset name, a JSON string) share one decoder and one Parts shape and a
// call site decoding one layout stays monomorphic. Bounded: oldest out first.
const byJson = new Map()
const JSON_CACHE_MAX = 256

function makeDecoder(layout) {
  // Throws the binding's TypeError (code invalid_layout) or the core's error
  // for a bad layout.
  const native = binding.__decoder(layout, scratch)
  const l = typeof layout === 'string' ? Layout.parse(layout) : layout
  const json = l.toJson()
  let d = byJson.get(json)
  if (d === undefined) {
    const nodeFields = l.fields.filter((f) => f.kind === 'node')
    const names = nodeFields.map((f) => f.name)
    // Per scratch slot (timestamp, sequence, nodes...): whether the field has
    // at most 31 bits (see compileDecoder).
    const small = [
      false,
      l.fields.find((f) => f.kind === 'sequence').bits <= 31,
      ...nodeFields.map((f) => f.bits <= 31),
    ]
    const h = wasm === null ? -1 : wasm.handle(json)
    const fast = h < 0 ? null : { decode: wasm.decode, view: wasm.view, h }
    d = compileDecoder(names, small, native, fast) ?? genericDecoder(names, native, fast)
    if (byJson.size >= JSON_CACHE_MAX) byJson.delete(byJson.keys().next().value)
    byJson.set(json, d)
  }
  return d
}

// Values of node fields named like a fixed property (not copied to the top
// level), kept on the Parts object under this private symbol, not enumerable.
const HIDDEN = Symbol('snowmint.nodes')

// `date` and `nodes` are getters of the prototype, computed when read (a new
// Date, a new object per read): a Date costs more than the rest of a decode,
// a nested object a sixth of it, and most callers never read them. `nodes`
// is made from the node fields at the top level of `this`.
function addGetters(Parts, names) {
  const hidden = names.map((n) => FIXED.has(n))
  Object.defineProperty(Parts.prototype, 'date', {
    get() {
      return new Date(this.timestampMs)
    },
    configurable: true,
  })
  Object.defineProperty(Parts.prototype, 'nodes', {
    get() {
      const nodes = {}
      let h = 0
      for (let i = 0; i < names.length; i++) {
        nodes[names[i]] = hidden[i] ? this[HIDDEN]?.[h++] : this[names[i]]
      }
      return nodes
    },
    configurable: true,
  })
  return Parts
}

// A decoder and its Parts constructor, with the layout's field names written
// out, so the engine sees one fixed object shape per layout (about twice as
// fast as setting keys in a loop) and each layout's decoder has call sites of
// its own. Own properties, in this order: id, timestampMs, sequence, the node
// fields not named like a fixed property. The names come from a validated
// layout ([a-z][a-z0-9_]*) and are quoted with JSON.stringify all the same.
// Where code generation from strings is disabled, the generic decoder below
// is used.
//
// `fast` (or null): the WebAssembly decoder's function, output view and
// handle of this layout. It takes a bigint in 0..2^64 (`BigInt.asUintN`
// leaves it unchanged) and returns 0 when it decoded it; anything else goes
// to `native`, which decodes it or throws the binding's error.
//
// A value of a field of at most 31 bits is read as `s[k] | 0`: the same
// integer (the core decoded it, it is below 2^31), but as an int32, so V8
// stores a small integer in the Parts object instead of boxing a double
// (~4 ns per decode here). No ID goes through JavaScript arithmetic.
function compileDecoder(names, small, native, fast) {
  const get = (k) => (small[k] ? `(s[${k}] | 0)` : `s[${k}]`)
  const slot = (i) => get(2 + i)
  const spread = names
    .map((n, i) => (FIXED.has(n) ? '' : `  this[${JSON.stringify(n)}] = ${slot(i)}\n`))
    .join('')
  const hidden = names.map((n, i) => (FIXED.has(n) ? slot(i) : '')).filter(Boolean)
  const body =
    'function Parts(id, s) {\n' +
    '  this.id = id\n' +
    '  this.timestampMs = s[0]\n' +
    `  this.sequence = ${get(1)}\n` +
    spread +
    (hidden.length ? `  Object.defineProperty(this, HIDDEN, { value: [${hidden.join(', ')}] })\n` : '') +
    '}\n' +
    'addGetters(Parts, names)\n' +
    (fast === null
      ? 'return function decodeParts(id) {\n' +
        '  return new Parts(native(id), scratch)\n' +
        '}'
      : 'const { decode, view, h } = fast\n' +
        'return function decodeParts(id) {\n' +
        "  if (typeof id === 'bigint' && BigInt.asUintN(64, id) === id && decode(h, id) === 0) {\n" +
        '    return new Parts(id, view)\n' +
        '  }\n' +
        '  return new Parts(native(id), scratch)\n' +
        '}')
  try {
    return new Function('scratch', 'native', 'fast', 'addGetters', 'names', 'HIDDEN', body)(
      scratch,
      native,
      fast,
      addGetters,
      names,
      HIDDEN,
    )
  } catch {
    return undefined
  }
}

function genericDecoder(names, native, fast) {
  const spread = names.map((n) => !FIXED.has(n))
  function Parts(id, s) {
    this.id = id
    this.timestampMs = s[0]
    this.sequence = s[1]
    const hidden = []
    for (let i = 0; i < names.length; i++) {
      if (spread[i]) this[names[i]] = s[2 + i]
      else hidden.push(s[2 + i])
    }
    if (hidden.length) Object.defineProperty(this, HIDDEN, { value: hidden })
  }
  addGetters(Parts, names)
  return function decodeParts(id) {
    if (fast !== null && typeof id === 'bigint' && BigInt.asUintN(64, id) === id && fast.decode(fast.h, id) === 0) {
      return new Parts(id, fast.view)
    }
    return new Parts(native(id), scratch)
  }
}

// Decoders by Layout object (kept on the object itself under a private
// symbol, or in a WeakMap for an object that cannot take one) and by layout
// string (a bounded cache: strings are not garbage-collected keys).
const DECODER = Symbol('snowmint.decoder')
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
  if (typeof layout !== 'object' || layout === null) return makeDecoder(layout) // throws
  let d = layout[DECODER] ?? byLayout.get(layout)
  if (d === undefined) {
    d = makeDecoder(layout)
    if (Object.isExtensible(layout)) {
      Object.defineProperty(layout, DECODER, { value: d })
    } else {
      byLayout.set(layout, d)
    }
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

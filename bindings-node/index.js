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
// The Parts objects themselves are made by parts.js, which the WebAssembly
// package shares.
//
// A bigint ID is split by the same core code compiled to WebAssembly
// (decoder.wasm, from decoder/; why, in decoder/src/lib.rs): a call into it
// costs a fraction of an N-API call. Every other case goes to the native
// decoder, which also throws every decode error.
'use strict'

const binding = require('./binding.js')
const { partsClass } = require('./parts.js')

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
    // Fields of at most 30 bits (the sequence, then each node field): small
    // integers (see parts.js).
    const small = [l.fields.find((f) => f.kind === 'sequence'), ...nodeFields].map((f) => f.bits <= 30)
    // The scratch array and the WebAssembly decoder's view both hold
    // [timestampMs, sequence, ...node values].
    const Parts = partsClass(
      nodeFields.map((f) => f.name),
      small,
      0,
    )
    const h = wasm === null ? -1 : wasm.handle(json)
    const fast = h < 0 ? null : { decode: wasm.decode, view: wasm.view, h }
    d = compileDecoder(Parts, native, fast) ?? genericDecoder(Parts, native, fast)
    if (byJson.size >= JSON_CACHE_MAX) byJson.delete(byJson.keys().next().value)
    byJson.set(json, d)
  }
  return d
}

// A layout's decode function, compiled so that each layout's decoder has
// call sites of its own (a closure made by one function would share them
// across layouts). Where code generation from strings is disabled, the
// generic decoder below is used.
//
// `fast` (or null): the WebAssembly decoder's function, output view and
// handle of this layout. It takes a bigint in 0..2^64 (`BigInt.asUintN`
// leaves it unchanged) and returns 0 when it decoded it; anything else goes
// to `native`, which decodes it or throws the binding's error. No ID goes
// through JavaScript arithmetic.
function compileDecoder(Parts, native, fast) {
  const body =
    fast === null
      ? 'return function decodeParts(id) {\n' +
        '  return new Parts(native(id), scratch)\n' +
        '}'
      : 'const { decode, view, h } = fast\n' +
        'return function decodeParts(id) {\n' +
        "  if (typeof id === 'bigint' && BigInt.asUintN(64, id) === id && decode(h, id) === 0) {\n" +
        '    return new Parts(id, view)\n' +
        '  }\n' +
        '  return new Parts(native(id), scratch)\n' +
        '}'
  try {
    return new Function('Parts', 'scratch', 'native', 'fast', body)(Parts, scratch, native, fast)
  } catch {
    return undefined
  }
}

function genericDecoder(Parts, native, fast) {
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

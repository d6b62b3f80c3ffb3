// The package entry point (CommonJS): the napi-rs binding (`binding.js`, which
// `napi build --js binding.js` generates, and the .node file it loads), plus
// what api-common.js adds in both JavaScript packages (`decode`, `compose`,
// `idBounds`, `Layout.prototype.decode`, toJSON/toString/util.inspect) and
// `Generator.prototype[Symbol.dispose]` (where the runtime has the symbol).
// The Rust core reads, checks and splits the ID and throws every error; the
// `Parts` object is built here, by parts.js, because an N-API property write
// costs ~300 ns on Node 20 and a JavaScript constructor a few ns
// (bench/RESULTS.md, Node section).
'use strict'

const binding = require('./binding.js')
const { cached, installShared, method, shapeOf } = require('./api-common.js')

const { Layout, PureGenerator, IdMask, formatId, parseId } = binding
const { toBase32, fromBase32, toBase62, fromBase62 } = binding

// What the native decoder writes: [timestampMs, sequence, ...node values],
// read back at once. One per module instance (each worker thread has its own).
const scratch = new Float64Array(8)

// Decoders by canonical layout JSON (a bounded cache): equal layouts share
// one decoder and one Parts class, so a call site decoding one layout stays
// monomorphic.
const byJson = new Map()

// On Bun an N-API call costs about 100 ns, twice the WebAssembly module's
// whole decode in the same runtime (bench/RESULTS.md, "JavaScript runtimes"):
// there `decode` goes through the snowmint-wasm package (a dependency: the
// same Rust core, loaded on the first decode). Its Parts objects come from
// the same parts.js and its errors carry the same codes.
const wasmDecode = process.versions.bun !== undefined

// On Deno a call through `Deno.dlopen` of the addon itself (V8's fast API:
// the bigint read as a u64 in compiled code) costs a fraction of an N-API
// call, which Deno emulates (bench/RESULTS.md, "JavaScript runtimes"). The C
// entry (src/ffi.rs) makes the same core call as the N-API decoder, into a
// scratch array of its own: it takes a registered layout's slot and a bigint
// in 0..2^64 (Deno would wrap any other, so anything else goes through
// N-API), and for an ID the core refuses returns 1: that ID then goes
// through N-API, which throws the core's error. `{ decode, view }`, or null
// where Deno.dlopen is missing or fails.
let denoFfi
function ffi() {
  if (denoFfi !== undefined) return denoFfi
  denoFfi = null
  const path = globalThis.Deno?.dlopen === undefined ? null : binding.__libraryPath()
  if (path === null) return null
  try {
    const { symbols } = globalThis.Deno.dlopen(path, {
      snowmint_node_decode: { parameters: ['u32', 'u64'], result: 'i32' },
      snowmint_node_scratch: { parameters: ['usize'], result: 'pointer' },
    })
    const at = symbols.snowmint_node_scratch(scratch.length)
    if (at === null) return null
    const view = new Float64Array(globalThis.Deno.UnsafePointerView.getArrayBuffer(at, scratch.byteLength))
    denoFfi = { decode: symbols.snowmint_node_decode, view }
  } catch {
    // No FFI permission or no fast path: N-API it is.
  }
  return denoFfi
}

// The decoder of a Layout object.
function decoderFor(layout) {
  return cached(byJson, layout.toJson(), () => {
    if (wasmDecode) {
      const wasmLayout = require('snowmint-wasm').Layout.parse(layout.toJson())
      return (id) => wasmLayout.decode(id)
    }
    const { Parts } = shapeOf(layout)
    const native = binding.__decoder(layout, scratch)
    const lib = ffi()
    const slot = lib === null ? null : binding.__ffiSlot(layout)
    if (slot !== null) {
      const { decode, view } = lib
      return (id) =>
        typeof id === 'bigint' && BigInt.asUintN(64, id) === id && decode(slot, id) === 0
          ? new Parts(id, view)
          : new Parts(native(id), scratch)
    }
    return (id) => new Parts(native(id), scratch)
  })
}

// Decoders by Layout object: on the object under a private symbol, or in a
// WeakMap for an object that cannot take one. `Layout.parse` copies a Layout
// and throws the core's error for a value that is not one.
const DECODER = Symbol('snowmint.decoder')
const byLayout = new WeakMap()

function decoderOf(layout) {
  if (typeof layout !== 'object' || layout === null) return decoderFor(Layout.parse(layout))
  let d = layout[DECODER] ?? byLayout.get(layout)
  if (d === undefined) {
    d = decoderFor(Layout.parse(layout))
    if (Object.isExtensible(layout)) Object.defineProperty(layout, DECODER, { value: d })
    else byLayout.set(layout, d)
  }
  return d
}

// A method, not a constructor (as class methods are).
const decodeMethod = { decode(id) { return decoderOf(this)(id) } }.decode
const { decode, compose, idBounds } = installShared(Layout, binding.Generator, decodeMethod)

// `using g = new Generator(...)` (explicit resource management) closes the
// generator, releasing its lease, where the runtime has `Symbol.dispose`.
if (typeof Symbol.dispose === 'symbol') {
  method(binding.Generator.prototype, Symbol.dispose, { [Symbol.dispose]() { this.close() } }[Symbol.dispose])
}

// On Bun an N-API call costs about 70 ns, twice Node's, and on Deno, which
// emulates N-API, about as much; a call of a plain C function through
// `bun:ffi` or `Deno.dlopen` costs a fraction (bench/RESULTS.md, "JavaScript
// runtimes"). There a Generator's own `nextId` calls the addon's C entry
// (src/ffi.rs) with the core generator's address, which the N-API `nextId`
// it replaces keeps alive (the closure holds that function). The entry makes
// the same core call; for any refusal the N-API `nextId` then throws the
// core's error. `Generator` is then a subclass of the addon's, adding only
// that; where the FFI is missing or fails, the addon's class. On Bun the
// entry returns the ID (2^64-1 for a refusal). Deno's fast calls cover no
// 64-bit result: its entry writes the ID into a slot of its own, read here
// through a view, and returns 0 (1 for a refusal). `(address) => nextId`,
// making the function a generator calls, or null.
const REFUSED = 0xffffffffffffffffn
function nextIdEntry() {
  const bun = process.versions.bun !== undefined
  if (!bun && globalThis.Deno?.dlopen === undefined) return null
  const path = binding.__libraryPath()
  if (path === null) return null
  try {
    if (bun) {
      // Not require('bun:ffi'): a bundler would try to resolve it.
      const { dlopen, FFIType } = process.getBuiltinModule('bun:ffi')
      const { symbols } = dlopen(path, {
        snowmint_node_next_id: { args: [FFIType.ptr], returns: FFIType.u64 },
      })
      const next = symbols.snowmint_node_next_id
      return (at, viaNapi) => function nextId() {
        const id = next(at)
        return id !== REFUSED ? id : viaNapi()
      }
    }
    // The address as a bigint 'u64': a number 'usize' argument takes
    // Deno's slow path.
    const { symbols } = globalThis.Deno.dlopen(path, {
      snowmint_node_next_id_slot: { parameters: ['u64'], result: 'i32' },
      snowmint_node_id_slot: { parameters: [], result: 'pointer' },
    })
    const next = symbols.snowmint_node_next_id_slot
    const slot = new BigUint64Array(globalThis.Deno.UnsafePointerView.getArrayBuffer(symbols.snowmint_node_id_slot(), 8))
    return (address, viaNapi) => {
      const at = BigInt(address)
      return function nextId() {
        return next(at) === 0 ? slot[0] : viaNapi()
      }
    }
  } catch {
    return null
  }
}

function generatorClass() {
  const entry = nextIdEntry()
  if (entry === null) return binding.Generator
  return class Generator extends binding.Generator {
    constructor(...args) {
      super(...args)
      // Assigned, so the own property keeps its attributes (not enumerable).
      this.nextId = entry(binding.__ffiGenerator(this), this.nextId)
    }
  }
}
const Generator = generatorClass()

module.exports = { Layout, Generator, PureGenerator, IdMask, decode, compose, idBounds, formatId, parseId }
Object.assign(module.exports, { toBase32, fromBase32, toBase62, fromBase62 })

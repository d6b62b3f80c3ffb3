// The WebAssembly half of the package's JavaScript: what only this package
// builds on wasm-bindgen's classes and functions (src/lib.rs, which do every
// conversion and check). The rest (`decode`, `compose`, `idBounds`, the
// Parts objects, toJSON/toString/util.inspect) is bindings-node/api-common.js
// and parts.js, shared with the native Node package. Each package's index.js
// exports what `install` returns.
//
// - `layout.decode(bigint)` passes the ID to the module as a u64
//   (wasm-bindgen's fastest argument) once it is known to be one (0..2^64:
//   the engine would wrap any other), to a function that returns 0, or 1
//   when the core refuses the ID (a Result would cost an array per call);
//   that ID and every other go through the module's conversion and checks,
//   which throw the core's error. The Parts object is filled from the
//   module's scratch values.
// - `decodeMany` decodes a BigUint64Array in one module call into columns,
//   views of the caller's buffer when one is given (the engine checks that
//   it is a large enough typed array); an invalid ID's error carries its
//   `index`.
//
// bindings-wasm/assemble.cjs copies this file into both packages (as
// CommonJS for pkg-node: only imports and `export function` declarations).
import { installShared, method, shapeOf } from './api-common.js'

export function install(raw) {
  const { Layout } = raw
  const SHAPE = Symbol('snowmint.parts')
  // The handle of a Layout object (set by the module; equal layouts share
  // one) -> the Parts constructor and the node field names.
  const HANDLE = Symbol.for('snowmint.layout')
  const shapes = new Map()
  function shapeOfLayout(layout) {
    let s = layout[SHAPE] ?? shapes.get(layout[HANDLE])
    if (s === undefined) {
      s = shapeOf(layout)
      shapes.set(layout[HANDLE], s)
    }
    return (layout[SHAPE] = s)
  }

  // The view of the module's scratch values; a growth of the module's
  // memory detaches it (length 0), and it is asked for again.
  let scratch = new Float64Array(0)

  const decodeMethod = {
    decode(id) {
      const s = this[SHAPE] ?? shapeOfLayout(this)
      if (typeof id !== 'bigint' || BigInt.asUintN(64, id) !== id || this.__decode(id) !== 0) {
        id = this.__decodeAny(id)
      }
      if (scratch.length === 0) scratch = raw.__scratch()
      return new s.Parts(id, scratch)
    },
  }.decode

  method(Layout.prototype, 'decodeMany', {
    decodeMany(ids, into) {
      const s = this[SHAPE] ?? shapeOfLayout(this)
      // Anything else than a BigUint64Array: the module's TypeError
      // (`invalid_id`) for an ID of the wrong type (Object(x) is never a
      // primitive, so it always throws).
      if (!(ids instanceof BigUint64Array)) this.__decodeAny(Object(ids))
      const n = ids.length
      const w = 2 + s.names.length
      // Decoded by the module in one call, straight into the caller's buffer
      // when it is a large enough Float64Array; otherwise into a new one that
      // the engine then copies into `into` (refusing, with its own TypeError or
      // RangeError, anything but a large enough typed array).
      const direct = into instanceof Float64Array && into.length >= n * w
      const columns = direct ? into.subarray(0, n * w) : new Float64Array(n * w)
      const bad = this.__decodeMany(ids, columns)
      if (bad >= 0) {
        try {
          this.__decodeAny(ids[bad])
        } catch (e) {
          e.index = bad
          throw e
        }
      }
      const all = into == null || direct ? columns : into
      if (all !== columns) all.set(columns)
      const nodes = {}
      for (let i = 0; i < s.names.length; i++) nodes[s.names[i]] = all.subarray((2 + i) * n, (3 + i) * n)
      return { timestampMs: all.subarray(0, n), sequence: all.subarray(n, 2 * n), nodes }
    },
  }.decodeMany)

  const { decode, compose, idBounds } = installShared(Layout, raw.Generator, decodeMethod)
  const { Generator, PureGenerator, formatId, fromBase32, fromBase62, parseId, toBase32, toBase62 } = raw
  return {
    Generator, Layout, PureGenerator, compose, decode, formatId, fromBase32, fromBase62, idBounds, parseId,
    toBase32, toBase62,
  }
}

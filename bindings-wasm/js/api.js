// The hand-written JavaScript layer of the package: `decode` and
// `Layout.prototype.decode`, on raw exports of the module (src/lib.rs,
// "raw exports") that take and return numbers only.
//
// Why: through wasm-bindgen's glue, a decode took four calls across the
// JavaScript/WebAssembly boundary (the call, the argument's type, a BigInt's
// bits, building the result), about 0.5 us. Here a bigint ID in 0..2^64 is
// one call: the module writes [id, timestampMs, sequence, node values...]
// into a static buffer of its memory and returns a status; this file reads
// the buffer through a cached Float64Array view and builds the Parts object.
//
// Value conversions only: the ID checks, the layout rules and the error
// codes and messages stay in the Rust core. This file only branches on
// `typeof` to pick the raw export, and throws the Error object the module
// builds for a failed call (`__error`).
//
// bindings-wasm/build.sh copies this file into both packages (as CommonJS for
// pkg-node: it is only `export function` declarations) and writes each
// package's index.js, which calls `install` with the wasm-bindgen module.

/** Adds `decode` to `raw.Layout.prototype` and returns the free `decode`. */
export function install(raw) {
  const { Layout } = raw

  // Views of the module's result buffer (see `Scratch` in src/lib.rs). A
  // view of a buffer that memory growth detached has length 0: re-created
  // then (and on first use, after the module is instantiated).
  let memory = null
  let base = 0
  let f64 = new Float64Array(0)
  let u64 = new BigUint64Array(0)
  function views() {
    if (memory === null) {
      memory = raw.__memory()
      base = raw.__scratch()
    }
    f64 = new Float64Array(memory.buffer, base, 9)
    u64 = new BigUint64Array(memory.buffer, base, 1)
  }

  // Per layout (by its canonical JSON, so equal layouts share a prototype):
  // { P: the Parts constructor, h: the module's handle for the layout }, kept
  // on each Layout object too.
  const SHAPE = Symbol('snowmint.parts')
  const shapes = new Map()
  const FIXED = ['id', 'timestampMs', 'date', 'sequence', 'nodes']

  function shapeOf(layout) {
    const json = layout.toJson()
    let s = shapes.get(json)
    if (s === undefined) {
      const P = partsClass(layout.fields.filter((f) => f.kind === 'node').map((f) => f.name))
      s = { P, h: raw.__register(layout) }
      if (shapes.size >= 256) shapes.delete(shapes.keys().next().value)
      shapes.set(json, s)
    }
    layout[SHAPE] = s
    return s
  }

  // Values of node fields named like a fixed property (not copied to the top
  // level), kept on the Parts object under this symbol, not enumerable.
  const HIDDEN = Symbol('snowmint.nodes')

  // Parts objects of one layout. Own properties, in this order: `id`,
  // `timestampMs`, `sequence`, the node fields not named like a fixed
  // property. `date` and `nodes` are getters of the prototype, computed when
  // read (a new Date, a new object per read): a Date costs more than the
  // rest of a decode, and most callers never read them. The same shape as
  // the native Node package's.
  //
  // The constructor is compiled with the layout's field names written out
  // (about 2.5x faster than setting them in a loop or from variables: V8
  // then sees one fixed object shape). The names come from a validated
  // layout ([a-z][a-z0-9_]*) and are quoted with JSON.stringify all the
  // same. In a web page (which may forbid code generation from strings by
  // its Content-Security-Policy, as the decoder page does) and wherever the
  // compilation fails, the generic constructor below is used.
  function partsClass(names) {
    const top = names.map((n) => !FIXED.includes(n))
    let Parts
    try {
      // A page's CSP would refuse (and log) the compilation: pages use the
      // generic constructor, Node and workers the compiled one.
      if (globalThis.document !== undefined) throw new Error('a page')
      const q = JSON.stringify
      const own = names.map((n, i) => (top[i] ? `this[${q(n)}] = f[${3 + i}]\n` : '')).join('')
      const hidden = names.map((n, i) => (top[i] ? '' : `f[${3 + i}]`)).filter(Boolean)
      const body =
        'return function Parts(id, f) {\n' +
        'this.id = id\nthis.timestampMs = f[1]\nthis.sequence = f[2]\n' +
        own +
        (hidden.length ? `Object.defineProperty(this, HIDDEN, { value: [${hidden.join(', ')}] })\n` : '') +
        '}'
      Parts = new Function('HIDDEN', body)(HIDDEN)
    } catch {
      Parts = function Parts(id, f) {
        this.id = id
        this.timestampMs = f[1]
        this.sequence = f[2]
        const hidden = []
        for (let i = 0; i < names.length; i++) {
          if (top[i]) this[names[i]] = f[3 + i]
          else hidden.push(f[3 + i])
        }
        if (hidden.length) Object.defineProperty(this, HIDDEN, { value: hidden })
      }
    }
    const k = names.length
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
        for (let i = 0; i < k; i++) nodes[names[i]] = top[i] ? this[names[i]] : this[HIDDEN][h++]
        return nodes
      },
      configurable: true,
    })
    return Parts
  }

  function fail() {
    throw raw.__error()
  }

  function decodeWith(layout, id) {
    const s = layout[SHAPE] ?? shapeOf(layout)
    if (typeof id === 'bigint' && BigInt.asUintN(64, id) === id) {
      if (raw.__decode(s.h, id) !== 0) fail()
      if (f64.length === 0) views()
      return new s.P(id, f64)
    }
    // Strings, numbers, out-of-range bigints, wrong types: converted (or
    // refused) by the module as for every other function.
    if (raw.__decodeAny(s.h, id) !== 0) fail()
    if (f64.length === 0) views()
    return new s.P(u64[0], f64)
  }

  Object.defineProperty(Layout.prototype, 'decode', {
    value: function decode(id) {
      return decodeWith(this, id)
    },
    writable: true,
    configurable: true,
  })

  // Layout strings of the free `decode`, parsed by the core once each.
  const parsed = new Map()
  function decode(id, layout) {
    let l
    if (layout instanceof Layout) {
      l = layout
    } else if (typeof layout === 'string') {
      l = parsed.get(layout)
      if (l === undefined) {
        l = raw.__layoutArg(layout)
        if (parsed.size >= 64) parsed.delete(parsed.keys().next().value)
        parsed.set(layout, l)
      }
    } else {
      l = raw.__layoutArg(layout) // a TypeError (invalid_layout), from the module
    }
    return decodeWith(l, id)
  }

  return { decode }
}

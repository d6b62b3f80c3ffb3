// The JavaScript half of the package: its classes and functions, on the
// module's exports (src/lib.rs), which take and return numbers and strings
// only. Each package's index.js calls `install` with the wasm-bindgen module
// and exports what it returns.
//
// Why: an export taking JavaScript values cost wasm-bindgen a shim of about
// 0.5 KB plus the conversions inlined into it (the module was twice its size
// budget), and a decode through that glue took four calls across the
// boundary, about 0.5 us. Now a call pushes its arguments, each tagged with
// its JavaScript type (`push`), then calls one operation, which converts and
// checks them in Rust and returns a status; numeric results are read from a
// static buffer of the module's memory through cached typed-array views.
// `layout.decode(bigint)` is one call with no pushed arguments.
//
// Value conversions only: the ID checks, the layout rules and the error
// codes and messages all stay in Rust (the core, and src/lib.rs for
// argument types). This file branches on `typeof` to tag arguments, maps a
// failed status to an Error, TypeError or RangeError with the core's code
// (from the table `__string` gives) and the module's message, and builds
// result objects.
//
// bindings-wasm/build.sh copies this file into both packages (as CommonJS for
// pkg-node: it is only imports from './parts.js' and `export function`
// declarations).

// The Parts objects of `decode`: bindings-node/parts.js, shared with the
// native package (build.sh copies it beside this file in both packages).
import { partsClass } from './parts.js'

// `memoryOf()` returns the instance's `WebAssembly.Memory` (its `memory`
// export): index.js gets it from the wasm-bindgen glue (pkg-node) or from
// what `init`/`initSync` return (pkg-web), so it is asked for on first use.
export function install(raw, memoryOf) {
  // ---- the module's operations -------------------------------------------------
  // `__op(op, h, x)` runs one operation on the pushed arguments (`h`: a
  // handle or a variant) and returns its status; `__string(what, h)` returns
  // a string. The numbers are those of `op` and `string` in src/lib.rs.
  const DECODE_ANY = 0
  const BATCH = 1
  const DECODE_MANY = 2
  const LAYOUT = 3
  const LAYOUT_NUMBERS = 4
  const COMPOSE = 5
  const BOUNDS = 6
  const PLAUSIBLE = 7
  const FORMAT = 8
  const PARSE = 9
  const GEN_NEW = 10
  const GEN_NEXT = 11
  const GEN_NEXT_IDS = 12
  const GEN_LAYOUT = 13
  const PURE_NEXT = 14
  // __string
  const CODES = 0
  const MESSAGE = 1
  const TEXT = 2
  const LAYOUT_JSON = 3
  const PRESET_NAME = 4
  const FIELDS = 5
  const PRESETS = 6

  // ---- views of the module's memory ----------------------------------------
  // Slots of the result buffer (`SCRATCH` in src/lib.rs) as f64 and u64. A
  // view of a buffer that memory growth detached has length 0: re-created
  // then (and on first use, after the module is instantiated).
  let memory = null
  let base = 0
  let f64 = new Float64Array(0)
  let u64 = new BigUint64Array(0)
  function views() {
    if (memory === null) {
      memory = memoryOf()
      base = raw.__scratch()
    }
    f64 = new Float64Array(memory.buffer, base, 9)
    u64 = new BigUint64Array(memory.buffer, base, 2)
  }
  function num(i) {
    if (f64.length === 0) views()
    return f64[i]
  }
  function big(i) {
    if (f64.length === 0) views()
    return u64[i]
  }

  // ---- arguments and errors ----------------------------------------------------
  // The strings of list `what` (CODES or PRESETS), read one by one up to
  // the empty string that ends it.
  function list(what) {
    const out = []
    for (let s; (s = raw.__string(what, out.length)) !== ''; ) out.push(s)
    return out
  }
  const codes = []
  // Throws unless `st` is 0: the class and code are in the status, the
  // message waits in the module.
  function check(st) {
    if (st === 0) return
    if (codes.length === 0) codes.push(...list(CODES))
    const s = st - 1
    const message = raw.__string(MESSAGE, 0)
    const cls = s >> 4
    const e = cls === 1 ? new TypeError(message) : cls === 2 ? new RangeError(message) : new Error(message)
    e.code = codes[s & 15]
    throw e
  }

  // Pushes one argument, tagged with its type. `spread`: an object's own
  // enumerable keys and values follow it (nodes and options); other objects
  // are pushed as "an object".
  function push(v, spread) {
    switch (typeof v) {
      case 'number':
        return raw.__argNumber(v)
      case 'bigint': {
        const low = BigInt.asUintN(64, v)
        return raw.__argBigInt(low, v < 0n, low === v)
      }
      case 'string':
        return raw.__argString(v)
      case 'undefined':
        return raw.__argOther(0, 0)
      case 'object': {
        if (v === null) return raw.__argOther(1, 0)
        if (v instanceof Layout) return raw.__argOther(3, v[HANDLE])
        if (v instanceof BigUint64Array) return raw.__argOther(4, v.length)
        if (v instanceof Float64Array) return raw.__argOther(5, v.length)
        if (!spread) return raw.__argOther(2, 0)
        let keys, values
        try {
          keys = Object.keys(v)
          values = keys.map((k) => v[k])
        } catch (e) {
          raw.__argOther(7, 0) // a getter or proxy threw: drop this call's arguments
          throw e
        }
        raw.__argOther(2, keys.length)
        for (let i = 0; i < keys.length; i++) {
          raw.__argString(keys[i])
          push(values[i], false)
        }
        return
      }
      default:
        return raw.__argOther(6, 0)
    }
  }

  // ---- Layout --------------------------------------------------------------------
  const HANDLE = Symbol('snowmint.layout')
  const SHAPE = Symbol('snowmint.parts')
  const NONE = 0xffffffff // "the layout is the first pushed argument"
  let internal = false

  /** A layout: make one with `Layout.preset`, `Layout.fromJson` or `Layout.parse`. */
  class Layout {
    constructor(h) {
      if (!internal) throw new TypeError('use Layout.preset, Layout.fromJson or Layout.parse')
      this[HANDLE] = h
    }
    static preset(name) {
      return layoutFrom(0, name)
    }
    static fromJson(json) {
      return layoutFrom(1, json)
    }
    static parse(s) {
      return layoutFrom(2, s)
    }
    static presets() {
      return list(PRESETS)
    }
    toJson() {
      return raw.__string(LAYOUT_JSON, this[HANDLE])
    }
    get epochMs() {
      return this.#num(1)
    }
    get timeUnitMs() {
      return this.#num(2)
    }
    get totalBits() {
      return this.#num(3)
    }
    get maxId() {
      check(raw.__op(LAYOUT_NUMBERS, this[HANDLE], 0))
      return big(0)
    }
    get timeEndMs() {
      return this.#num(4)
    }
    get i64EndMs() {
      return this.#num(5)
    }
    get jsSafeEndMs() {
      return this.#num(6)
    }
    #num(i) {
      check(raw.__op(LAYOUT_NUMBERS, this[HANDLE], 0))
      return num(i)
    }
    get presetName() {
      return raw.__string(PRESET_NAME, this[HANDLE]) || null
    }
    get fields() {
      return raw.__string(FIELDS, this[HANDLE]).split(',').map((f) => {
        const [name, bits, shift, kind] = f.split(' ')
        return { name, bits: Number(bits), shift: Number(shift), kind }
      })
    }
    decode(id) {
      return decodeWith(this, id)
    }
    compose(timestampMs, sequence, nodes) {
      push(timestampMs)
      push(sequence)
      push(nodes, true)
      check(raw.__op(COMPOSE, this[HANDLE], 0))
      return big(0)
    }
    idBounds(timestampMs) {
      push(timestampMs)
      check(raw.__op(BOUNDS, this[HANDLE], 0))
      return [big(0), big(1)]
    }
    isPlausible(id, nowMs) {
      push(id)
      push(nowMs)
      check(raw.__op(PLAUSIBLE, this[HANDLE], 0))
      return num(1) === 1
    }
    decodeMany(ids, into) {
      push(ids)
      push(into)
      const h = this[HANDLE]
      check(raw.__op(BATCH, h, 0))
      const n = ids.length
      if (f64.length === 0 || f64.buffer !== memory.buffer) views()
      const total = f64[3]
      const outAt = f64[2]
      new BigUint64Array(memory.buffer, f64[1], n).set(ids)
      check(raw.__op(DECODE_MANY, h, 0))
      if (f64.length === 0) views()
      const all = into == null ? new Float64Array(total) : into
      all.set(new Float64Array(memory.buffer, outAt, total))
      const names = (this[SHAPE] ?? shapeOf(this)).names
      const nodes = {}
      for (let i = 0; i < names.length; i++) nodes[names[i]] = all.subarray((2 + i) * n, (3 + i) * n)
      return { timestampMs: all.subarray(0, n), sequence: all.subarray(n, 2 * n), nodes }
    }
  }

  function wrap(h) {
    internal = true
    try {
      return new Layout(h)
    } finally {
      internal = false
    }
  }

  function layoutFrom(how, v) {
    push(v)
    check(raw.__op(LAYOUT, how, 0))
    return wrap(num(1))
  }

  // ---- decode ----------------------------------------------------------------------
  // Per layout (by its canonical JSON, so equal layouts share a prototype):
  // { P: the Parts constructor, names: the node field names, h: the handle
  // (the module interns layouts: equal layouts have one handle) }, kept on
  // each Layout object too.
  const shapes = new Map()

  function shapeOf(layout) {
    const json = layout.toJson()
    let s = shapes.get(json)
    if (s === undefined) {
      const fields = layout.fields
      const nodes = fields.filter((f) => f.kind === 'node')
      const names = nodes.map((f) => f.name)
      // Fields of at most 30 bits (the sequence, then each node field): small
      // integers (see parts.js).
      const small = [fields.find((f) => f.kind === 'sequence'), ...nodes].map((f) => f.bits <= 30)
      // The scratch slots: 0 the ID, then [timestampMs, sequence, ...nodes].
      s = { P: partsClass(names, small, 1), names, h: layout[HANDLE] }
      if (shapes.size >= 256) shapes.delete(shapes.keys().next().value)
      shapes.set(json, s)
    }
    layout[SHAPE] = s
    return s
  }

  function decodeWith(layout, id) {
    const s = layout[SHAPE] ?? shapeOf(layout)
    if (typeof id === 'bigint' && BigInt.asUintN(64, id) === id) {
      check(raw.__decode(s.h, id))
      if (f64.length === 0) views()
      return new s.P(id, f64)
    }
    // Strings, numbers, out-of-range bigints, wrong types: converted (or
    // refused) by the module as for every other function.
    push(id)
    check(raw.__op(DECODE_ANY, layout[HANDLE], 0))
    if (f64.length === 0) views()
    return new s.P(u64[0], f64)
  }

  // Layout strings of the free functions, parsed by the core once each.
  const parsed = new Map()
  function layoutArg(layout) {
    if (layout instanceof Layout) return layout
    if (typeof layout !== 'string') {
      push(layout)
      check(raw.__op(LAYOUT, 3, 0)) // a TypeError (invalid_layout), from the module
    }
    let l = parsed.get(layout)
    if (l === undefined) {
      l = layoutFrom(2, layout)
      if (parsed.size >= 64) parsed.delete(parsed.keys().next().value)
      parsed.set(layout, l)
    }
    return l
  }

  /** Splits an ID into its parts under `layout` (a Layout, or a preset name or JSON descriptor). */
  function decode(id, layout) {
    return decodeWith(layoutArg(layout), id)
  }

  function compose(layout, timestampMs, sequence, nodes) {
    push(layout)
    push(timestampMs)
    push(sequence)
    push(nodes, true)
    check(raw.__op(COMPOSE, NONE, 0))
    return big(0)
  }

  function idBounds(layout, timestampMs) {
    push(layout)
    push(timestampMs)
    check(raw.__op(BOUNDS, NONE, 0))
    return [big(0), big(1)]
  }

  // ---- ID strings --------------------------------------------------------------------
  function format(how, id, fmt) {
    push(id)
    if (how === 2) push(fmt)
    check(raw.__op(FORMAT, how, 0))
    return raw.__string(TEXT, 0)
  }
  function parse(how, s, fmt) {
    push(s)
    if (how === 2) push(fmt)
    check(raw.__op(PARSE, how, 0))
    return big(0)
  }
  const toBase32 = (id) => format(0, id)
  const toBase62 = (id) => format(1, id)
  const formatId = (id, fmt) => format(2, id, fmt)
  const fromBase32 = (s) => parse(0, s)
  const fromBase62 = (s) => parse(1, s)
  const parseId = (s, fmt) => parse(2, s, fmt)

  // ---- generators --------------------------------------------------------------------
  const GEN = Symbol('snowmint.generator')
  // Frees a generator's state in the module when its object is collected.
  const collected = new FinalizationRegistry((g) => raw.__genFree(g))

  // 64 random bits for `random:N` sequence starts when the options give no
  // seed: Web Crypto, or Math.random where there is none.
  function randomSeed() {
    const w = new Uint32Array(2)
    if (globalThis.crypto?.getRandomValues) globalThis.crypto.getRandomValues(w)
    else for (let i = 0; i < 2; i++) w[i] = Math.random() * 4294967296
    return (BigInt(w[0]) << 32n) | BigInt(w[1])
  }

  function newGenerator(self, pure, layout, nodes, options) {
    push(layout)
    push(nodes, true)
    push(options, true)
    push(pure ? 0n : randomSeed())
    check(raw.__op(GEN_NEW, pure, 0))
    const g = num(1)
    self[GEN] = g
    collected.register(self, g)
  }

  /**
   * The generator on `Date.now()`. Generators with the same layout and node
   * values share one state in the module instance, so they never repeat an ID.
   */
  class Generator {
    constructor(layout, nodes, options) {
      newGenerator(this, 0, layout, nodes, options)
    }
    nextId() {
      check(raw.__op(GEN_NEXT, this[GEN], 0))
      return big(0)
    }
    nextIdString() {
      check(raw.__op(GEN_NEXT, this[GEN], 1))
      return raw.__string(TEXT, 0)
    }
    nextIds(n) {
      push(n)
      check(raw.__op(GEN_NEXT_IDS, this[GEN], 0))
      if (f64.length === 0) views()
      return new BigUint64Array(memory.buffer, f64[1], f64[2]).slice()
    }
    get layout() {
      check(raw.__op(GEN_LAYOUT, this[GEN], 0))
      return wrap(num(1))
    }
  }

  /** The pure generator: the caller passes the time (`next(nowMs)`). */
  class PureGenerator {
    constructor(layout, nodes, options) {
      newGenerator(this, 1, layout, nodes, options)
    }
    next(nowMs) {
      push(nowMs)
      check(raw.__op(PURE_NEXT, this[GEN], 0))
      return num(2) === 1 ? { retryAt: f64[1] } : { id: u64[0] }
    }
  }

  return {
    Generator, Layout, PureGenerator, compose, decode, formatId, fromBase32, fromBase62, idBounds, parseId,
    toBase32, toBase62,
  }
}

// The `Parts` objects that `decode` returns, written once for both
// JavaScript packages: the native Node package ships this file as it is
// (api-common.js requires it), and bindings-wasm/assemble.cjs copies it into
// the WebAssembly packages (pkg-node as it is, pkg-web as an ES module: the
// file is `'use strict'`, function declarations and one
// `module.exports = {...}` line, which is what that conversion expects).
// The shared suite in tests/js checks the shape against both.
//
// Parts objects of one layout: own properties, in this order, `id`,
// `timestampMs`, `sequence`, then the node fields not named like a fixed
// property (those stay reachable through `nodes`). `date` and `nodes` are
// getters of the per-layout prototype, computed when read (a new Date, a new
// object per read): a Date costs more than the rest of a decode, and most
// callers never read them. No ID arithmetic here: every value was decoded by
// the Rust core.
'use strict'

// Field names that a node field never overrides at the top level of Parts.
const FIXED = ['id', 'timestampMs', 'date', 'sequence', 'nodes']

// Values of node fields named like a fixed property (not copied to the top
// level), kept on the Parts object under this symbol, not enumerable.
const HIDDEN = Symbol('snowmint.nodes')

/**
 * The Parts constructor of a layout whose node fields are `names`:
 * `new Parts(id, values)`, where `values[base]` is the time (Unix ms),
 * `values[base + 1]` the sequence and `values[base + 2 + i]` node field `i`.
 * `small` (the sequence, then each node field): whether the field has at
 * most 30 bits.
 *
 * The constructor is compiled with the layout's field names written out
 * (about twice as fast as setting them in a loop: the engine sees one fixed
 * object shape). The names come from a validated layout ([a-z][a-z0-9_]*)
 * and are quoted with JSON.stringify all the same. In a web page (whose
 * Content-Security-Policy may forbid code generation from strings, and
 * would report the attempt) and wherever the compilation fails
 * (`--disallow-code-generation-from-strings`), a generic constructor is used.
 *
 * A small field's value is read as an int32 (`| 0`: the same integer, exact
 * below 2^31), which V8 stores in the object without boxing a double, about
 * 3-4 ns less per decode.
 */
function partsClass(names, small, base) {
  const top = names.map((n) => !FIXED.includes(n))
  const Parts = compiledParts(names, small, base, top) ?? genericParts(names, base, top)
  Object.defineProperty(Parts.prototype, 'date', {
    get() {
      return new Date(this.timestampMs)
    },
    configurable: true,
  })
  define(Parts.prototype, {
    // Own properties, the ID as a decimal string (JSON has no 64-bit
    // integers), and `nodes` when a node field is named like a fixed
    // property (and so is not at the top level).
    toJSON() {
      const json = { ...this, id: String(this.id) }
      if (this[HIDDEN] !== undefined) json.nodes = this.nodes
      return json
    },
    toString() {
      return String(this.id)
    },
    [INSPECT]() {
      const nodes = Object.entries(this.nodes).map(([k, v]) => ` ${k} ${v}`).join('')
      return `Parts <${this.id} ${iso(this.timestampMs)} sequence ${this.sequence}${nodes}>`
    },
  })
  Object.defineProperty(Parts.prototype, 'nodes', {
    get() {
      const nodes = {}
      let h = 0
      for (let i = 0; i < names.length; i++) nodes[names[i]] = top[i] ? this[names[i]] : this[HIDDEN][h++]
      return nodes
    },
    configurable: true,
  })
  return Parts
}

function compiledParts(names, small, base, top) {
  if (globalThis.document !== undefined) return undefined // a web page
  const q = JSON.stringify
  const value = (k) => `f[${base + 1 + k}]${small[k] ? ' | 0' : ''}` // k: 0 sequence, 1.. nodes
  const own = names.map((n, i) => (top[i] ? `this[${q(n)}] = ${value(1 + i)}\n` : '')).join('')
  const hidden = names.map((n, i) => (top[i] ? '' : value(1 + i))).filter(Boolean)
  const body =
    'return function Parts(id, f) {\n' +
    `this.id = id\nthis.timestampMs = f[${base}]\nthis.sequence = ${value(0)}\n` +
    own +
    (hidden.length ? `Object.defineProperty(this, HIDDEN, { value: [${hidden.join(', ')}] })\n` : '') +
    '}'
  try {
    return new Function('HIDDEN', body)(HIDDEN)
  } catch {
    return undefined
  }
}

function genericParts(names, base, top) {
  return function Parts(id, f) {
    this.id = id
    this.timestampMs = f[base]
    this.sequence = f[base + 1]
    const hidden = []
    for (let i = 0; i < names.length; i++) {
      if (top[i]) this[names[i]] = f[base + 2 + i]
      else hidden.push(f[base + 2 + i])
    }
    if (hidden.length) Object.defineProperty(this, HIDDEN, { value: hidden })
  }
}

// Node's util.inspect calls an object's method under this symbol (the
// registered symbol that `util.inspect.custom` is; elsewhere it is unused).
const INSPECT = Symbol.for('nodejs.util.inspect.custom')

// Methods (writable, configurable, not enumerable), as classes define them.
function define(proto, methods) {
  for (const key of Reflect.ownKeys(methods)) {
    Object.defineProperty(proto, key, { value: methods[key], writable: true, configurable: true })
  }
}

// Unix ms as ISO 8601, or the number where a Date cannot hold it.
function iso(ms) {
  const d = new Date(ms)
  return Number.isNaN(d.getTime()) ? `${ms} ms` : d.toISOString()
}

/**
 * `toJSON`, `toString` and the util.inspect method of the package's Layout
 * and Generator classes (the same in both packages). A layout's JSON is its
 * canonical descriptor as an object (`Layout.fromJson(JSON.stringify(l))`
 * gives it back) and its string the descriptor itself; a generator's JSON is
 * its layout, node values and (native package) lease. Inspection shows only
 * these public values, never a handle, a seed or a lease store's URL.
 */
function present(Layout, Generator) {
  define(Layout.prototype, {
    toJSON() {
      return JSON.parse(this.toJson())
    },
    toString() {
      return this.toJson()
    },
    [INSPECT]() {
      const fields = this.fields.map((f) => ` ${f.name}:${f.bits}`).join('')
      const unit = this.timeUnitMs === 1 ? '' : ` unit ${this.timeUnitMs}ms`
      return `Layout <${this.presetName ?? 'custom'}${fields} epoch ${iso(this.epochMs)}${unit}>`
    },
  })
  define(Generator.prototype, {
    toJSON() {
      const json = { layout: this.layout.toJSON(), nodes: this.nodes }
      if ('lease' in this) json.lease = this.lease
      return json
    },
    [INSPECT]() {
      const l = this.layout
      const nodes = Object.entries(this.nodes).map(([k, v]) => ` ${k} ${v}`).join('')
      const lease = 'lease' in this ? this.lease : null
      const leased = lease === null ? '' : ` (${lease.field} leased${lease.lost === null ? '' : ', lost'})`
      return `Generator <${l.presetName ?? 'custom'}${nodes}${leased}>`
    },
  })
}

module.exports = { partsClass, present }

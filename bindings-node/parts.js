// The `Parts` objects that `decode` returns, written once for both
// JavaScript packages: the native Node package ships this file as it is
// (index.js requires it), and bindings-wasm/build.sh copies it into the
// WebAssembly packages (pkg-node as it is, pkg-web as an ES module: the file
// is `'use strict'`, function declarations and one `module.exports = {...}`
// line, which is what that conversion expects). The shared suite in tests/js
// checks the shape against both.
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

module.exports = { partsClass }

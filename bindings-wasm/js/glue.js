// JavaScript half of the binding's conversions (imported by src/lib.rs with
// `#[wasm_bindgen(module = "/js/glue.js")]`). Value conversions only: every
// rule about IDs, layouts and generation stays in the Rust core.
//
// Why this file exists: building a result object from Rust costs one call
// across the boundary per property (`Reflect.set`), which V8 cannot optimise
// (about 5 us per decoded ID); one call here builds the whole object. Reading
// an argument's type the same way costs one call instead of several.
//
// Written as plain `export function`/`export class` declarations:
// bindings-wasm/build.sh turns the copy in the Node (CommonJS) package into
// CommonJS by removing `export ` and adding `module.exports`.

// What kind of value an argument is, in one call:
// 0 a BigInt whose low 64 bits are the whole value (0 <= v < 2^64),
// 1 any other BigInt, 2 a number, 3 a string, 4 undefined or null,
// 5 another object, 6 anything else (boolean, function, symbol).
export function kindOf(v) {
  switch (typeof v) {
    case 'bigint': return BigInt.asUintN(64, v) === v ? 0 : 1
    case 'number': return 2
    case 'string': return 3
    case 'undefined': return 4
    case 'object': return v === null ? 4 : 5
    default: return 6
  }
}

// The low 64 bits of a BigInt (the core decides what a lossy one means).
export function lowBits(v) {
  return BigInt.asUintN(64, v)
}

// A number argument's value (called only for numbers).
export function numberOf(v) {
  return v
}

// Builds Parts objects for one set of node field names (a comma-separated
// list): { id, timestampMs, date, sequence, <node fields>..., nodes }.
export class Shape {
  constructor(names) {
    const ns = names === '' ? [] : names.split(',')
    this.names = ns
    // `make` is a closure over this layout's names, written out for up to
    // six node fields (the core's limit) rather than looping over them:
    // V8 then sees the same property name at every store, which is about
    // twice as fast. Node fields are also copied to the top level unless the
    // name is one of the fixed ones.
    const k = ns.length
    const [n0, n1, n2, n3, n4, n5] = ns
    const [t0, t1, t2, t3, t4, t5] = ns.map((n) => !['id', 'date', 'sequence', 'nodes'].includes(n))
    this.make = (id, ms, seq, a, b, c, d, e, f) => {
      const p = { id, timestampMs: ms, date: new Date(ms), sequence: seq }
      const nodes = {}
      if (k > 0) {
        nodes[n0] = a
        if (t0) p[n0] = a
        if (k > 1) {
          nodes[n1] = b
          if (t1) p[n1] = b
          if (k > 2) {
            nodes[n2] = c
            if (t2) p[n2] = c
            if (k > 3) {
              nodes[n3] = d
              if (t3) p[n3] = d
              if (k > 4) {
                nodes[n4] = e
                if (t4) p[n4] = e
                if (k > 5) {
                  nodes[n5] = f
                  if (t5) p[n5] = f
                }
              }
            }
          }
        }
      }
      p.nodes = nodes
      return p
    }
  }

  // Layout.decodeMany's result from `buf`, a view of WebAssembly memory
  // holding 2 + node count columns of `n` values: copied once (into `into`
  // when given; Rust checked its length), then one view per column.
  columns(buf, n, into) {
    const all = into == null ? new Float64Array(buf.length) : into
    all.set(buf)
    const nodes = {}
    for (let i = 0; i < this.names.length; i++) nodes[this.names[i]] = all.subarray((2 + i) * n, (3 + i) * n)
    return { timestampMs: all.subarray(0, n), sequence: all.subarray(n, 2 * n), nodes }
  }
}

// An Error (kind 0), TypeError (1) or RangeError (2) with a `code`.
export function makeError(kind, code, message) {
  const e = kind === 1 ? new TypeError(message) : kind === 2 ? new RangeError(message) : new Error(message)
  e.code = code
  return e
}

export function idResult(id) {
  return { id }
}

export function retryResult(ms) {
  return { retryAt: ms }
}

export function pair(lo, hi) {
  return [lo, hi]
}

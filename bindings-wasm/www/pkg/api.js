
/** Adds `decode` to `raw.Layout.prototype` and returns the free `decode`. */
export function install(raw) {
  const { Layout } = raw
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
  const HIDDEN = Symbol('snowmint.nodes')
  function partsClass(names) {
    const top = names.map((n) => !FIXED.includes(n))
    let Parts
    try {
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

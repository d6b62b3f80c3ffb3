// vectors/arguments.json: how a loose argument becomes a value or an error
// (code and class), decided once by the core's conversion layer
// (docs/SEMANTICS.md, "Arguments"). Both JavaScript packages must agree.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'

import { argument as js } from './helpers.mjs'
import pkg, { vectors } from './pkg.mjs'

const { Generator, PureGenerator } = pkg
const T = 1700000000000
const NODES = { datacenter: 1, worker: 1 }

/** The call each kind of argument goes to, with `v` in its place. */
const calls = {
  id: (v) => pkg.formatId(v, 'decimal'),
  time: (v) => pkg.idBounds('twitter', v).map(String),
  sequence: (v) => String(pkg.compose('twitter', T, v, NODES)),
  node: (v) => String(pkg.compose('twitter', T, 0, { datacenter: 1, worker: v })),
  count: (v) => new Generator('twitter', NODES).nextIds(v).length,
  layout: (v) => pkg.idBounds(v, T).map(String),
  nodes: (v) => String(pkg.compose('twitter', T, 0, v)),
  options: (v) => {
    const r = new PureGenerator('twitter', NODES, v).next(T)
    return 'id' in r ? String(r.id) : { retry_at: r.retryAt }
  },
  format: (v) => pkg.formatId(1541815603606036480n, v),
}

const CLASSES = { type: TypeError, range: RangeError }

describe('arguments.json', () => {
  const { cases } = vectors('arguments')
  test('has cases of every kind', () => {
    assert.deepEqual([...new Set(cases.map((c) => c.arg))].sort(), Object.keys(calls).sort())
  })
  for (const c of cases) {
    test(`${c.arg} ${JSON.stringify(c.value)}`, () => {
      const call = () => calls[c.arg](js(c.value))
      if (c.error === undefined) {
        assert.deepEqual(call(), c.expect)
        return
      }
      assert.throws(call, (e) => {
        assert.ok(e instanceof Error, `not an Error: ${e}`)
        assert.equal(e.code, c.error, e.message)
        const cls = CLASSES[c.class]
        if (cls) assert.ok(e instanceof cls, `${c.class}: got ${e.constructor.name}: ${e.message}`)
        else assert.ok(!(e instanceof TypeError || e instanceof RangeError), `value: got ${e.constructor.name}`)
        return true
      })
    })
  }
})

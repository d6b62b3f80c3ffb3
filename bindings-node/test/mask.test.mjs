// IdMask (public IDs), Node only (the WebAssembly package leaves it out: a
// key does not belong in a page): every case of vectors/mask.json, keys and
// tweaks as Uint8Array/Buffer or hex, errors, and nothing that shows the key.
import assert from 'node:assert/strict'
import { inspect } from 'node:util'
import { test } from 'node:test'

import pkg from './pkg-native.mjs'
import { vectors } from '../../tests/js/pkg.mjs'
import { throwsCode } from '../../tests/js/helpers.mjs'

const { IdMask, Layout, toBase32, toBase62, fromBase62 } = pkg
const MASK = vectors('mask')
const KEY16 = Uint8Array.from({ length: 16 }, (_, i) => i)

test('every case of vectors/mask.json, key and tweak as hex and as bytes', () => {
  for (const c of MASK.cases) {
    const masks = [
      new IdMask(c.layout, c.key, c.tweak),
      new IdMask(Layout.parse(c.layout), Buffer.from(c.key, 'hex'), Uint8Array.from(Buffer.from(c.tweak, 'hex'))),
    ]
    for (const m of masks) {
      for (const p of c.pairs) {
        const id = BigInt(p.id)
        const pub = BigInt(p.public)
        assert.equal(m.mask(id), pub, c.name)
        assert.equal(m.unmask(pub), id, c.name)
        assert.equal(m.mask(p.id), pub, c.name) // a decimal string
        assert.equal(toBase32(pub), p.base32)
        assert.equal(toBase62(pub), p.base62)
        assert.equal(m.unmask(fromBase62(p.base62)), id)
      }
    }
  }
})

test('every error case of vectors/mask.json', () => {
  for (const c of MASK.errors) {
    if (c.op === 'new') {
      throwsCode(() => new IdMask(c.layout, c.key, c.tweak), c.error)
      continue
    }
    const m = new IdMask(c.layout, c.key, c.tweak)
    throwsCode(() => m[c.op](BigInt(c.value)), c.error)
  }
})

test('the tweak defaults to empty; a different tweak, a different public ID', () => {
  const a = new IdMask('twitter', KEY16)
  assert.equal(a.mask(42n), new IdMask('twitter', KEY16, '').mask(42n))
  assert.equal(a.mask(42n), new IdMask('twitter', KEY16, undefined).mask(42n))
  assert.equal(a.mask(42n), new IdMask('twitter', KEY16, new Uint8Array(0)).mask(42n))
  assert.notEqual(new IdMask('twitter', KEY16, '6f7264657273').mask(42n), a.mask(42n))
  assert.notEqual(new IdMask('twitter', KEY16, Buffer.from('orders')).mask(42n), a.mask(42n))
  assert.deepEqual(a.tweak, new Uint8Array(0))
  assert.deepEqual(Buffer.from(new IdMask('twitter', KEY16, '7475').tweak), Buffer.from('tu'))
  assert.equal(a.layout.toJson(), Layout.preset('twitter').toJson())
  assert.equal(typeof a.mask(1), 'bigint')
})

test('bad keys, tweaks and IDs', () => {
  for (const bad of ['0', 'zz', '0x000102030405060708090a0b0c0d0e0f', ' 000102030405060708090a0b0c0d0e0f']) {
    throwsCode(() => new IdMask('twitter', bad), 'invalid_option')
  }
  throwsCode(() => new IdMask('twitter', KEY16, 'xyz'), 'invalid_option')
  for (const bad of [12345, 12345n, [1, 2], {}, new Uint16Array(8), true]) {
    throwsCode(() => new IdMask('twitter', bad), 'invalid_option', TypeError)
  }
  throwsCode(() => new IdMask('twitter', KEY16, 7), 'invalid_option', TypeError)
  throwsCode(() => new IdMask('nope', KEY16), 'unknown_preset')
  const m = new IdMask('twitter', KEY16)
  throwsCode(() => m.mask(-1n), 'invalid_id', RangeError)
  throwsCode(() => m.unmask(2n ** 63n), 'invalid_id')
  throwsCode(() => m.unmask('abc'), 'invalid_id')
})

test('no error message or inspection shows the key', () => {
  const secret = '00112233445566778899aabbccddeeZZ'
  try {
    new IdMask('twitter', secret)
    assert.fail('expected an error')
  } catch (e) {
    assert.equal(e.code, 'invalid_option')
    assert.ok(!e.message.includes('00112233'), e.message)
  }
  const key = '0b30557a9fc4e90e33587da2c7ec11365b80a5caef14395e83a8cdf2173c6186'
  const m = new IdMask('twitter', key, Buffer.from('orders'))
  const shown = inspect(m, { showHidden: true, depth: 5 }) + JSON.stringify(m) + String(m)
  assert.ok(!shown.includes('0b30557a') && !shown.includes('11, 48, 85'), shown)
})

test('consecutive IDs: distinct public IDs in no order, each back to its ID', () => {
  const m = new IdMask('twitter', KEY16, '6f7264657273')
  const max = Layout.preset('twitter').maxId
  const publics = []
  for (let i = 1000n; i < 3000n; i++) publics.push(m.mask(i))
  assert.ok(publics.every((p) => p >= 0n && p <= max))
  assert.equal(new Set(publics).size, publics.length)
  publics.forEach((p, i) => assert.equal(m.unmask(p), 1000n + BigInt(i)))
  let down = 0
  for (let i = 1; i < publics.length; i++) if (publics[i] < publics[i - 1]) down++
  assert.ok(down > 800 && down < 1200, `${down} of 1999 pairs decrease`)
})

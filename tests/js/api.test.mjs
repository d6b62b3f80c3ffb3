// The JavaScript API beyond the vectors: shapes, conversions, generators and
// bad input. Holds for the native and the WebAssembly packages alike (no
// worker_threads, no file system, no native-only names).
//
// Argument conventions (both packages): the rules live in the Rust core, in
// docs/SEMANTICS.md "Arguments" (which values each argument accepts and which
// code a bad one gets) and `Error::class` (TypeError for a value of the wrong
// type or an unknown option key, RangeError for a number out of range,
// Error otherwise). Each package converts a JavaScript value to the core's
// loose value and throws what the core decides; the tests below check that
// both packages do, at the edges.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'

import pkg, { EXPORTS, NATIVE_ONLY } from './pkg.mjs'
import { throwsCode } from './helpers.mjs'

const { Layout, Generator, PureGenerator } = pkg
const NOW = 1763812800000 // 2025-11-22T12:00:00Z
const twitterNodes = { datacenter: 1, worker: 3 }
// A layout no other test uses, so the generators below share state only with
// each other (generators with equal layout and nodes share one state).
let uniq = 0
function freshLayout(nodeBits = 10) {
  uniq += 1
  return Layout.fromJson(
    `{"epoch_ms":${1700000000000 + uniq},"fields":[["timestamp",41],["node",${nodeBits}],["sequence",${22 - nodeBits}]]}`,
  )
}

describe('exports', () => {
  test('the same names in every package', () => {
    const names = Object.keys(pkg)
      .filter((k) => !k.startsWith('__') && k !== 'default' && !NATIVE_ONLY.includes(k))
      .sort()
    assert.deepEqual(names, [...EXPORTS].sort())
  })
})

describe('Layout', () => {
  test('presets', () => {
    const names = Layout.presets()
    assert.deepEqual(names, [
      'twitter', 'discord', 'instagram', 'sonyflake', 'sonyflake-v2',
      'shardingsphere', 'leaf', 'baidu', 'tsid', 'mastodon',
    ])
    for (const n of names) {
      const l = Layout.preset(n)
      assert.equal(l.presetName, n)
      assert.equal(Layout.parse(n).toJson(), l.toJson())
      assert.equal(Layout.fromJson(JSON.stringify(n)).toJson(), l.toJson())
    }
  })

  test('property types', () => {
    const l = Layout.preset('discord')
    assert.ok(l instanceof Layout)
    assert.equal(typeof l.epochMs, 'number')
    assert.equal(typeof l.timeUnitMs, 'number')
    assert.equal(typeof l.totalBits, 'number')
    assert.equal(typeof l.maxId, 'bigint')
    assert.equal(l.maxId, 2n ** 64n - 1n)
    assert.equal(Layout.fromJson('{"epoch_ms":0,"fields":[["timestamp",40],["sequence",12]]}').presetName, null)
    assert.deepEqual(
      l.fields.map((f) => f.name),
      ['timestamp', 'worker', 'process', 'sequence'],
    )
  })

  test('the seed article\'s 73-bit layout is refused', () => {
    throwsCode(
      () => Layout.parse('{"epoch_ms":0,"fields":[["timestamp",37],["server",20],["sequence",16]]}'),
      'invalid_layout',
    )
  })

  test('wrong argument types', () => {
    // A preset name is a layout argument: another type is invalid_layout.
    throwsCode(() => Layout.preset(1), 'invalid_layout', TypeError)
    throwsCode(() => Layout.preset('nope'), 'unknown_preset')
    throwsCode(() => Layout.fromJson({}), 'invalid_layout', TypeError)
    throwsCode(() => Layout.parse(undefined), 'invalid_layout', TypeError)
    throwsCode(() => Layout.fromJson('{'), 'invalid_layout')
  })
})

describe('decode', () => {
  test('Parts shape', () => {
    const p = pkg.decode(175928847299117063n, 'discord')
    assert.equal(p.id, 175928847299117063n)
    assert.equal(p.timestampMs, 1462015105796)
    assert.ok(p.date instanceof Date)
    assert.equal(p.date.toISOString(), '2016-04-30T11:18:25.796Z')
    assert.equal(p.sequence, 7)
    assert.deepEqual({ ...p.nodes }, { worker: 1, process: 0 })
    assert.equal(p.worker, 1)
    assert.equal(p.process, 0)
  })

  test('date is computed on access; spread and JSON carry timestampMs', () => {
    const p = pkg.decode(175928847299117063n, 'discord')
    assert.ok(!Object.keys(p).includes('date'))
    assert.equal(Object.getOwnPropertyDescriptor(p, 'date'), undefined)
    assert.ok('date' in p)
    assert.equal(p.date.getTime(), p.timestampMs)
    assert.equal({ ...p }.date, undefined)
    const json = JSON.parse(JSON.stringify(p, (k, v) => (typeof v === 'bigint' ? String(v) : v)))
    assert.equal(json.date, undefined)
    assert.equal(json.timestampMs, 1462015105796)
    assert.equal(json.id, '175928847299117063')
  })

  test('the same parts from a bigint, a string and a safe number', () => {
    const l = Layout.preset('twitter')
    const a = l.decode(135168n)
    for (const id of ['135168', 135168, '000135168']) {
      assert.deepEqual(l.decode(id), a)
      assert.deepEqual(pkg.decode(id, l), a)
      assert.deepEqual(pkg.decode(id, 'twitter'), a)
    }
  })

  test('node fields never override the fixed names', () => {
    const l = Layout.fromJson(
      '{"epoch_ms":0,"fields":[["timestamp",40],["id",4],["date",4],["nodes",4],["shard",4],["sequence",8]]}',
    )
    const id = l.compose(5000, 7, { id: 1, date: 2, nodes: 3, shard: 4 })
    const p = l.decode(id)
    assert.equal(p.id, id)
    assert.ok(p.date instanceof Date)
    assert.equal(p.timestampMs, 5000)
    assert.equal(p.sequence, 7)
    assert.deepEqual({ ...p.nodes }, { id: 1, date: 2, nodes: 3, shard: 4 })
    assert.equal(p.shard, 4)
  })

  test('too wide for the layout', () => {
    throwsCode(() => pkg.decode(2n ** 63n, 'twitter'), 'invalid_id')
  })
})

describe('IDs in and out', () => {
  test('base32 and base62 round trips at the edges', () => {
    for (const id of [0n, 1n, 2n ** 53n, 2n ** 63n, 2n ** 64n - 1n]) {
      assert.equal(pkg.fromBase32(pkg.toBase32(id)), id)
      assert.equal(pkg.fromBase62(pkg.toBase62(id)), id)
      assert.equal(pkg.parseId(pkg.formatId(id, 'decimal'), 'decimal'), id)
      assert.equal(pkg.formatId(id, 'decimal'), id.toString())
    }
    assert.equal(pkg.fromBase32('1asd13xh1f800'), 1541815603606036480n)
  })

  test('bad IDs', () => {
    const bad = [
      [-1n, RangeError],
      [2n ** 64n, RangeError],
      [-(2n ** 64n), RangeError],
      [2n ** 200n, RangeError],
      [-1, RangeError],
      [1.5, RangeError],
      [2 ** 53, RangeError],
      [NaN, RangeError],
      [Infinity, RangeError],
      [-0.5, RangeError],
      [' 1', Error],
      ['-1', Error],
      ['18446744073709551616', RangeError], // a number out of range, as a bigint would be
      ['', Error],
      [null, TypeError],
      [undefined, TypeError],
      [{}, TypeError],
      [true, TypeError],
      [[1], TypeError],
    ]
    for (const [id, cls] of bad) {
      const label = typeof id === 'bigint' ? `${id}n` : String(id)
      for (const run of [() => pkg.toBase32(id), () => pkg.toBase62(id), () => pkg.formatId(id, 'base62'),
        () => pkg.decode(id, 'discord'), () => Layout.preset('discord').decode(id),
        () => Layout.preset('discord').isPlausible(id, NOW)]) {
        assert.doesNotThrow(() => throwsCode(run, 'invalid_id', cls), label)
      }
    }
  })

  test('bad strings and formats', () => {
    throwsCode(() => pkg.fromBase32(12), 'invalid_id', TypeError)
    throwsCode(() => pkg.fromBase62(null), 'invalid_id', TypeError)
    throwsCode(() => pkg.parseId('1', 'hex'), 'invalid_id')
    throwsCode(() => pkg.formatId(1n, 'hex'), 'invalid_id')
    throwsCode(() => pkg.parseId('1', 10), 'invalid_id', TypeError)
    throwsCode(() => pkg.parseId(1, 'decimal'), 'invalid_id', TypeError)
  })

  test('isPlausible', () => {
    const l = Layout.preset('twitter')
    const id = l.compose(NOW, 0, twitterNodes)
    assert.equal(l.isPlausible(id, NOW), true)
    assert.equal(l.isPlausible(id, NOW - 2 * 86400000), false)
    assert.equal(l.isPlausible(2n ** 64n - 1n, NOW), false)
  })
})

describe('compose and bounds', () => {
  test('compose then decode', () => {
    const l = Layout.preset('twitter')
    const id = l.compose(NOW, 5, twitterNodes)
    assert.equal(typeof id, 'bigint')
    assert.equal(pkg.compose('twitter', NOW, 5, twitterNodes), id)
    // Integers may also come as bigints.
    assert.equal(l.compose(BigInt(NOW), 5n, { datacenter: 1n, worker: 3n }), id)
    const p = l.decode(id)
    assert.equal(p.timestampMs, NOW)
    assert.equal(p.sequence, 5)
    assert.deepEqual({ ...p.nodes }, twitterNodes)
    const [lo, hi] = l.idBounds(NOW)
    assert.ok(lo <= id && id <= hi)
    assert.deepEqual(pkg.idBounds('twitter', NOW), [lo, hi])
  })

  test('nodes may be omitted only without node fields', () => {
    assert.equal(pkg.compose('mastodon', 1, 2), (1n << 16n) | 2n)
    assert.equal(pkg.compose('mastodon', 1, 2, {}), (1n << 16n) | 2n)
    throwsCode(() => pkg.compose('twitter', NOW, 0), 'missing_node')
  })

  test('bad numbers', () => {
    const l = Layout.preset('twitter')
    throwsCode(() => l.compose(-1, 0, twitterNodes), 'time_before_epoch', RangeError)
    throwsCode(() => l.compose(2 ** 53, 0, twitterNodes), 'time_overflow', RangeError)
    throwsCode(() => l.compose(NaN, 0, twitterNodes), 'time_overflow', RangeError)
    throwsCode(() => l.compose(NOW + 0.5, 0, twitterNodes), 'time_overflow', RangeError)
    throwsCode(() => l.compose(String(NOW), 0, twitterNodes), 'time_overflow', TypeError)
    throwsCode(() => l.compose(true, 0, twitterNodes), 'time_overflow', TypeError)
    throwsCode(() => l.compose(-1n, 0, twitterNodes), 'time_before_epoch', RangeError)
    throwsCode(() => l.compose(NOW, -1, twitterNodes), 'node_out_of_range', RangeError)
    throwsCode(() => l.compose(NOW, 1.5, twitterNodes), 'node_out_of_range', RangeError)
    throwsCode(() => l.compose(NOW, 0, { datacenter: -1, worker: 1 }), 'node_out_of_range', RangeError)
    throwsCode(() => l.compose(NOW, 0, { datacenter: 1.5, worker: 1 }), 'node_out_of_range', RangeError)
    throwsCode(() => l.compose(NOW, 0, { datacenter: '1', worker: 1 }), 'node_out_of_range', TypeError)
    throwsCode(() => l.compose(NOW, 0, 5), 'unknown_field', TypeError)
    throwsCode(() => l.idBounds(-5), 'time_before_epoch', RangeError)
    throwsCode(() => pkg.compose(42, NOW, 0, twitterNodes), 'invalid_layout', TypeError)
    throwsCode(() => pkg.idBounds({}, NOW), 'invalid_layout', TypeError)
    throwsCode(() => pkg.decode(1n, null), 'invalid_layout', TypeError)
  })
})

describe('Generator', () => {
  test('nextId, nextIdString, nextIds', () => {
    const g = new Generator(freshLayout(), { node: 7 })
    const a = g.nextId()
    assert.equal(typeof a, 'bigint')
    const s = g.nextIdString()
    assert.match(s, /^[0-9]+$/)
    assert.ok(BigInt(s) > a)
    const batch = g.nextIds(5000)
    assert.ok(batch instanceof BigUint64Array)
    assert.equal(batch.length, 5000)
    assert.ok(batch[0] > BigInt(s))
    for (let i = 1; i < batch.length; i++) assert.ok(batch[i] > batch[i - 1])
    assert.equal(g.nextIds(0).length, 0) // a count is 0 to 2^32
    assert.equal(g.nextIds(3n).length, 3)
    const p = g.layout.decode(g.nextId())
    assert.equal(p.node, 7)
    assert.ok(Math.abs(p.timestampMs - Date.now()) < 60000)
  })

  test('layout as a Layout or a string', () => {
    const g = new Generator('twitter', twitterNodes)
    assert.ok(g.layout instanceof Layout)
    assert.equal(g.layout.presetName, 'twitter')
    const d = g.layout.decode(g.nextId())
    assert.deepEqual({ ...d.nodes }, twitterNodes)
    const h = new Generator(Layout.preset('mastodon'))
    assert.equal(h.layout.presetName, 'mastodon')
    assert.ok(h.nextId() > 0n)
  })

  test('generators with equal layout and nodes share one state', () => {
    const layout = freshLayout()
    const gens = [new Generator(layout, { node: 1 }), new Generator(layout.toJson(), { node: 1 }),
      new Generator(layout, { node: 1 }, { sequenceStart: 'zero' })]
    const seen = new Set()
    let last = 0n
    for (let i = 0; i < 3000; i++) {
      const id = gens[i % 3].nextId()
      assert.ok(id > last)
      last = id
      seen.add(id)
    }
    for (const id of gens[0].nextIds(2000)) {
      assert.ok(id > last)
      seen.add(id)
    }
    assert.equal(seen.size, 5000)
  })

  test('options', () => {
    const layout = freshLayout()
    for (const options of [
      {},
      { clockBackwards: 'fail', sequenceExhausted: 'borrow:10', sequenceStart: 'random:4' },
      { seed: 42n }, { seed: '42' }, { seed: 42 }, { seed: undefined },
      { sequenceStart: 'cycle:2', clockBackwards: 'borrow:3' },
      { clock_backwards: 'fail', sequence_start: 'zero' }, // snake_case keys too
    ]) {
      assert.equal(typeof new Generator(layout, { node: 2 }, options).nextId(), 'bigint')
    }
    throwsCode(() => new Generator(layout, { node: 2 }, { clockBackwards: 'later' }), 'invalid_option')
    throwsCode(() => new Generator(layout, { node: 2 }, { sequenceExhausted: 'fail' }), 'invalid_option')
    throwsCode(() => new Generator(layout, { node: 2 }, { sequenceStart: 'random:0' }), 'invalid_option')
    throwsCode(() => new Generator(layout, { node: 2 }, { clockBackwards: 5 }), 'invalid_option', TypeError)
    throwsCode(() => new Generator(layout, { node: 2 }, { clock: 'fail' }), 'invalid_option', TypeError)
    throwsCode(() => new Generator(layout, { node: 2 }, { seed: -1n }), 'invalid_option', RangeError)
    throwsCode(() => new Generator(layout, { node: 2 }, { seed: {} }), 'invalid_option', TypeError)
    throwsCode(() => new Generator(layout, { node: 2 }, 'fail'), 'invalid_option', TypeError)
    throwsCode(() => new Generator(layout, { node: 2 }, { resumeAfter: -1 }), 'invalid_id', RangeError)
  })

  test('resumeAfter continues above the given ID', () => {
    const layout = freshLayout()
    const last = layout.compose(Date.now() - 1000, 3, { node: 9 })
    const g = new Generator(layout, { node: 9 }, { resumeAfter: last })
    assert.ok(g.nextId() > last)
    // An ID of another layout width is refused.
    throwsCode(() => new Generator('twitter', twitterNodes, { resumeAfter: 2n ** 64n - 1n }), 'invalid_option')
  })

  test('bad nodes and counts', () => {
    throwsCode(() => new Generator('twitter', { worker: 1 }), 'missing_node')
    throwsCode(() => new Generator('twitter', { datacenter: 32, worker: 1 }), 'node_out_of_range')
    throwsCode(() => new Generator('twitter', { ...twitterNodes, rack: 1 }), 'unknown_field')
    throwsCode(() => new Generator('twitter'), 'missing_node')
    throwsCode(() => new Generator('nope', {}), 'unknown_preset')
    throwsCode(() => new Generator(1, {}), 'invalid_layout', TypeError)
    // baidu's 28-bit seconds ran out on 2024-11-20.
    throwsCode(() => new Generator('baidu', { worker: 1 }).nextId(), 'time_overflow')
    const g = new Generator(freshLayout(), { node: 3 })
    throwsCode(() => g.nextIds(-1), 'invalid_option', RangeError)
    throwsCode(() => g.nextIds(1.5), 'invalid_option', RangeError)
    throwsCode(() => g.nextIds(2 ** 32 + 1), 'invalid_option')
    throwsCode(() => g.nextIds('10'), 'invalid_option', TypeError)
  })
})

describe('PureGenerator', () => {
  test('a scripted clock', () => {
    const g = new PureGenerator('mastodon', {}, { sequenceStart: 'zero', clockBackwards: 'fail' })
    const a = g.next(NOW)
    assert.deepEqual(Object.keys(a), ['id'])
    assert.equal(a.id, pkg.compose('mastodon', NOW, 0))
    assert.deepEqual(g.next(NOW), { id: a.id + 1n })
    assert.deepEqual(g.next(NOW + 1), { id: pkg.compose('mastodon', NOW + 1, 0) })
    throwsCode(() => g.next(NOW), 'clock_moved_backwards')
    throwsCode(() => g.next(-1), 'time_before_epoch', RangeError)
    throwsCode(() => g.next('now'), 'time_overflow', TypeError)
  })

  test('retryAt when the sequence is used up', () => {
    const layout = '{"epoch_ms":0,"fields":[["timestamp",42],["sequence",1]]}'
    const g = new PureGenerator(layout, undefined, { sequenceStart: 'zero' })
    assert.ok('id' in g.next(NOW))
    assert.ok('id' in g.next(NOW))
    assert.deepEqual(g.next(NOW), { retryAt: NOW + 1 })
    assert.ok('id' in g.next(NOW + 1))
  })

  test('the seed is used as given', () => {
    const make = (seed) => new PureGenerator('twitter', twitterNodes, { seed, sequenceStart: 'random:4096' })
    const ids = (g) => [NOW, NOW + 1, NOW + 2, NOW + 3].map((t) => g.next(t).id)
    assert.deepEqual(ids(make(7n)), ids(make('7')))
    assert.deepEqual(ids(make(undefined)), ids(make(0)))
    assert.notDeepEqual(ids(make(7)), ids(make(8)))
  })
})

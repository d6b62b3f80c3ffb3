// What JSON.stringify, String() and Node's util.inspect make of the
// package's objects (issue 17): IDs as decimal strings in JSON, nested JSON
// for layouts, the useful fields and no internal handle in util.inspect.
// The expected values are written out, so both packages must produce the
// same output.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { inspect } from 'node:util'

import pkg from './pkg.mjs'

const { Layout, Generator, decode } = pkg

const TWITTER_JSON = {
  epoch_ms: 1288834974657,
  time_unit_ms: 1,
  fields: [
    ['timestamp', 41],
    ['datacenter', 5],
    ['worker', 5],
    ['sequence', 12],
  ],
}

describe('JSON.stringify', () => {
  test('parts: the own properties, the ID as a decimal string', () => {
    const p = decode(175928847299117063n, 'discord')
    const expected = { id: '175928847299117063', timestampMs: 1462015105796, sequence: 7, worker: 1, process: 0 }
    assert.deepEqual(p.toJSON(), expected)
    assert.equal(JSON.stringify(p), JSON.stringify(expected))
    assert.equal(
      JSON.stringify(p),
      '{"id":"175928847299117063","timestampMs":1462015105796,"sequence":7,"worker":1,"process":0}',
    )
    // Inside other values too, and the same from a string or number ID.
    assert.deepEqual(JSON.parse(JSON.stringify({ rows: [p] })), { rows: [expected] })
    assert.equal(JSON.stringify(decode('175928847299117063', 'discord')), JSON.stringify(p))
  })

  test('parts: an ID above 2^53 keeps every digit', () => {
    const id = 18446744073709551615n // the largest 64-bit ID
    const p = decode(id, '{"epoch_ms":0,"fields":[["timestamp",42],["worker",10],["sequence",12]]}')
    assert.deepEqual(JSON.parse(JSON.stringify(p)), {
      id: '18446744073709551615',
      timestampMs: 4398046511103,
      sequence: 4095,
      worker: 1023,
    })
  })

  test('parts: node fields named like a fixed property are under `nodes`', () => {
    const l = Layout.fromJson('{"epoch_ms":0,"fields":[["timestamp",40],["id",8],["shard",4],["sequence",12]]}')
    const id = l.compose(1000, 5, { id: 200, shard: 3 })
    const p = l.decode(id)
    assert.deepEqual(JSON.parse(JSON.stringify(p)), {
      id: String(id),
      timestampMs: 1000,
      sequence: 5,
      shard: 3,
      nodes: { id: 200, shard: 3 },
    })
  })

  test('layout: the canonical descriptor as nested JSON, read back by Layout.fromJson', () => {
    const l = Layout.preset('twitter')
    assert.deepEqual(l.toJSON(), TWITTER_JSON)
    assert.equal(JSON.stringify(l), l.toJson())
    assert.deepEqual(JSON.parse(JSON.stringify({ layout: l })), { layout: TWITTER_JSON })
    assert.equal(Layout.fromJson(JSON.stringify(l)).toJson(), l.toJson())
  })

  test('generator: layout, node values (and, natively, the lease), no seed', () => {
    const g = new Generator('twitter', { datacenter: 1, worker: 3 }, { seed: 12345 })
    const { lease, ...rest } = g.toJSON()
    assert.deepEqual(rest, { layout: TWITTER_JSON, nodes: { datacenter: 1, worker: 3 } })
    if ('lease' in g) assert.equal(lease, null)
    else assert.equal(lease, undefined)
    const text = JSON.stringify(g)
    assert.deepEqual(JSON.parse(text), g.toJSON())
    assert.ok(!text.includes('12345'), text)
  })
})

describe('String()', () => {
  test('a layout is its canonical descriptor, which Layout.parse reads back', () => {
    const l = Layout.preset('discord')
    assert.equal(String(l), l.toJson())
    assert.equal(`${l}`, l.toJson())
    assert.equal(Layout.parse(String(l)).toJson(), l.toJson())
  })

  test('parts are the ID in decimal', () => {
    const p = decode(175928847299117063n, 'discord')
    assert.equal(String(p), '175928847299117063')
    assert.equal(`id ${p}`, 'id 175928847299117063')
  })
})

describe('util.inspect', () => {
  test('layout: preset, fields, epoch, time unit', () => {
    assert.equal(
      inspect(Layout.preset('twitter')),
      'Layout <twitter timestamp:41 datacenter:5 worker:5 sequence:12 epoch 2010-11-04T01:42:54.657Z>',
    )
    const custom = Layout.fromJson('{"epoch_ms":0,"time_unit_ms":10,"fields":[["timestamp",40],["node",12],["sequence",12]]}')
    assert.equal(inspect(custom), 'Layout <custom timestamp:40 node:12 sequence:12 epoch 1970-01-01T00:00:00.000Z unit 10ms>')
  })

  test('generator: preset and node values', () => {
    const g = new Generator('twitter', { datacenter: 1, worker: 3 }, { seed: 12345 })
    assert.equal(inspect(g), 'Generator <twitter datacenter 1 worker 3>')
    assert.equal(inspect({ g }), '{ g: Generator <twitter datacenter 1 worker 3> }')
  })

  test('parts: ID, time, sequence, node fields', () => {
    const p = decode(175928847299117063n, 'discord')
    assert.equal(inspect(p), 'Parts <175928847299117063 2016-04-30T11:18:25.796Z sequence 7 worker 1 process 0>')
    assert.equal(inspect([p], { breakLength: Infinity }), '[ Parts <175928847299117063 2016-04-30T11:18:25.796Z sequence 7 worker 1 process 0> ]')
  })

  test('no handle, pointer or private symbol is shown', () => {
    const l = Layout.preset('twitter')
    l.decode(1n) // sets the layout's cached decoder
    const g = new Generator(l, { datacenter: 1, worker: 3 })
    for (const v of [l, g, l.decode(1n)]) {
      const text = inspect(v, { showHidden: true, depth: 5 })
      assert.doesNotMatch(text, /ptr|handle|Symbol|snowmint\.|\[native|\{\s*\}/, text)
    }
  })
})

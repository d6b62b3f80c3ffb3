// Native-only details: the raw N-API fast paths (src/fast.rs) keep the same
// safety and errors as the napi-rs glue.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

import pkg, { pkgEntryUrl } from './pkg-native.mjs'
import { throwsCode } from '../../tests/js/helpers.mjs'

const { Layout, Generator } = pkg

test('decode with a wrong receiver is a TypeError, never a crash', () => {
  throwsCode(() => Layout.prototype.decode.call({}, 1n), 'invalid_layout', TypeError)
  throwsCode(() => Layout.prototype.decode.call(new Generator('mastodon'), 1n), 'invalid_layout', TypeError)
  throwsCode(() => Layout.prototype.decode.call(undefined, 1n), 'invalid_layout', TypeError)
  const spoof = Object.create(Layout.prototype)
  throwsCode(() => spoof.decode(1n), 'invalid_layout', TypeError)
})

test('generator methods with a wrong receiver throw', () => {
  const proto = Object.getPrototypeOf(new Generator('mastodon'))
  assert.throws(() => proto.nextId.call(Layout.preset('twitter')))
  assert.throws(() => proto.nextIds.call({}, 3))
})

test('nextId is the instance\'s own bound function, not enumerable', () => {
  const g = new Generator('mastodon')
  assert.deepEqual(Object.keys(g), [])
  assert.ok(Object.hasOwn(g, 'nextId'))
  assert.ok(!Object.hasOwn(g, 'nextIds'))
  // Detached, it still draws from its generator (it is bound to it).
  const { nextId } = g
  const a = nextId()
  assert.ok(BigInt(g.nextIdString()) > a)
  assert.ok(g.nextIds(2)[0] > a)
})

test('many short-lived generators and decoders are released', () => {
  for (let i = 0; i < 20000; i++) {
    const g = new Generator('mastodon')
    g.nextId()
    Layout.preset('mastodon').decode(1n)
  }
  if (global.gc) global.gc()
})

test('the internal decoder checks its arguments', () => {
  const binding = createRequire(fileURLToPath(pkgEntryUrl))('./binding.js')
  const twitter = binding.Layout.preset('twitter')
  assert.throws(() => binding.__decoder(twitter, new Float64Array(2)))
  assert.throws(() => binding.__decoder(twitter, [0, 0, 0, 0, 0, 0, 0, 0]))
  assert.throws(() => binding.__decoder('twitter', new Float64Array(8)))
  const d = binding.__decoder(twitter, new Float64Array(8))
  assert.equal(d(135168n), 135168n)
  assert.equal(d('135168'), 135168n)
  assert.equal(path.basename(fileURLToPath(pkgEntryUrl)), 'index.js')
})

test('one native call per decode; a layout is parsed and looked up once', () => {
  // Counts the native decoder's calls, and the layouts main.js makes a
  // decoder for (each asks for its canonical JSON once), in a fresh process.
  const entry = fileURLToPath(pkgEntryUrl)
  const script = `
    const binding = require(${JSON.stringify(path.join(path.dirname(entry), 'binding.js'))})
    const make = binding.__decoder
    const toJson = binding.Layout.prototype.toJson
    let calls = 0
    let parses = 0
    binding.__decoder = (l, s) => {
      const native = make(l, s)
      return (id) => (calls++, native(id))
    }
    binding.Layout.prototype.toJson = function () {
      parses++
      return toJson.call(this)
    }
    const pkg = require(${JSON.stringify(entry)})
    const l = pkg.Layout.preset('discord')
    const count = (f) => {
      const before = [calls, parses]
      let r
      try { r = f().timestampMs } catch (e) { r = e.code }
      return [calls - before[0], parses - before[1], r]
    }
    console.log(JSON.stringify([
      count(() => l.decode(175928847299117063n)),
      count(() => pkg.decode(175928847299117063n, 'discord')),
      count(() => pkg.decode(175928847299117063n, 'discord')),
      count(() => l.decode('175928847299117063')),
      count(() => l.decode(1n << 64n)),
      count(() => pkg.decode(1n << 63n, 'twitter')),
    ]))
  `
  const run = (flags) =>
    JSON.parse(execFileSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }))
  const ms = 1462015105796
  // A Layout object is looked up once (then its decoder is kept on it), the
  // string 'discord' parsed once, the string 'twitter' once.
  const expected = [[1, 1, ms], [1, 1, ms], [1, 0, ms], [1, 0, ms], [1, 0, 'invalid_id'], [1, 1, 'invalid_id']]
  assert.deepEqual(run([]), expected)
  assert.deepEqual(run(['--jitless']), expected)
})

test('past the 256 cached layouts, decodes are the same', () => {
  for (let i = 0; i < 300; i++) {
    const epoch = 1_600_000_000_000 + i * 1000
    const json = `{"epoch_ms": ${epoch}, "fields": [["timestamp", 41], ["shard", 10], ["sequence", 12]]}`
    const l = Layout.fromJson(json)
    const id = (5n << 22n) | (3n << 12n) | 7n
    for (const p of [l.decode(id), pkg.decode(String(id), l), pkg.decode(id, json)]) {
      assert.deepEqual({ ...p }, { id, timestampMs: epoch + 5, sequence: 7, shard: 3 })
    }
    throwsCode(() => l.decode(1n << 63n), 'invalid_id')
  }
})

test('Parts are the same where code generation from strings is disabled', () => {
  // parts.js compiles a Parts class per layout; with code generation disabled it
  // falls back to a generic one, which must build equal objects.
  const layout = '{"epoch_ms":0,"fields":[["timestamp",40],["id",4],["date",4],["nodes",4],["shard",4],["sequence",8]]}'
  const script = `
    const pkg = require(${JSON.stringify(fileURLToPath(pkgEntryUrl))})
    const show = (p) =>
      JSON.stringify([Object.keys(p), { ...p }, p.date, p.nodes, p.toJSON()], (k, v) => (typeof v === 'bigint' ? v + 'n' : v))
    const l = pkg.Layout.parse(${JSON.stringify(layout)})
    const id = l.compose(5000, 7, { id: 1, date: 2, nodes: 3, shard: 4 })
    console.log(JSON.stringify([show(l.decode(id)), show(pkg.decode(175928847299117063n, 'discord'))]))
  `
  const run = (flags) => JSON.parse(execFileSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8' }))
  const generic = run(['--disallow-code-generation-from-strings'])
  const compiled = run([])
  assert.deepEqual(generic, compiled)
  const [keys, p, date, nodes, json] = JSON.parse(compiled[0])
  assert.deepEqual(keys, ['id', 'timestampMs', 'sequence', 'shard'])
  assert.deepEqual(p, { id: '83887272967n', timestampMs: 5000, sequence: 7, shard: 4 })
  assert.equal(date, '1970-01-01T00:00:05.000Z')
  assert.deepEqual(nodes, { id: 1, date: 2, nodes: 3, shard: 4 })
  // JSON: the hidden node fields under `nodes`.
  assert.deepEqual(json, { id: '83887272967', timestampMs: 5000, sequence: 7, shard: 4, nodes })
})

test('Parts: date and nodes are getters of a per-layout prototype, the bigint is kept', () => {
  const id = 175928847299117063n
  const p = Layout.preset('discord').decode(id)
  // Own properties: id, timestampMs, sequence and the node fields only.
  assert.deepEqual(Object.keys(p), ['id', 'timestampMs', 'sequence', 'worker', 'process'])
  assert.equal(Object.getOwnPropertyDescriptor(p, 'nodes'), undefined)
  // A new Date and a new nodes object per read.
  assert.notEqual(p.date, p.date)
  assert.notEqual(p.nodes, p.nodes)
  assert.deepEqual(p.nodes, { worker: 1, process: 0 })
  // nodes reads the top-level node fields.
  p.worker = 5
  assert.equal(p.nodes.worker, 5)
  // Equal layouts share one prototype, whatever form the layout came in.
  const q = pkg.decode(id, 'discord')
  assert.equal(Object.getPrototypeOf(q), Object.getPrototypeOf(p))
  assert.equal(Object.getPrototypeOf(pkg.decode(id, Layout.parse('discord'))), Object.getPrototypeOf(p))
  // A string or number becomes a bigint; a frozen Layout works too.
  assert.equal(pkg.decode('175928847299117063', Object.freeze(Layout.preset('discord'))).id, id)
})

test('__backend, declared in index.d.ts, names the loaded core in CJS and ESM', async () => {
  assert.equal(pkg.__backend, 'native')
  assert.equal(pkg.__napiBindingTarget, undefined)
  const esm = await import(new URL('index.mjs', pkgEntryUrl).href)
  assert.equal(esm.__backend, 'native')
  assert.equal(esm.default.__backend, 'native')
})

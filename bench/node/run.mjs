// Benchmarks of the snowmint Node package against peer ID libraries, all
// measured in one process and one run so the ratios are fair.
//
//   bench/node/run            (builds the addon, installs peers, runs this)
//   node bench/node/run.mjs [--quick] [--json out.json]
//
// Each benchmark runs a fixed number of operations and is timed with
// process.hrtime; the benchmarks take turns, REPEATS rounds, after a warm-up
// round, and the report gives the median ns per ID (or per decode).
import { createRequire } from 'node:module'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const require = createRequire(import.meta.url)
const snowmint = require(process.env.SNOWMINT_NODE_PKG || '../../bindings-node/main.js')
const { Snowflake } = require('@sapphire/snowflake')
const { Snowflake: NodejsSnowflake } = require('nodejs-snowflake')
const FlakeId = require('flake-idgen')
const hyperid = require('hyperid')

const quick = process.argv.includes('--quick')
const jsonOut = process.argv.includes('--json') ? process.argv[process.argv.indexOf('--json') + 1] : null
const REPEATS = quick ? 3 : 9
const N = quick ? 50_000 : 500_000 // operations per timed sample
const BATCH = 10_000

const DISCORD_EPOCH = 1420070400000
let sink = 0n // keeps results alive so nothing is optimised away
let sinkAny = null

// ---- the contenders ----------------------------------------------------------

const mastodon = new snowmint.Generator('mastodon') // 16-bit sequence: 65536 IDs per ms
const twitter = new snowmint.Generator('twitter', { datacenter: 1, worker: 3 }) // 4096 per ms
// nextIds on layouts of their own, so batches do not share state with the
// single-ID generators: a 16-bit sequence (65536 per ms, so at most one ID per
// 15.3 ns) and a 22-bit one (4M per ms), where the clock never caps a batch.
const batchGen = new snowmint.Generator(
  '{"epoch_ms":0,"fields":[["timestamp",44],["node",4],["sequence",16]]}',
  { node: 1 },
)
const wideGen = new snowmint.Generator('{"epoch_ms":1700000000000,"fields":[["timestamp",41],["sequence",22]]}')
// The lease A/B: an 18-bit sequence (262,144 IDs per ms), so neither side waits for
// the clock; `worker` leased from a directory against `worker` fixed.
const LEASE_LAYOUT =
  '{"epoch_ms":1288834974657,"fields":[["timestamp",41],["datacenter",1],["worker",3],["sequence",18]]}'
const leaseDir = mkdtempSync(path.join(os.tmpdir(), 'snowmint-bench-'))
const leased = new snowmint.Generator(LEASE_LAYOUT, { datacenter: 1 }, { lease: `file:${leaseDir}` })
const unleased = new snowmint.Generator(LEASE_LAYOUT, { datacenter: 0, worker: 0 })
const napiNextId = Object.getPrototypeOf(mastodon).nextId
const sapphire = new Snowflake(BigInt(DISCORD_EPOCH))
const nodejsSnowflake = new NodejsSnowflake({ custom_epoch: DISCORD_EPOCH, instance_id: 1 })
const flake = new FlakeId({ datacenter: 1, worker: 3 })
const hyper = hyperid()

// flake-idgen throws when a millisecond's 4096 values are used up (its
// synchronous form); retry until the next millisecond, as a caller would.
function flakeNext() {
  for (;;) {
    try {
      return flake.next()
    } catch {
      // sequence exhausted: try again (the clock moves on)
    }
  }
}

const discord = snowmint.Layout.preset('discord')
const sampleId = 175928847299117063n
const sampleIds = Array.from({ length: 1024 }, (_, i) => sampleId + (BigInt(i) << 22n) + BigInt(i % 4096))

const benches = {
  generate: {
    'snowmint nextId() mastodon (65536/ms)': () => {
      for (let i = 0; i < N; i++) sink ^= mastodon.nextId()
      return N
    },
    // The same call through napi-rs's own class method (Generator.prototype.nextId),
    // which the instance's bound nextId shadows (bindings-node/src/fast.rs): what
    // that bypass buys.
    "snowmint nextId() mastodon via napi-rs's method": () => {
      for (let i = 0; i < N; i++) sink ^= napiNextId.call(mastodon)
      return N
    },
    'snowmint nextId() twitter (4096/ms, waits)': () => {
      for (let i = 0; i < N; i++) sink ^= twitter.nextId()
      return N
    },
    'snowmint nextId() with a file lease held (262144/ms)': () => {
      for (let i = 0; i < N; i++) sink ^= leased.nextId()
      return N
    },
    'snowmint nextId() same layout, no lease (262144/ms)': () => {
      for (let i = 0; i < N; i++) sink ^= unleased.nextId()
      return N
    },
    'snowmint nextIds(10000), per ID (65536/ms)': () => {
      const rounds = Math.max(1, Math.floor(N / BATCH / 2))
      for (let r = 0; r < rounds; r++) sink ^= batchGen.nextIds(BATCH)[BATCH - 1]
      return rounds * BATCH
    },
    'snowmint nextIds(10000), per ID (4M/ms)': () => {
      const rounds = Math.max(1, Math.floor(N / BATCH / 2))
      for (let r = 0; r < rounds; r++) sink ^= wideGen.nextIds(BATCH)[BATCH - 1]
      return rounds * BATCH
    },
    '@sapphire/snowflake generate() (no per-ms cap)': () => {
      for (let i = 0; i < N; i++) sink ^= sapphire.generate()
      return N
    },
    'nodejs-snowflake getUniqueID() (wasm)': () => {
      for (let i = 0; i < N; i++) sink ^= nodejsSnowflake.getUniqueID()
      return N
    },
    'flake-idgen next() (Buffer, 4096/ms)': () => {
      for (let i = 0; i < N; i++) sinkAny = flakeNext()
      return N
    },
    'hyperid() (string, not a 64-bit ID)': () => {
      for (let i = 0; i < N; i++) sinkAny = hyper()
      return N
    },
  },
  decode: {
    'snowmint layout.decode(bigint)': () => {
      for (let i = 0; i < N; i++) sinkAny = discord.decode(sampleIds[i & 1023])
      return N
    },
    // date is a getter (a new Date per read): what a decode costs when the caller reads it.
    'snowmint layout.decode(bigint).date': () => {
      for (let i = 0; i < N; i++) sinkAny = discord.decode(sampleIds[i & 1023]).date
      return N
    },
    'snowmint decode(bigint, layout)': () => {
      for (let i = 0; i < N; i++) sinkAny = snowmint.decode(sampleIds[i & 1023], discord)
      return N
    },
    "snowmint decode(bigint, 'discord')": () => {
      for (let i = 0; i < N; i++) sinkAny = snowmint.decode(sampleIds[i & 1023], 'discord')
      return N
    },
    '@sapphire/snowflake deconstruct(bigint)': () => {
      for (let i = 0; i < N; i++) sinkAny = sapphire.deconstruct(sampleIds[i & 1023])
      return N
    },
    'nodejs-snowflake timestampFromID + instanceIDFromID': () => {
      for (let i = 0; i < N; i++) {
        const id = sampleIds[i & 1023]
        sinkAny = [NodejsSnowflake.timestampFromID(id, DISCORD_EPOCH), NodejsSnowflake.instanceIDFromID(id)]
      }
      return N
    },
  },
}

function sample(fn) {
  const t0 = process.hrtime.bigint()
  const ops = fn()
  const t1 = process.hrtime.bigint()
  return Number(t1 - t0) / ops
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

const results = {}
for (const [group, fns] of Object.entries(benches)) {
  const samples = Object.fromEntries(Object.keys(fns).map((k) => [k, []]))
  for (const fn of Object.values(fns)) sample(fn) // warm-up round
  for (let r = 0; r < REPEATS; r++) {
    for (const [name, fn] of Object.entries(fns)) samples[name].push(sample(fn))
  }
  results[group] = Object.fromEntries(
    Object.entries(samples).map(([k, xs]) => [k, { median: median(xs), min: Math.min(...xs), max: Math.max(...xs) }]),
  )
}

const sapphireGen = results.generate['@sapphire/snowflake generate() (no per-ms cap)'].median
const sapphireDec = results.decode['@sapphire/snowflake deconstruct(bigint)'].median
const fmt = (x) => x.toFixed(1).padStart(8)
console.log(`# node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} x${os.cpus().length}, ${new Date().toISOString()}`)
console.log(`# ${REPEATS} rounds of ${N} operations each; median (min..max) ns per ID or per decode`)
for (const [group, rows] of Object.entries(results)) {
  const base = group === 'generate' ? sapphireGen : sapphireDec
  console.log(`\n## ${group} (ratio vs @sapphire/snowflake ${group === 'generate' ? 'generate' : 'deconstruct'})`)
  for (const [name, r] of Object.entries(rows)) {
    console.log(`${name.padEnd(54)} ${fmt(r.median)} ns  (${r.min.toFixed(1)}..${r.max.toFixed(1)})  x${(r.median / base).toFixed(2)}`)
  }
}

const targets = {
  'nextId (mastodon) <= 0.5x sapphire generate': results.generate['snowmint nextId() mastodon (65536/ms)'].median / sapphireGen,
  'nextIds(10000) <= 20 ns/ID': results.generate['snowmint nextIds(10000), per ID (4M/ms)'].median,
  'layout.decode <= 0.7x sapphire deconstruct': results.decode['snowmint layout.decode(bigint)'].median / sapphireDec,
  'nextId with a lease <= 1.05x without':
    results.generate['snowmint nextId() with a file lease held (262144/ms)'].median /
    results.generate['snowmint nextId() same layout, no lease (262144/ms)'].median,
}
leased.close()
rmSync(leaseDir, { recursive: true, force: true })
console.log('\n## targets')
console.log(`nextId mastodon / sapphire generate = ${targets['nextId (mastodon) <= 0.5x sapphire generate'].toFixed(2)} (target <= 0.50)`)
console.log(`nextIds(10000) = ${targets['nextIds(10000) <= 20 ns/ID'].toFixed(1)} ns/ID (target <= 20)`)
console.log(`layout.decode / sapphire deconstruct = ${targets['layout.decode <= 0.7x sapphire deconstruct'].toFixed(2)} (target <= 0.70)`)
console.log(`nextId with a file lease / without = ${targets['nextId with a lease <= 1.05x without'].toFixed(3)} (target <= 1.05)`)
if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ date: new Date().toISOString(), node: process.version, REPEATS, N, results, targets }, null, 2))
if (typeof sink !== 'bigint' || sinkAny === undefined) console.log('unreachable')

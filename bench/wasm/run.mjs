// Benchmarks of the snowmint WebAssembly package (the nodejs build in
// bindings-wasm/pkg-node) against @sapphire/snowflake, measured in one
// process and one run so the ratios are fair.
//
//   bench/wasm/run            (builds the package, installs the peer, runs this)
//   node bench/wasm/run.mjs [--quick] [--json out.json]
//
// Each benchmark runs a fixed number of operations timed with
// process.hrtime; the benchmarks take turns, REPEATS rounds, after a warm-up
// round; the report gives the median ns per decode (or per ID of a batch).
import { createRequire } from 'node:module'
import { writeFileSync } from 'node:fs'
import os from 'node:os'

const require = createRequire(import.meta.url)
const snowmint = require(process.env.SNOWMINT_WASM_PKG || '../../bindings-wasm/pkg-node')
const { Snowflake } = require('@sapphire/snowflake')

const quick = process.argv.includes('--quick')
const jsonOut = process.argv.includes('--json') ? process.argv[process.argv.indexOf('--json') + 1] : null
const REPEATS = quick ? 3 : 9
const N = quick ? 50_000 : 500_000 // operations per timed sample
const BATCH = 10_000

const DISCORD_EPOCH = 1420070400000n
let sinkAny = null // keeps results alive so nothing is optimised away

const discord = snowmint.Layout.preset('discord')
const sapphire = new Snowflake(DISCORD_EPOCH)
const sampleId = 175928847299117063n
const sampleIds = Array.from({ length: 1024 }, (_, i) => sampleId + (BigInt(i) << 22n) + BigInt(i % 4096))
const sampleStrings = sampleIds.map(String)
const batch = new BigUint64Array(BATCH)
for (let i = 0; i < BATCH; i++) batch[i] = sampleIds[i & 1023] + BigInt(i)
const into = new Float64Array(BATCH * (2 + 2)) // discord: timestamp, sequence, worker, process
// Batches per timed sample (a whole number: each is counted as BATCH IDs).
const BATCH_ROUNDS = Math.max(1, Math.round(N / BATCH / 2))

const benches = {
  decode: {
    'snowmint-wasm layout.decode(bigint)': () => {
      for (let i = 0; i < N; i++) sinkAny = discord.decode(sampleIds[i & 1023])
      return N
    },
    'snowmint-wasm decode(bigint, layout)': () => {
      for (let i = 0; i < N; i++) sinkAny = snowmint.decode(sampleIds[i & 1023], discord)
      return N
    },
    "snowmint-wasm decode(bigint, 'discord')": () => {
      for (let i = 0; i < N; i++) sinkAny = snowmint.decode(sampleIds[i & 1023], 'discord')
      return N
    },
    'snowmint-wasm layout.decode(string)': () => {
      for (let i = 0; i < N; i++) sinkAny = discord.decode(sampleStrings[i & 1023])
      return N
    },
    '@sapphire/snowflake deconstruct(bigint)': () => {
      for (let i = 0; i < N; i++) sinkAny = sapphire.deconstruct(sampleIds[i & 1023])
      return N
    },
  },
  batch: {
    'snowmint-wasm layout.decodeMany(BigUint64Array(10000)), per ID': () => {
      const rounds = BATCH_ROUNDS
      for (let r = 0; r < rounds; r++) sinkAny = discord.decodeMany(batch)
      return rounds * BATCH
    },
    'snowmint-wasm layout.decodeMany(ids, into), reused buffer, per ID': () => {
      const rounds = BATCH_ROUNDS
      for (let r = 0; r < rounds; r++) sinkAny = discord.decodeMany(batch, into)
      return rounds * BATCH
    },
    // What a fresh result costs without any decoding: a new Float64Array of
    // the same size (320 KB), filled. The difference between the two
    // decodeMany rows above is this, not the decoding.
    'baseline: a new Float64Array(40000) filled, no decoding, per ID': () => {
      for (let r = 0; r < BATCH_ROUNDS; r++) {
        const fresh = new Float64Array(BATCH * 4)
        fresh.set(into)
        sinkAny = fresh
      }
      return BATCH_ROUNDS * BATCH
    },
    '@sapphire/snowflake deconstruct over the same 10000, per ID': () => {
      const rounds = BATCH_ROUNDS
      for (let r = 0; r < rounds; r++) for (let i = 0; i < BATCH; i++) sinkAny = sapphire.deconstruct(batch[i])
      return rounds * BATCH
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

const sapphireDec = results.decode['@sapphire/snowflake deconstruct(bigint)'].median
const fmt = (x) => x.toFixed(1).padStart(8)
console.log(`# node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} x${os.cpus().length}, ${new Date().toISOString()}`)
console.log(`# ${REPEATS} rounds of ${N} operations each; median (min..max) ns per decode or per ID`)
for (const [group, rows] of Object.entries(results)) {
  console.log(`\n## ${group} (ratio vs @sapphire/snowflake deconstruct)`)
  for (const [name, r] of Object.entries(rows)) {
    console.log(`${name.padEnd(64)} ${fmt(r.median)} ns  (${r.min.toFixed(1)}..${r.max.toFixed(1)})  x${(r.median / sapphireDec).toFixed(2)}`)
  }
}

const targets = {
  decodeRatio: results.decode['snowmint-wasm layout.decode(bigint)'].median / sapphireDec,
  batchNsPerId: results.batch['snowmint-wasm layout.decodeMany(BigUint64Array(10000)), per ID'].median,
  batchIntoNsPerId: results.batch['snowmint-wasm layout.decodeMany(ids, into), reused buffer, per ID'].median,
  freshArrayNsPerId: results.batch['baseline: a new Float64Array(40000) filled, no decoding, per ID'].median,
}
console.log('\n## targets')
console.log(`layout.decode / sapphire deconstruct = ${targets.decodeRatio.toFixed(2)} (target <= 0.70)`)
console.log(`decodeMany(10000) = ${targets.batchNsPerId.toFixed(1)} ns/ID (target <= 20); ` +
  `into a reused buffer ${targets.batchIntoNsPerId.toFixed(1)} ns/ID; ` +
  `a new 320 KB Float64Array alone ${targets.freshArrayNsPerId.toFixed(1)} ns/ID`)
if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ date: new Date().toISOString(), node: process.version, REPEATS, N, results, targets }, null, 2))
if (sinkAny === undefined) console.log('unreachable')

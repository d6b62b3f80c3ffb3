// nextId and decode of the `snowmint` package beside @sapphire/snowflake,
// in whichever runtime runs this file (Node, Bun, Deno): one process, the
// contenders taking turns, so the ratios are fair within a runtime.
//
//   bench/runtimes/run              (installs, runs every runtime, prints the table)
//   node|bun|deno run -A run.mjs [--quick]   (one runtime; prints one JSON line)
//
// SNOWMINT_FORCE_WASM=1 makes the package load its WebAssembly fallback.
// Timing is performance.now(); each sample runs N operations; REPEATS
// rounds after a warm-up round; the median ns per operation is reported.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const snowmint = require('snowmint')
const { Snowflake } = require('@sapphire/snowflake')

const args = globalThis.Deno ? globalThis.Deno.args : process.argv.slice(2)
const quick = args.includes('--quick')
const REPEATS = quick ? 3 : 9
const N = quick ? 50_000 : 500_000

const DISCORD_EPOCH = 1420070400000n
let sink = 0n
let sinkAny = null

// A 16-bit sequence (65,536 IDs per ms): the clock never makes nextId wait
// at these rates, as @sapphire/snowflake (no per-ms cap) never does.
const mastodon = new snowmint.Generator('mastodon')
const sapphire = new Snowflake(DISCORD_EPOCH)
const discord = snowmint.Layout.preset('discord')
const sampleId = 175928847299117063n
const sampleIds = Array.from({ length: 1024 }, (_, i) => sampleId + (BigInt(i) << 22n) + BigInt(i % 4096))

const benches = {
  generate: {
    'snowmint nextId()': () => {
      for (let i = 0; i < N; i++) sink ^= mastodon.nextId()
    },
    '@sapphire/snowflake generate()': () => {
      for (let i = 0; i < N; i++) sink ^= sapphire.generate()
    },
  },
  decode: {
    'snowmint layout.decode(bigint)': () => {
      for (let i = 0; i < N; i++) sinkAny = discord.decode(sampleIds[i & 1023])
    },
    '@sapphire/snowflake deconstruct(bigint)': () => {
      for (let i = 0; i < N; i++) sinkAny = sapphire.deconstruct(sampleIds[i & 1023])
    },
  },
}

// On Bun and Deno with the addon, the package's nextId goes through the
// runtime's FFI: the addon's N-API nextId (binding.js's class) runs beside
// it, for the ratio of the two paths.
if ((globalThis.Bun || globalThis.Deno) && snowmint.__backend === 'native') {
  // Not exported by the package: loaded by its path.
  const dir = require.resolve('snowmint/package.json').slice(0, -'package.json'.length)
  const napi = new (require(`${dir}binding.js`).Generator)('mastodon')
  benches.generate['snowmint nextId() through N-API'] = () => {
    for (let i = 0; i < N; i++) sink ^= napi.nextId()
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

function runtime() {
  if (globalThis.Bun) return `bun ${globalThis.Bun.version}`
  if (globalThis.Deno) return `deno ${globalThis.Deno.version.deno}`
  return `node ${process.versions.node}`
}

const out = { runtime: runtime(), backend: snowmint.__backend, repeats: REPEATS, n: N, results: {} }
for (const fns of Object.values(benches)) {
  const samples = Object.fromEntries(Object.keys(fns).map((k) => [k, []]))
  for (const fn of Object.values(fns)) fn() // warm-up round
  for (let r = 0; r < REPEATS; r++) {
    for (const [name, fn] of Object.entries(fns)) {
      const t0 = performance.now()
      fn()
      samples[name].push(((performance.now() - t0) * 1e6) / N)
    }
  }
  for (const [name, xs] of Object.entries(samples)) out.results[name] = median(xs)
}
if (sink === 1n && sinkAny === null) console.log('') // keeps the results alive
console.log(JSON.stringify(out))

// The shared vectors (tests/js/vector-cases.mjs) on any JavaScript runtime,
// without a test framework: Node, Bun and Deno run it alike (the js part,
// xtask/src/part_js.rs, on each runtime it installs).
//
//   RUNTIME check-vectors.mjs --vectors DIR [--entry require|import]
//       [--spec NAME] [--expect-backend native|wasm]
//
// --entry require loads the package with require() (its CommonJS entry
// point), --entry import with import() (its ESM entry point); --spec names
// what to load (default `snowmint`, resolved from this file's folder: copy
// the three files of tests/js it needs beside the consumer's node_modules).
// Prints the failed checks, then one line:
//   result: RUNTIME VERSION | ENTRY SPEC | backend B | vectors P/T passed | nextId ... | workers ...
// and exits non-zero when a check failed or the backend is not the expected one.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import process from 'node:process'
import { Worker } from 'node:worker_threads'

import { vectorCases } from './vector-cases.mjs'

function options(argv) {
  const o = { entry: 'import', spec: 'snowmint', vectors: null, expectBackend: null }
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]]
    if (value === undefined) throw new Error(`${flag} needs a value`)
    if (flag === '--entry' && (value === 'require' || value === 'import')) o.entry = value
    else if (flag === '--spec') o.spec = value
    else if (flag === '--vectors') o.vectors = value
    else if (flag === '--expect-backend') o.expectBackend = value
    else throw new Error(`unknown argument ${flag} ${value}`)
  }
  if (!o.vectors) throw new Error('--vectors DIR is required')
  return o
}

function runtime() {
  if (globalThis.Deno) return `deno ${globalThis.Deno.version.deno}`
  if (globalThis.Bun) return `bun ${globalThis.Bun.version}`
  return `node ${process.versions.node}`
}

const o = options(process.argv.slice(2))
let pkg
if (o.entry === 'require') {
  pkg = createRequire(import.meta.url)(o.spec)
} else {
  const mod = await import(o.spec)
  // The ESM entry point has the names and the module object as `default`.
  pkg = typeof mod.Layout === 'function' ? mod : mod.default
}
const vectors = (name) => JSON.parse(readFileSync(path.join(o.vectors, `${name}.json`), 'utf8'))

const cases = vectorCases(pkg, vectors)
let passed = 0
for (const c of cases) {
  try {
    c.run()
    passed++
  } catch (e) {
    console.log(`FAILED ${c.group} > ${c.name}: ${e && e.message}`)
  }
}
const backend = pkg.__backend

// Worker threads (the addon only): four workers and this thread make
// generators of one layout and node value and issue at once; the core's
// process-wide registry gives them one state, so no ID repeats. The
// WebAssembly fallback shares state only within a thread (docs/NODE.md),
// so it is not checked here.
async function workerCheck() {
  if (backend !== 'native') return 'workers: not shared by the fallback'
  const WORKERS = 4
  const [rounds, batch] = [20, 1000]
  const layout = '{"epoch_ms":1600000000000,"fields":[["timestamp",41],["shard",10],["sequence",12]]}'
  const nodes = { shard: 5 }
  const results = await Promise.all(
    Array.from({ length: WORKERS }, () => new Promise((resolve, reject) => {
      const w = new Worker(new URL('./check-worker.mjs', import.meta.url), {
        workerData: { entry: o.entry, spec: o.spec, layout, nodes, rounds, batch },
      })
      w.once('message', (m) => {
        resolve(m)
        w.terminate()
      })
      w.once('error', reject)
    })),
  )
  const all = new Set()
  for (const { backend: b, ids, unlike } of results) {
    if (b !== backend) throw new Error(`a worker loaded the ${b} backend, this thread ${backend}`)
    if (unlike !== 0) throw new Error(`a worker decoded ${unlike} IDs otherwise as bigints than as strings`)
    if (ids.length !== rounds * (batch + 1)) throw new Error(`a worker returned ${ids.length} IDs`)
    for (let i = 1; i < ids.length; i++) {
      if (!(ids[i] > ids[i - 1])) throw new Error(`a worker's IDs do not increase at ${i}`)
    }
    for (const id of ids) all.add(id)
  }
  const total = WORKERS * rounds * (batch + 1)
  if (all.size !== total) throw new Error(`${total - all.size} duplicate IDs across ${WORKERS} workers`)
  const next = new pkg.Generator(layout, nodes).nextId()
  if (results.some(({ ids }) => !(next > ids[ids.length - 1]))) {
    throw new Error("the main thread's generator does not continue the workers' state")
  }
  return `workers ${WORKERS}x${rounds * (batch + 1)} unique, decoded alike`
}

// Generator.nextId, the function each Generator has of its own (N-API, or
// on Bun a bun:ffi call with the N-API one behind it): IDs increase and carry
// the generator's node values, and a refusal of the core is thrown with its
// code.
function generatorCheck() {
  const g = new pkg.Generator('twitter', { datacenter: 3, worker: 9 })
  if (Object.keys(g).includes('nextId')) throw new Error('nextId is an enumerable property')
  let last = 0n
  for (let i = 0; i < 20000; i++) {
    const id = g.nextId()
    if (typeof id !== 'bigint' || !(id > last)) throw new Error(`nextId returned ${id} after ${last}`)
    last = id
  }
  const { nodes } = pkg.decode(last, 'twitter')
  if (nodes.datacenter !== 3 || nodes.worker !== 9) {
    throw new Error(`an ID carries ${JSON.stringify({ ...nodes })}, not datacenter 3, worker 9`)
  }
  // Baidu's layout ran out of time in November 2024 (vectors/layouts.json).
  const overflowed = new pkg.Generator('baidu', { worker: 1 })
  let thrown
  try {
    thrown = `the ID ${overflowed.nextId()}`
  } catch (e) {
    thrown = e && e.code
  }
  if (thrown !== 'time_overflow') throw new Error(`nextId past a layout's time threw ${thrown}, expected time_overflow`)
  return 'nextId 20000 increasing, refusal thrown'
}

let generator
try {
  generator = generatorCheck()
} catch (e) {
  generator = 'nextId FAILED'
  console.log(`FAILED Generator.nextId: ${e && e.message}`)
  process.exitCode = 1
}

let workers
try {
  workers = await workerCheck()
} catch (e) {
  workers = 'workers FAILED'
  console.log(`FAILED worker threads: ${e && e.message}`)
  process.exitCode = 1
}
const summary = `result: ${runtime()} | ${o.entry} ${o.spec} | backend ${backend} | vectors ${passed}/${cases.length} passed | ${generator} | ${workers}`
console.log(summary)
if (passed !== cases.length || cases.length === 0) process.exitCode = 1
if (o.expectBackend && backend !== o.expectBackend) {
  console.log(`FAILED: the backend is ${backend}, expected ${o.expectBackend}`)
  process.exitCode = 1
}

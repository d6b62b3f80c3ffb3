// One worker of check-vectors.mjs's worker check: loads the package as the
// main thread did (workerData: entry, spec), makes a Generator of the shared
// layout and node values, and posts back its IDs (single IDs and batches
// interleaved) and how many of them decode otherwise as a bigint (on Deno,
// through the addon's C entry and this thread's scratch array) than as a
// decimal string (through N-API), while the other workers decode too.
import { createRequire } from 'node:module'
import { parentPort, workerData } from 'node:worker_threads'

const { entry, spec, layout, nodes, rounds, batch } = workerData
let pkg
if (entry === 'require') {
  pkg = createRequire(import.meta.url)(spec)
} else {
  const mod = await import(spec)
  pkg = typeof mod.Layout === 'function' ? mod : mod.default
}
const g = new pkg.Generator(layout, nodes)
const out = new BigUint64Array(rounds * (batch + 1))
let k = 0
for (let r = 0; r < rounds; r++) {
  out[k++] = g.nextId()
  out.set(g.nextIds(batch), k)
  k += batch
}
const parsed = pkg.Layout.parse(layout)
const parts = (id) => JSON.stringify(parsed.decode(id))
let unlike = 0
for (let r = 0; r < 5; r++) for (const id of out) if (parts(id) !== parts(String(id))) unlike++
parentPort.postMessage({ backend: pkg.__backend, ids: out, unlike })

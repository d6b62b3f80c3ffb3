// One worker of check-vectors.mjs's worker check: loads the package as the
// main thread did (workerData: entry, spec), makes a Generator of the shared
// layout and node values, and posts back its IDs (single IDs and batches
// interleaved).
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
parentPort.postMessage({ backend: pkg.__backend, ids: out })

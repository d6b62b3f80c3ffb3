// Four worker_threads load the addon, each builds its own Generator with the
// same layout and node values, and all generate at once: the core's
// process-wide registry gives them one shared state, so no ID repeats.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Worker } from 'node:worker_threads'

import pkg, { pkgEntryUrl } from './pkg-native.mjs'

const WORKERS = 4
const ROUNDS = 50
const BATCH = 1000

test('4 worker threads, one layout and node value: zero duplicates', async () => {
  // A layout of its own, so no other test shares this state.
  const layout = '{"epoch_ms":1600000000000,"fields":[["timestamp",41],["shard",10],["sequence",12]]}'
  const nodes = { shard: 5 }
  const source = `
    const { parentPort, workerData } = require('node:worker_threads')
    import(workerData.url).then((m) => {
      const pkg = m.default && m.default.Generator ? m.default : m
      const g = new pkg.Generator(workerData.layout, workerData.nodes)
      const out = new BigUint64Array(workerData.rounds * (workerData.batch + 1))
      let k = 0
      for (let r = 0; r < workerData.rounds; r++) {
        out[k++] = g.nextId()           // single IDs and batches interleaved
        out.set(g.nextIds(workerData.batch), k)
        k += workerData.batch
      }
      parentPort.postMessage(out)
    })
  `
  const results = await Promise.all(
    Array.from({ length: WORKERS }, () => new Promise((resolve, reject) => {
      const w = new Worker(source, {
        eval: true,
        workerData: { url: pkgEntryUrl, layout, nodes, rounds: ROUNDS, batch: BATCH },
      })
      w.once('message', resolve)
      w.once('error', reject)
      w.once('exit', (code) => code !== 0 && reject(new Error(`worker exited with ${code}`)))
    })),
  )
  const all = new Set()
  for (const ids of results) {
    assert.equal(ids.length, ROUNDS * (BATCH + 1))
    // Each worker's own IDs increase.
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1])
    for (const id of ids) all.add(id)
  }
  assert.equal(all.size, WORKERS * ROUNDS * (BATCH + 1), 'duplicate IDs across workers')
  // The main thread's generator joins the same state.
  const main = new pkg.Generator(layout, nodes)
  const next = main.nextId()
  for (const ids of results) assert.ok(next > ids[ids.length - 1])
  for (const id of all) assert.equal(pkg.decode(id, layout).shard, 5)
})

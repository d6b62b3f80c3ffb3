// The `lease` option of `Generator`: a real store directory under a temp dir
// (the file store of snowmint-lease), no mocks. `twitter` with `datacenter`
// fixed leases `worker`: 32 slots.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { inspect } from 'node:util'

import pkg, { pkgEntryUrl } from './pkg-native.mjs'
import { throwsCode } from '../../tests/js/helpers.mjs'

const { Generator, PureGenerator, decode } = pkg

const tmp = mkdtempSync(path.join(os.tmpdir(), 'snowmint-node-lease-'))
after(() => rmSync(tmp, { recursive: true, force: true }))
let dirs = 0
/** A lease URL on a store directory of its own. */
const store = () => `file:${path.join(tmp, `store-${dirs++}`)}`

const SLOTS = 32
const leased = (url, options = {}) => new Generator('twitter', { datacenter: 1 }, { lease: url, ...options })

/** Closes every generator, whatever happens. */
function closeAll(gens) {
  for (const g of gens) g.close()
}

test('a leased generator gets a worker; nodes, IDs and lease info show it', () => {
  const url = store()
  const g = leased(url)
  try {
    const info = g.lease
    assert.equal(Object.getPrototypeOf(info), Object.prototype)
    assert.equal(info.field, 'worker')
    assert.ok(Number.isInteger(info.slot) && info.slot >= 0 && info.slot < SLOTS)
    assert.deepEqual(g.nodes, { datacenter: 1, worker: info.slot })
    for (const key of ['slot', 'field', 'store', 'reservedUntilMs', 'expiresMs']) {
      assert.ok(Object.hasOwn(info, key), `no key ${key} in ${JSON.stringify(info)}`)
    }
    assert.equal(typeof info.store, 'string')
    assert.ok(info.store.includes(url.slice('file:'.length)), info.store)
    assert.equal(typeof info.reservedUntilMs, 'number')
    assert.ok(info.reservedUntilMs > Date.now() - 1000)
    assert.equal(info.expiresMs, null) // the file store: no TTL
    assert.equal(info.lost, null)
    assert.equal(info.lastError, null)
    // camelCase keys only, and every value a number, a string or null.
    for (const [k, v] of Object.entries(info)) {
      assert.match(k, /^[a-z][A-Za-z]*$/)
      assert.ok(v === null || typeof v === 'number' || typeof v === 'string', `${k}: ${typeof v}`)
    }
    // Every way to draw an ID carries the leased node values.
    const ids = [g.nextId(), BigInt(g.nextIdString()), ...g.nextIds(3)]
    for (const id of ids) {
      const p = decode(id, 'twitter')
      assert.deepEqual({ ...p.nodes }, { datacenter: 1, worker: info.slot })
    }
  } finally {
    g.close()
  }
})

test('without a lease: lease is null, close does nothing', () => {
  const g = new Generator('twitter', { datacenter: 2, worker: 7 })
  assert.equal(g.lease, null)
  assert.deepEqual(g.nodes, { datacenter: 2, worker: 7 })
  g.close()
  g.close()
  assert.equal(typeof g.nextId(), 'bigint')
})

test('32 generators on one directory get 32 workers; the 33rd finds no free slot', () => {
  const url = store()
  const gens = []
  try {
    for (let i = 0; i < SLOTS; i++) gens.push(leased(url))
    const workers = new Set(gens.map((g) => g.nodes.worker))
    assert.equal(workers.size, SLOTS)
    assert.deepEqual(
      [...workers].sort((a, b) => a - b),
      Array.from({ length: SLOTS }, (_, i) => i),
    )
    throwsCode(() => leased(url), 'lease_unavailable', Error)
    assert.throws(() => leased(url), (e) => /all 32 slots are held/.test(e.message) && e.message.includes(url.slice(5)))
    // Closing one frees its slot for the next.
    const freed = gens[5].nodes.worker
    gens[5].close()
    const next = leased(url)
    gens.push(next)
    assert.equal(next.nodes.worker, freed)
    throwsCode(() => leased(url), 'lease_unavailable', Error)
  } finally {
    closeAll(gens)
  }
})

test('after close: lease_expired, close again is fine, the next holder issues above', () => {
  const url = store()
  const gens = []
  try {
    // Hold every slot but one, so the successor must take the closed one's.
    for (let i = 0; i < SLOTS - 1; i++) gens.push(leased(url))
    // Borrowing from the next time units puts this holder's IDs ahead of the
    // clock: its successor must still start above them.
    const g = leased(url, { sequenceExhausted: 'borrow:50' })
    const slot = g.lease.slot
    const mine = [g.nextId(), ...g.nextIds(100000)]
    const last = mine.reduce((a, b) => (a > b ? a : b))
    g.close()
    throwsCode(() => g.nextId(), 'lease_expired', Error)
    throwsCode(() => g.nextIdString(), 'lease_expired', Error)
    throwsCode(() => g.nextIds(2), 'lease_expired', Error)
    const { nextId } = g
    throwsCode(() => nextId(), 'lease_expired', Error)
    g.close()
    // The successor's clock may be behind the released `hwm`: let it wait.
    const h = leased(url, { clockBackwards: 'wait:1000' })
    gens.push(h)
    assert.equal(h.lease.slot, slot)
    const first = h.nextId()
    assert.ok(first > last, `${first} <= ${last}`)
    assert.ok(h.nextIds(1000).every((id) => id > last))
    // The closed one stays closed though its successor has the same node values.
    throwsCode(() => g.nextId(), 'lease_expired', Error)
  } finally {
    closeAll(gens)
  }
})

test('closing many times, also from a detached method, is idempotent', () => {
  const g = leased(store())
  const { close } = Generator.prototype
  close.call(g)
  close.call(g)
  g.close()
  assert.equal(g.lease.lost, null)
  throwsCode(() => g.nextId(), 'lease_expired', Error)
})

test('Symbol.dispose closes the generator', { skip: typeof Symbol.dispose !== 'symbol' && 'no Symbol.dispose' }, () => {
  const url = store()
  const g = leased(url)
  assert.equal(typeof g[Symbol.dispose], 'function')
  g[Symbol.dispose]()
  throwsCode(() => g.nextId(), 'lease_expired', Error)
  g[Symbol.dispose]()
  // Its slot is free again: 32 fit.
  const gens = []
  try {
    for (let i = 0; i < SLOTS; i++) gens.push(leased(url))
  } finally {
    closeAll(gens)
  }
})

test('bad lease options are invalid_option', () => {
  const url = store()
  // PureGenerator has no lease (its node values are checked first: all given here).
  throwsCode(() => new PureGenerator('twitter', { datacenter: 1, worker: 3 }, { lease: url }), 'invalid_option')
  // A scheme that is not a store.
  assert.throws(
    () => leased('ftp://x'),
    (e) => e.code === 'invalid_option' && !(e instanceof TypeError) && /ftp/.test(e.message),
  )
  // A store option that is not a number.
  assert.throws(
    () => leased(`${url}?ttl_ms=abc`),
    (e) => e.code === 'invalid_option' && /ttl_ms/.test(e.message),
  )
  assert.throws(
    () => leased('file:/tmp?ttl_ms=abc'),
    (e) => e.code === 'invalid_option' && /ttl_ms/.test(e.message) && /lease/.test(e.message),
  )
  // No field left to lease.
  throwsCode(() => new Generator('twitter', { datacenter: 1, worker: 3 }, { lease: url }), 'invalid_option')
  // Not a string: the type error of invalid_option.
  throwsCode(() => leased(5), 'invalid_option', TypeError)
  throwsCode(() => leased(5n), 'invalid_option', TypeError)
  throwsCode(() => leased({}), 'invalid_option', TypeError)
  // Nothing was left held: every slot is still free.
  const gens = []
  try {
    for (let i = 0; i < SLOTS; i++) gens.push(leased(url))
  } finally {
    closeAll(gens)
  }
})

test('every network store is built in: a port where nothing listens is lease_unavailable naming it', () => {
  // The stores against real servers: cargo xtask test interop.
  for (const url of ['postgres://postgres@127.0.0.1:1/test', 'mysql://root@127.0.0.1:1/test', 'redis://127.0.0.1:1', 'etcd://127.0.0.1:1', 'zookeeper://127.0.0.1:1']) {
    assert.throws(
      () => leased(`${url}?timeout_ms=2000`),
      (e) => e.code === 'lease_unavailable' && e.message.includes('127.0.0.1:1') && !/not built/.test(e.message),
    )
  }
})

test('a lease on node values a generator without a lease holds is refused, naming them', () => {
  const url = store()
  // The store is empty: a lease on datacenter 29 claims worker 0 first.
  const plain = new Generator('twitter', { datacenter: 29, worker: 0 })
  plain.nextId()
  const lease = () => new Generator('twitter', { datacenter: 29 }, { lease: url })
  throwsCode(lease, 'lease_unavailable', Error)
  assert.throws(lease, (e) => e.message.includes('datacenter=29, worker=0') && e.message.includes('without a lease'))
  assert.equal(typeof plain.nextId(), 'bigint')
  // Another datacenter is not held: its lease takes worker 0.
  const other = new Generator('twitter', { datacenter: 30 }, { lease: url })
  try {
    assert.equal(other.nodes.worker, 0)
  } finally {
    other.close()
  }
})

test('a generator garbage-collected without close releases its slot', () => {
  // In a child process with --expose-gc (the test runner's own has no `gc`).
  const script = `
    const { Generator } = require(${JSON.stringify(fileURLToPath(pkgEntryUrl))})
    const url = process.argv[1]
    const fill = () => Array.from({ length: ${SLOTS} }, () => new Generator('twitter', { datacenter: 1 }, { lease: url }))
    const full = () => {
      try {
        new Generator('twitter', { datacenter: 1 }, { lease: url }).close()
        return false
      } catch (e) {
        if (e.code !== 'lease_unavailable') throw e
        return true
      }
    }
    ;(async () => {
      let gens = fill()
      gens[0].nextId()
      if (!full()) throw new Error('a 33rd generator got a slot')
      gens = null
      // N-API finalizers run after a collection, from the event loop.
      for (let round = 0; round < 100; round++) {
        global.gc()
        await new Promise((resolve) => setTimeout(resolve, 10))
        try {
          gens = fill()
          break
        } catch (e) {
          if (e.code !== 'lease_unavailable') throw e
        }
      }
      if (gens === null) throw new Error('the collected generators kept their slots')
      for (const g of gens) g.close()
      console.log('released')
    })().catch((e) => {
      console.error(e)
      process.exit(1)
    })
  `
  const out = execFileSync(process.execPath, ['--expose-gc', '-e', script, store()], { encoding: 'utf8' })
  assert.equal(out.trim(), 'released')
})

test('a leased generator: JSON carries the lease info, util.inspect the leased field only', () => {
  const url = store()
  const g = leased(url)
  try {
    const json = JSON.parse(JSON.stringify(g))
    assert.deepEqual(json.nodes, g.nodes)
    assert.deepEqual(Object.keys(json.lease).sort(), Object.keys(g.lease).sort())
    assert.equal(json.lease.slot, g.nodes.worker)
    assert.equal(json.layout.epoch_ms, 1288834974657)
    const shown = inspect(g)
    assert.equal(shown, `Generator <twitter datacenter 1 worker ${g.nodes.worker} (worker leased)>`)
    assert.ok(!shown.includes(tmp), shown) // no store location
  } finally {
    g.close()
  }
  assert.match(inspect(g), /\(worker leased, lost\)>$|\(worker leased\)>$/)
})

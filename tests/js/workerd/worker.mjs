// A Cloudflare Worker using snowmint-wasm's web build (pkg-web), run by
// workerd (run.mjs). The .wasm is a module binding, compiled by workerd:
// initSync instantiates it.
//
// On Cloudflare, Date.now() is the time of the last I/O: it stands still
// while a request computes. Local workerd (1.20261117.1) reads the real
// clock instead (run.mjs measures it), so a request with `frozen=1` gets
// Cloudflare's behaviour: Date.now() pinned, for the request, to its
// reading when the request began (the module calls the global Date.now on
// every reading).
import { initSync, Generator, Layout, PureGenerator, decode } from './pkg/index.js'
import wasm from './pkg/snowmint_wasm_bg.wasm'

initSync({ module: wasm })

const json = (value, status = 200) =>
  new Response(JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? v.toString() : v)), {
    status,
    headers: { 'content-type': 'application/json' },
  })

// One generator per node value, made on first use and kept by the isolate.
const generators = new Map()
function generator(worker, exhausted) {
  const key = `${worker}/${exhausted ?? ''}`
  if (!generators.has(key)) {
    const options = { sequenceStart: 'zero' }
    if (exhausted) options.sequenceExhausted = exhausted
    generators.set(key, new Generator('twitter', { datacenter: 7, worker }, options))
  }
  return generators.get(key)
}

const realNow = Date.now

export default {
  async fetch(request) {
    const url = new URL(request.url)
    const q = url.searchParams
    if (q.get('frozen') === '1') {
      const t = realNow()
      Date.now = () => t
    }
    try {
      switch (url.pathname) {
        case '/decode': {
          const p = decode(BigInt(q.get('id')), Layout.preset('twitter'))
          return json({ timestampMs: p.timestampMs, sequence: p.sequence, datacenter: p.datacenter, worker: p.worker })
        }
        case '/pure': {
          const g = new PureGenerator('twitter', { datacenter: 1, worker: 3 }, { sequenceStart: 'zero' })
          return json({ next: g.next(Number(q.get('now'))) })
        }
        case '/next': {
          const g = generator(Number(q.get('worker')), q.get('exhausted'))
          const a = g.nextId()
          const b = g.nextId()
          return json({ ids: [a, b], now: Date.now() })
        }
        case '/clock': {
          // How often Date.now() changes over 5 million readings.
          let changes = 0
          let last = Date.now()
          for (let i = 0; i < 5_000_000; i++) {
            const t = Date.now()
            if (t !== last) changes++
            last = t
          }
          return json({ changes })
        }
        case '/many': {
          const g = generator(Number(q.get('worker')), q.get('exhausted'))
          const before = Date.now()
          const ids = g.nextIds(Number(q.get('n')))
          const sorted = ids.every((id, i) => i === 0 || ids[i - 1] < id)
          return json({
            count: ids.length,
            unique: new Set(ids).size,
            increasing: sorted,
            first: ids[0],
            last: ids[ids.length - 1],
            clockFrozen: Date.now() === before,
          })
        }
        default:
          return json({ error: { code: 'not_found' } }, 404)
      }
    } catch (e) {
      return json({ error: { code: e.code ?? null, name: e.name, message: e.message } }, 500)
    } finally {
      Date.now = realNow
    }
  },
}

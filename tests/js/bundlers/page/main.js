// A page's code: snowmint-wasm's web build as a bundler takes it (the .wasm
// located by the package's own `new URL(..., import.meta.url)`), decoding
// and generating. The result goes to globalThis.__result for run.mjs.
import init, { Generator, Layout, decode, toBase62 } from 'snowmint-wasm-web'

async function main() {
  await init()
  const id = 1541815603606036480n
  const parts = decode(id, Layout.preset('twitter'))
  const g = new Generator('twitter', { datacenter: 1, worker: 2 })
  const ids = [g.nextId(), g.nextId(), ...g.nextIds(5000)]
  return {
    timestampMs: parts.timestampMs,
    datacenter: parts.datacenter,
    worker: parts.worker,
    sequence: parts.sequence,
    base62: toBase62(id),
    first: String(ids[0]),
    increasing: ids.every((x, i) => i === 0 || ids[i - 1] < x),
    count: ids.length,
    now: Date.now(),
  }
}

main().then(
  (r) => { globalThis.__result = r },
  (e) => { globalThis.__result = { error: String((e && e.stack) || e) } },
)

// A server's code: the native package `snowmint` as a bundler takes it, the
// addon (snowmint-linux-x64-gnu, ...) and the WebAssembly fallback kept
// external. Prints one JSON line for run.mjs.
import * as snowmint from 'snowmint'

const { Generator, Layout, decode, toBase62 } = snowmint
const id = 1541815603606036480n
const parts = decode(id, Layout.preset('twitter'))
const g = new Generator('twitter', { datacenter: 1, worker: 2 })
const ids = [g.nextId(), g.nextId(), ...g.nextIds(5000)]
console.log(JSON.stringify({
  backend: snowmint.__backend ?? snowmint.default?.__backend,
  timestampMs: parts.timestampMs,
  datacenter: parts.datacenter,
  worker: parts.worker,
  sequence: parts.sequence,
  base62: toBase62(id),
  first: String(ids[0]),
  increasing: ids.every((x, i) => i === 0 || ids[i - 1] < x),
  count: ids.length,
  now: Date.now(),
}))

// An ESM consumer: import from 'snowmint' (named and default imports).
import snowmint, { Layout, Generator, decode, toBase32 } from 'snowmint'
import * as ns from 'snowmint'

const g = new Generator('discord', { worker: 1, process: 2 })
const parts = decode(g.nextId(), Layout.preset('discord'))
const named = Object.keys(ns).filter((k) => k !== 'default' && !k.startsWith('__')).sort()
const fromDefault = Object.keys(snowmint).filter((k) => !k.startsWith('__')).sort()
if (JSON.stringify(named) !== JSON.stringify(fromDefault)) {
  throw new Error(`named exports ${named} differ from the CommonJS module ${fromDefault}`)
}
console.log(JSON.stringify({
  names: named,
  parts: { worker: parts.worker, process: parts.process },
  base32: toBase32(175928847299117063n),
  sameObject: snowmint.Layout === Layout && ns.Generator === Generator,
}))

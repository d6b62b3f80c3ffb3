// Bun's nextId() through bun:ffi (what the package uses on Bun) against the
// addon's N-API nextId (the class in binding.js) and @sapphire/snowflake, in
// one process, 7 interleaved rounds of 500,000: median ns per operation.
//   cd bench/runtimes && node_modules/bun/bin/bun.exe bun-nextid.cjs
// (after bench/runtimes/run has installed the packages).
'use strict'
const path = require('path')
const nm = path.join(process.cwd(), 'node_modules')
const s = require(path.join(nm, 'snowmint'))
const b = require(path.join(nm, 'snowmint', 'binding.js'))
const { Snowflake } = require(path.join(nm, '@sapphire/snowflake'))
const ffiGen = new s.Generator('mastodon')
const napiGen = new b.Generator('mastodon')
const sf = new Snowflake(1420070400000n)
const N = 500000
function time(f) { const t = performance.now(); for (let i = 0; i < N; i++) f(); return (performance.now() - t) * 1e6 / N }
const r = { ffi: [], napi: [], sapphire: [] }
for (let round = 0; round < 7; round++) {
  r.ffi.push(time(() => ffiGen.nextId()))
  r.napi.push(time(() => napiGen.nextId()))
  r.sapphire.push(time(() => sf.generate()))
}
const med = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1]
const m = { ffi: med(r.ffi), napi: med(r.napi), sapphire: med(r.sapphire) }
console.log(JSON.stringify({ runtime: process.versions.bun ? 'bun ' + process.versions.bun : 'node', ...m, ffi_ratio: m.ffi / m.sapphire, napi_ratio: m.napi / m.sapphire }))

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
//   result: RUNTIME VERSION | ENTRY SPEC | backend B | vectors P/T passed
// and exits non-zero when a check failed or the backend is not the expected one.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import process from 'node:process'

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
const summary = `result: ${runtime()} | ${o.entry} ${o.spec} | backend ${backend} | vectors ${passed}/${cases.length} passed`
console.log(summary)
if (passed !== cases.length || cases.length === 0) process.exitCode = 1
if (o.expectBackend && backend !== o.expectBackend) {
  console.log(`FAILED: the backend is ${backend}, expected ${o.expectBackend}`)
  process.exitCode = 1
}

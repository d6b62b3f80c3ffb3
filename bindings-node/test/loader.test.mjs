// The entry point's choice of core (index.js): the native addon from the
// per-platform package, else the WebAssembly fallback (snowmint-wasm), else an
// error that names the platform and what was tried. Each case runs in a child
// process of its own, against the packed packages that cargo xtask test node
// installed:
//   SNOWMINT_CONSUMER_DIR           snowmint + snowmint-linux-x64-gnu + snowmint-wasm
//   SNOWMINT_FALLBACK_CONSUMER_DIR  snowmint + snowmint-wasm (no platform package)
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'

const nativeDir = process.env.SNOWMINT_CONSUMER_DIR
const fallbackDir = process.env.SNOWMINT_FALLBACK_CONSUMER_DIR
const needBoth = {
  skip: nativeDir && fallbackDir ? false : 'SNOWMINT_CONSUMER_DIR and SNOWMINT_FALLBACK_CONSUMER_DIR are not set (cargo xtask test node sets them)',
}

function node(cwd, code, env = {}, type = 'commonjs') {
  const args = type === 'module' ? ['--input-type=module', '-e', code] : ['-e', code]
  const e = { ...process.env, ...env }
  delete e.SNOWMINT_FORCE_WASM
  Object.assign(e, env)
  return spawnSync(process.execPath, args, { cwd, env: e, encoding: 'utf8' })
}

function json(cwd, code, env, type) {
  const r = node(cwd, code, env, type)
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

const REPORT = `
  const s = require('snowmint')
  const g = new s.Generator('twitter', { datacenter: 1, worker: 2 })
  const id = g.nextId()
  console.log(JSON.stringify({ backend: s.__backend, worker: s.decode(id, 'twitter').worker,
    names: Object.keys(s).filter((k) => !k.startsWith('__')).sort() }))`

test('the installed platform package loads the native addon', needBoth, () => {
  const r = json(nativeDir, REPORT)
  assert.equal(r.backend, 'native')
  assert.equal(r.worker, 2)
})

test('SNOWMINT_FORCE_WASM=1 loads the WebAssembly fallback, with the same names', needBoth, () => {
  const native = json(nativeDir, REPORT)
  const forced = json(nativeDir, REPORT, { SNOWMINT_FORCE_WASM: '1' })
  assert.equal(forced.backend, 'wasm')
  assert.equal(forced.worker, 2)
  assert.deepEqual(forced.names, native.names)
})

test('without the platform package, the fallback loads by itself (CommonJS and ESM)', needBoth, () => {
  assert.equal(json(fallbackDir, REPORT).backend, 'wasm')
  const esm = json(
    fallbackDir,
    `import * as s from 'snowmint'
     import def from 'snowmint'
     console.log(JSON.stringify({ backend: def.__backend, same: s.Generator === def.Generator,
       id: typeof new s.Generator('mastodon').nextId() }))`,
    {},
    'module',
  )
  assert.deepEqual(esm, { backend: 'wasm', same: true, id: 'bigint' })
})

test("the fallback refuses a lease with the core's invalid_option, and has the addon Generator members", needBoth, () => {
  const r = json(
    fallbackDir,
    `const { Generator } = require('snowmint')
     const refusal = (G) => {
       try { new G('twitter', { datacenter: 1, worker: 2 }, { lease: 'file:///tmp/snowmint-never' }) } catch (e) { return e }
     }
     const error = refusal(Generator)
     // The core's error, as the WebAssembly package itself throws it.
     const core = refusal(require('snowmint-wasm').Generator)
     let mask
     try { new (require('snowmint').IdMask)('twitter', '00'.repeat(16)) } catch (e) { mask = e }
     const g = new Generator('twitter', { datacenter: 3, worker: 4 })
     const disposed = typeof g[Symbol.dispose] === 'function' || typeof Symbol.dispose !== 'symbol'
     g.close()
     console.log(JSON.stringify({ code: error && error.code, message: error && error.message,
       core: core && core.message, mask: mask && [mask.code, mask.message], isError: error instanceof Error, nodes: g.nodes, lease: g.lease, disposed,
       after: typeof g.nextId() }))`,
  )
  assert.equal(r.code, 'invalid_option')
  assert.equal(r.isError, true)
  assert.equal(r.message, r.core)
  assert.match(r.message, /^invalid option: lease /)
  // The core knows no binding package: which builds lack leases is the package's to document.
  assert.doesNotMatch(r.message, /WebAssembly|Python|Node|native|addon/)
  // IdMask, which the core has no error for: the core's code and message form.
  assert.deepEqual(r.mask, ['invalid_option', 'invalid option: IdMask is not in the WebAssembly build [invalid_option]'])
  assert.deepEqual(r.nodes, { datacenter: 3, worker: 4 })
  assert.equal(r.lease, null)
  assert.equal(r.disposed, true)
  assert.equal(r.after, 'bigint')
})

test('the fallback checks node values with the core (missing_node, node_out_of_range)', needBoth, () => {
  const r = json(
    fallbackDir,
    `const { Generator } = require('snowmint')
     const codes = []
     for (const nodes of [{ datacenter: 1 }, { datacenter: 1, worker: 32 }]) {
       try { new Generator('twitter', nodes) } catch (e) { codes.push(e.code) }
     }
     console.log(JSON.stringify(codes))`,
  )
  assert.equal(r.length, 2)
  assert.equal(r[0], 'missing_node')
})

test('with neither the addon nor the fallback, the error names the platform and what was tried', needBoth, () => {
  // The fallback consumer's snowmint alone, without snowmint-wasm beside it.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'snowmint-noload-'))
  try {
    cpSync(path.join(fallbackDir, 'node_modules/snowmint'), path.join(dir, 'node_modules/snowmint'), { recursive: true })
    const r = node(dir, "require('snowmint')")
    assert.notEqual(r.status, 0)
    assert.match(r.stderr, /snowmint: no binding loads on /)
    assert.match(r.stderr, new RegExp(`${process.platform}-${process.arch} \\(glibc [0-9.]+\\)`))
    assert.match(r.stderr, /the native addon \(binding\.js, package snowmint-<platform>\): .*snowmint-linux-x64-gnu/)
    assert.match(r.stderr, /the WebAssembly fallback \(package snowmint-wasm\): Cannot find module 'snowmint-wasm'/)
    assert.match(r.stderr, /code: 'binding_unavailable'/)
    assert.doesNotMatch(r.stderr, /npm has a bug/)
    // Forced to the fallback: the addon is named as skipped.
    const forced = node(dir, "require('snowmint')", { SNOWMINT_FORCE_WASM: '1' })
    assert.match(forced.stderr, /the native addon: skipped \(SNOWMINT_FORCE_WASM=1\)/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('the main package ships no binary; each platform package ships its addon', needBoth, () => {
  const ls = (dir) => execFileSync('find', ['.', '-type', 'f'], { cwd: dir, encoding: 'utf8' }).split('\n')
  const main = ls(path.join(nativeDir, 'node_modules/snowmint'))
  assert.equal(main.filter((f) => /\.(node|wasm)$/.test(f)).length, 0, main.join(' '))
  assert.ok(ls(path.join(nativeDir, 'node_modules/snowmint-linux-x64-gnu')).includes('./snowmint.linux-x64-gnu.node'))
  assert.ok(ls(path.join(nativeDir, 'node_modules/snowmint-wasm')).includes('./snowmint_wasm_bg.wasm'))
})

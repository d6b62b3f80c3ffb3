// Checks of the WebAssembly packages beyond the shared suite (tests/js/):
// the size budget, the package files, the web (ESM) build under Node, the
// wasm-only batch decoder, and the README quickstart.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { describe, test } from 'node:test'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { gzipSync } from 'node:zlib'

const here = path.dirname(fileURLToPath(import.meta.url))
const pkgDir = path.join(here, '..')
const root = path.resolve(pkgDir, '..')
const nodePkg = path.join(pkgDir, 'pkg-node')
const webPkg = path.join(pkgDir, 'pkg-web')
const snowmint = createRequire(import.meta.url)(nodePkg)

// Issue 13's budget: what a browser user downloads, the whole web package
// (module, wasm-bindgen's glue and the package's JavaScript), at most 40 KB
// gzipped. The test fails past it and prints how far from it the size is.
const WEB_GZIP_BUDGET = 40 * 1024
const vsBudget = (size, budget) =>
  size <= budget ? `within the budget of ${budget}` : `OVER the budget of ${budget} by ${size - budget}`

describe('size budget', () => {
  test(`the browser package is at most ${WEB_GZIP_BUDGET} bytes gzipped (its budget)`, () => {
    // Everything a browser loads: the entry point, api.js, api-common.js, parts.js, wasm-bindgen's JS
    // glue and the module.
    const files = ['index.js', 'api.js', 'api-common.js', 'parts.js', 'snowmint_wasm.js', 'snowmint_wasm_bg.wasm']
    let total = 0
    for (const f of files) {
      const bytes = readFileSync(path.join(webPkg, f))
      const gz = gzipSync(bytes, { level: 9 }).length
      console.log(`# pkg-web/${f}: ${bytes.length} bytes, ${gz} bytes gzipped`)
      total += gz
    }
    console.log(`# browser package: ${total} bytes gzipped, ${vsBudget(total, WEB_GZIP_BUDGET)}`)
    assert.ok(total <= WEB_GZIP_BUDGET, `${total} bytes > ${WEB_GZIP_BUDGET}`)
  })
})

describe('package files', () => {
  test('pkg-node is CommonJS: no "type": "module" in any package.json above it', () => {
    for (let dir = nodePkg; dir !== path.dirname(dir); dir = path.dirname(dir)) {
      const pj = path.join(dir, 'package.json')
      if (existsSync(pj)) assert.notEqual(JSON.parse(readFileSync(pj, 'utf8')).type, 'module', pj)
    }
    assert.equal(typeof snowmint.Layout, 'function')
  })

  test('the version is the workspace version', () => {
    const cargo = readFileSync(path.join(root, 'Cargo.toml'), 'utf8')
    const version = /^version = "(.*)"/m.exec(cargo)[1]
    for (const dir of [nodePkg, webPkg]) {
      assert.equal(JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).version, version)
    }
  })

  test('TypeScript declarations name the whole API', () => {
    const dts = readFileSync(path.join(nodePkg, 'index.d.ts'), 'utf8')
    for (const name of ['class Layout', 'class Generator', 'class PureGenerator', 'function decode',
      'function compose', 'function idBounds', 'function toBase32', 'function fromBase32', 'function toBase62',
      'function fromBase62', 'function formatId', 'function parseId', 'interface Parts', 'type IdLike',
      'interface GeneratorOptions', 'interface Field', 'decodeMany']) {
      assert.ok(dts.includes(name), name)
    }
    assert.ok(!dts.includes('__'), 'no raw exports')
  })
})

describe('TypeScript', () => {
  // wasm-bindgen's classes declare [Symbol.dispose]: consumers need the
  // esnext.disposable lib (TypeScript >= 5.2).
  test('the declarations type-check a consumer of the whole API (tsc --strict)', () => {
    const dir = path.join(root, '.cache', 'wasm-ts')
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(path.join(dir, 'node_modules'), { recursive: true })
    symlinkSync(nodePkg, path.join(dir, 'node_modules', 'snowmint-wasm'), 'dir')
    writeFileSync(path.join(dir, 'consumer.ts'), readFileSync(path.join(here, 'ts', 'consumer.ts')))
    writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, target: 'es2022', lib: ['es2022', 'esnext.disposable'], module: 'nodenext',
        moduleResolution: 'nodenext', types: [] },
      files: ['consumer.ts'],
    }))
    execFileSync(path.join(pkgDir, 'node_modules', '.bin', 'tsc'), ['-p', dir], { stdio: 'inherit' })
  })
})

describe('the web build under Node (ESM, initSync)', () => {
  test('decodes and generates like the Node build', async () => {
    const web = await import(pathToFileURL(path.join(webPkg, 'index.js')).href)
    web.initSync({ module: readFileSync(path.join(webPkg, 'snowmint_wasm_bg.wasm')) })
    const p = web.decode(175928847299117063n, 'discord')
    assert.equal(p.date.toISOString(), '2016-04-30T11:18:25.796Z')
    assert.deepEqual({ ...p.nodes }, { worker: 1, process: 0 })
    const g = new web.Generator('twitter', { datacenter: 1, worker: 2 })
    assert.ok(g.nextId() < g.nextId())
  })
})

describe('Layout.decodeMany (wasm package only)', () => {
  test('the same values as decode, in columns', () => {
    const layout = snowmint.Layout.preset('twitter')
    const g = new snowmint.Generator(layout, { datacenter: 3, worker: 7 })
    const ids = g.nextIds(5000)
    const cols = layout.decodeMany(ids)
    assert.ok(cols.timestampMs instanceof Float64Array && cols.sequence instanceof Float64Array)
    assert.deepEqual(Object.keys(cols.nodes), ['datacenter', 'worker'])
    for (let i = 0; i < ids.length; i += 97) {
      const p = layout.decode(ids[i])
      assert.equal(cols.timestampMs[i], p.timestampMs)
      assert.equal(cols.sequence[i], p.sequence)
      assert.equal(cols.nodes.datacenter[i], 3)
      assert.equal(cols.nodes.worker[i], 7)
    }
    assert.equal(layout.decodeMany(new BigUint64Array(0)).timestampMs.length, 0)
    // Into a caller's buffer: the columns are views of it.
    const into = new Float64Array(ids.length * 4 + 3)
    const again = layout.decodeMany(ids, into)
    assert.equal(again.timestampMs.buffer, into.buffer)
    assert.deepEqual(again.timestampMs, cols.timestampMs)
    assert.deepEqual(again.nodes.worker, cols.nodes.worker)
    assert.equal(layout.decodeMany(ids, undefined).sequence.length, ids.length)
  })

  test('errors', () => {
    // The core's invalid_id for a bad ID (its index in `index`) or for ids of
    // another type; a bad buffer is refused by the engine's typed arrays
    // (their own TypeError and RangeError, without a code).
    const layout = snowmint.Layout.preset('twitter')
    let e = null
    try { layout.decodeMany(new BigUint64Array([1n, 2n ** 63n])) } catch (x) { e = x }
    assert.ok(e instanceof Error && e.code === 'invalid_id' && e.index === 1, String(e))
    for (const ids of [[1n], 5, 'ids', null, undefined]) {
      e = null
      try { layout.decodeMany(ids) } catch (x) { e = x }
      assert.ok(e instanceof TypeError && e.code === 'invalid_id', String(e))
    }
    e = null
    try { layout.decodeMany(new BigUint64Array(2), new Float64Array(7)) } catch (x) { e = x }
    assert.ok(e instanceof RangeError, String(e))
    e = null
    try { layout.decodeMany(new BigUint64Array(2), [0, 0, 0, 0, 0, 0, 0, 0]) } catch (x) { e = x }
    assert.ok(e instanceof TypeError, String(e))
  })
})

describe('the module interface (js/api.js)', () => {
  test('an argument whose reading throws leaves no arguments behind for the next call', () => {
    const nodes = { get datacenter() { throw new Error('boom') }, worker: 1 }
    assert.throws(() => new snowmint.Generator('twitter', nodes), /boom/)
    assert.equal(snowmint.compose('mastodon', 1, 2), (1n << 16n) | 2n)
    assert.equal(typeof new snowmint.Generator('twitter', { datacenter: 1, worker: 2 }).nextId(), 'bigint')
  })

  test('equal layouts share one Parts prototype; date and nodes are getters', () => {
    const a = snowmint.Layout.preset('discord').decode(175928847299117063n)
    const b = snowmint.decode('175928847299117063', snowmint.Layout.parse('discord'))
    assert.equal(Object.getPrototypeOf(a), Object.getPrototypeOf(b))
    assert.deepEqual(Object.keys(a), ['id', 'timestampMs', 'sequence', 'worker', 'process'])
    assert.equal(typeof Object.getOwnPropertyDescriptor(Object.getPrototypeOf(a), 'date').get, 'function')
    assert.deepEqual(a.nodes, { worker: 1, process: 0 })
  })
})

describe('README', () => {
  test('the WebAssembly quickstart (docs/WASM.md) runs', () => {
    const readme = readFileSync(path.join(root, 'docs', 'WASM.md'), 'utf8')
    const section = /<!-- quickstart:wasm:start -->([\s\S]*?)<!-- quickstart:wasm:end -->/.exec(readme)[1]
    const code = /```js\n([\s\S]*?)```/.exec(section)[1]
    // Run it as a consumer would: `snowmint-wasm` resolved from node_modules.
    const dir = path.join(root, '.cache', 'wasm-readme')
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(path.join(dir, 'node_modules'), { recursive: true })
    symlinkSync(nodePkg, path.join(dir, 'node_modules', 'snowmint-wasm'), 'dir')
    writeFileSync(path.join(dir, 'quickstart.mjs'), code)
    execFileSync(process.execPath, ['quickstart.mjs'], { cwd: dir, stdio: 'inherit' })
  })
})

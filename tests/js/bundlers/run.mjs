// Bundlers as users run them: Vite, esbuild and webpack each build
//  (a) a page importing snowmint-wasm's web build (page/main.js), served
//      from 127.0.0.1 and run in headless Chromium (playwright-core): it
//      decodes and generates, and requests nothing from another origin;
//  (b) a server bundle importing the native package `snowmint`
//      (server/server.mjs), the addon and the WebAssembly fallback kept
//      external, run by Node from a folder whose node_modules has the
//      installed tarballs: it must load the addon (`__backend` 'native').
//
//   node run.mjs --tools DIR --pkg-web DIR --node-modules DIR --work DIR
//     --tools         a folder whose node_modules has vite, esbuild, webpack,
//                     webpack-cli and playwright-core
//     --pkg-web       bindings-wasm/pkg-web (the wasm part's build)
//     --node-modules  node_modules with snowmint, its platform package and
//                     snowmint-wasm installed from the tarballs
//   CHROMIUM          the browser (default: /usr/bin/chromium)
//
// Prints one `result: ...` line per build and fails on any problem.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { createServer } from 'node:http'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const arg = (name) => {
  const i = process.argv.indexOf(name)
  if (i < 0 || !process.argv[i + 1]) throw new Error(`usage: node run.mjs --tools DIR --pkg-web DIR --node-modules DIR --work DIR (missing ${name})`)
  return path.resolve(process.argv[i + 1])
}
const tools = arg('--tools')
const pkgWeb = arg('--pkg-web')
const nodeModules = arg('--node-modules')
const work = arg('--work')
const bin = (name) => path.join(tools, 'node_modules', '.bin', name)
const toolRequire = createRequire(path.join(tools, 'package.json'))
const { chromium } = toolRequire('playwright-core')
const versionOf = (pkg) => toolRequire(`${pkg}/package.json`).version

// What every build must compute (twitter's ID 1541815603606036480).
const ID = 1541815603606036480n
const expected = {
  timestampMs: Number((ID >> 22n) + 1288834974657n),
  datacenter: Number((ID >> 17n) & 31n),
  worker: Number((ID >> 12n) & 31n),
  sequence: Number(ID & 4095n),
  base62: createRequire(path.join(nodeModules, 'x.js'))('snowmint').toBase62(ID),
}
function checkResult(r, what) {
  assert.ok(r && !r.error, `${what}: ${r?.error ?? 'no result'}`)
  for (const [k, v] of Object.entries(expected)) assert.equal(r[k], v, `${what}: ${k}`)
  assert.equal(r.count, 5002, what)
  assert.equal(r.increasing, true, `${what}: IDs not increasing`)
  const ts = Number((BigInt(r.first) >> 22n) + 1288834974657n)
  assert.ok(Math.abs(ts - r.now) < 5000, `${what}: the first ID's time ${ts} is not the clock's ${r.now}`)
}

const run = (program, args, cwd) => {
  try {
    return execFileSync(program, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 180_000 })
  } catch (e) {
    throw new Error(`${path.basename(program)} ${args.join(' ')} failed in ${cwd}:\n${e.stdout ?? ''}${e.stderr ?? ''}`, {
      cause: e,
    })
  }
}
const write = (file, text) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

fs.rmSync(work, { recursive: true, force: true })

// ---- (a) the page -----------------------------------------------------------
const page = path.join(work, 'page')
// The web build as an installed package (the npm name of bindings-wasm/pkg-web).
fs.cpSync(pkgWeb, path.join(page, 'node_modules', 'snowmint-wasm-web'), { recursive: true })
fs.cpSync(path.join(here, 'page', 'main.js'), path.join(page, 'src', 'main.js'))
const html = (script) => `<!doctype html><html><head><meta charset="utf-8"><title>snowmint</title></head><body>${script}</body></html>\n`
write(path.join(page, 'index.html'), html('<script type="module" src="./src/main.js"></script>'))
write(
  path.join(page, 'webpack.config.cjs'),
  `module.exports = {
  mode: 'production',
  entry: './src/main.js',
  output: { path: __dirname + '/dist-webpack', filename: 'main.js', clean: true },
}
`,
)
const pageBuilds = {
  vite: () => {
    run(bin('vite'), ['build', '--outDir', 'dist-vite', '--base', './', '--emptyOutDir', '--logLevel', 'warn'], page)
    return path.join(page, 'dist-vite')
  },
  esbuild: () => {
    const out = path.join(page, 'dist-esbuild')
    run(bin('esbuild'), ['src/main.js', '--bundle', '--format=esm', '--outfile=dist-esbuild/main.js', '--log-level=warning'], page)
    // esbuild leaves `new URL('snowmint_wasm_bg.wasm', import.meta.url)` as
    // it is: the module goes beside the bundle (esbuild's way for assets).
    fs.copyFileSync(path.join(pkgWeb, 'snowmint_wasm_bg.wasm'), path.join(out, 'snowmint_wasm_bg.wasm'))
    write(path.join(out, 'index.html'), html('<script type="module" src="./main.js"></script>'))
    return out
  },
  webpack: () => {
    const out = path.join(page, 'dist-webpack')
    run(bin('webpack'), ['--config', 'webpack.config.cjs', '--no-color'], page)
    write(path.join(out, 'index.html'), html('<script src="./main.js"></script>'))
    return out
  },
}

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm' }
function serve(root) {
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1')
    let file = path.normalize(path.join(root, decodeURIComponent(url.pathname)))
    if (!file.startsWith(root)) return res.writeHead(403).end()
    if (url.pathname.endsWith('/')) file = path.join(file, 'index.html')
    fs.readFile(file, (err, body) => {
      if (err) return res.writeHead(404).end('not found')
      res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream' }).end(body)
    })
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${server.address().port}/`,
    close: () => new Promise((r) => server.close(r)),
  })))
}

const results = []
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'snowmint-bundlers-'))
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
})
try {
  const chromeVersion = browser.version()
  for (const [name, build] of Object.entries(pageBuilds)) {
    const dist = build()
    const server = await serve(dist)
    const context = await browser.newContext()
    try {
      const tab = await context.newPage()
      const requests = []
      const errors = []
      tab.on('request', (r) => requests.push(r.url()))
      tab.on('pageerror', (e) => errors.push(String(e)))
      await tab.goto(server.url)
      await tab.waitForFunction(() => globalThis.__result, null, { timeout: 20_000 })
      const r = await tab.evaluate(() => globalThis.__result)
      checkResult(r, `${name} page`)
      assert.deepEqual(errors, [], `${name} page: errors`)
      const foreign = requests.filter((u) => !u.startsWith(server.url))
      assert.deepEqual(foreign, [], `${name} page: requests to another origin`)
      const wasm = requests.filter((u) => u.endsWith('.wasm'))
      assert.equal(wasm.length, 1, `${name} page: the .wasm requests: ${requests.join(' ')}`)
      results.push(`${name} ${versionOf(name)}: a page importing snowmint-wasm-web in Chromium ${chromeVersion}: decoded and generated (${path.basename(wasm[0])} served beside the bundle)`)
    } finally {
      await context.close()
      await server.close()
    }
  }
} finally {
  await browser.close()
  fs.rmSync(profile, { recursive: true, force: true })
}

// ---- (b) the server bundle ------------------------------------------------------
const srv = path.join(work, 'server')
fs.mkdirSync(srv, { recursive: true })
fs.symlinkSync(nodeModules, path.join(srv, 'node_modules'), 'dir')
fs.cpSync(path.join(here, 'server', 'server.mjs'), path.join(srv, 'src', 'server.mjs'))
// The addon's package (snowmint-linux-x64-gnu, ...), a local .node file and
// the WebAssembly fallback stay outside the bundle: required at run time.
const external = String.raw`/^snowmint-|\.node$/`
write(
  path.join(srv, 'webpack.config.cjs'),
  `module.exports = {
  mode: 'production',
  target: 'node18',
  entry: './src/server.mjs',
  output: { path: __dirname + '/dist-webpack', filename: 'server.cjs', library: { type: 'commonjs2' }, clean: true },
  externals: [({ request }, callback) => (${external}.test(request) ? callback(null, 'commonjs ' + request) : callback())],
}
`,
)
write(
  path.join(srv, 'vite.config.mjs'),
  `export default {
  ssr: { noExternal: ['snowmint'], target: 'node' },
  build: {
    ssr: 'src/server.mjs',
    outDir: 'dist-vite',
    emptyOutDir: true,
    rollupOptions: { external: [${external}], output: { format: 'cjs', entryFileNames: 'server.cjs' } },
  },
}
`,
)
const serverBuilds = {
  vite: () => {
    run(bin('vite'), ['build', '--config', 'vite.config.mjs', '--logLevel', 'warn'], srv)
    return path.join(srv, 'dist-vite', 'server.cjs')
  },
  esbuild: () => {
    run(bin('esbuild'), ['src/server.mjs', '--bundle', '--platform=node', '--format=cjs', '--target=node18',
      '--external:snowmint-*', '--external:*.node', '--outfile=dist-esbuild/server.cjs', '--log-level=warning'], srv)
    return path.join(srv, 'dist-esbuild', 'server.cjs')
  },
  webpack: () => {
    run(bin('webpack'), ['--config', 'webpack.config.cjs', '--no-color'], srv)
    return path.join(srv, 'dist-webpack', 'server.cjs')
  },
}
for (const [name, build] of Object.entries(serverBuilds)) {
  const bundle = build()
  // The bundle holds snowmint's JavaScript itself, not a require of it.
  const text = fs.readFileSync(bundle, 'utf8')
  assert.ok(!/require\(["']snowmint["']\)/.test(text), `${name}: snowmint was left external`)
  assert.ok(/require\(["']snowmint-linux|snowmint-wasm/.test(text), `${name}: the addon's package is not required at run time`)
  const env = { ...process.env }
  delete env.SNOWMINT_FORCE_WASM
  const out = execFileSync(process.execPath, [bundle], { cwd: srv, encoding: 'utf8', env, timeout: 60_000 })
  const r = JSON.parse(out.trim().split('\n').pop())
  checkResult(r, `${name} server bundle`)
  assert.equal(r.backend, 'native', `${name} server bundle: backend ${r.backend}, not the addon`)
  results.push(`${name} ${versionOf(name)}: a server bundle importing snowmint (addon external) on Node ${process.versions.node}: backend native, decoded and generated`)
}

for (const l of results) console.log(`result: ${l}`)

// Runs snowmint-wasm's web build inside Cloudflare's workerd: writes a
// config (capnp) serving worker.mjs on 127.0.0.1 and a free port, starts
// workerd, and checks over HTTP that decoding and generating work, that a
// frozen clock (Date.now() standing still within a request, as on
// Cloudflare: worker.mjs's `frozen=1`, since local workerd reads the real
// clock) ends a batch larger than a time unit's sequence with
// `clock_stalled` at once instead of spinning, that
// `sequenceExhausted: 'borrow:2'` issues such a batch, and that IDs increase
// across requests.
//
//   node run.mjs --workerd BIN --pkg bindings-wasm/pkg-web --work DIR
//
// Prints one line `result: workerd VERSION, ...: N checks passed` when all pass.
import { spawn, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const arg = (name) => {
  const i = process.argv.indexOf(name)
  if (i < 0 || !process.argv[i + 1]) throw new Error(`usage: node run.mjs --workerd BIN --pkg DIR --work DIR (missing ${name})`)
  return path.resolve(process.argv[i + 1])
}
const workerd = arg('--workerd')
const pkg = arg('--pkg')
const work = arg('--work')

// The worker and the package's files as workerd modules.
fs.rmSync(work, { recursive: true, force: true })
fs.mkdirSync(path.join(work, 'pkg'), { recursive: true })
fs.copyFileSync(path.join(here, 'worker.mjs'), path.join(work, 'worker.mjs'))
const modules = ['(name = "worker.mjs", esModule = embed "worker.mjs")']
for (const f of fs.readdirSync(pkg).sort()) {
  if (f.endsWith('.js')) modules.push(`(name = "pkg/${f}", esModule = embed "pkg/${f}")`)
  else if (f.endsWith('.wasm')) modules.push(`(name = "pkg/${f}", wasm = embed "pkg/${f}")`)
  else continue
  fs.copyFileSync(path.join(pkg, f), path.join(work, 'pkg', f))
}
if (!modules.some((m) => m.includes('snowmint_wasm_bg.wasm'))) throw new Error(`${pkg} has no snowmint_wasm_bg.wasm`)

const port = await new Promise((resolve, reject) => {
  const s = net.createServer()
  s.on('error', reject)
  s.listen(0, '127.0.0.1', () => {
    const { port } = s.address()
    s.close(() => resolve(port))
  })
})
fs.writeFileSync(
  path.join(work, 'config.capnp'),
  `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [ (name = "main", worker = .snowmint) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);

const snowmint :Workerd.Worker = (
  modules = [
    ${modules.join(',\n    ')}
  ],
  compatibilityDate = "2025-11-01",
);
`,
)

const version = execFileSync(workerd, ['--version'], { encoding: 'utf8', timeout: 30_000 }).trim()
const child = spawn(workerd, ['serve', 'config.capnp'], { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] })
let log = ''
child.stdout.on('data', (d) => (log += d))
child.stderr.on('data', (d) => (log += d))
let exited = null
child.on('exit', (code, signal) => (exited = { code, signal }))
const stop = () => {
  if (exited === null) child.kill('SIGKILL') // a spinning request would hold up a graceful stop
}
process.on('exit', stop)

const base = `http://127.0.0.1:${port}`
/** GET `route`: the JSON body and the time the request took, ms. */
async function get(route, timeoutMs = 10_000) {
  const t0 = performance.now()
  let res
  try {
    res = await fetch(base + route, { signal: AbortSignal.timeout(timeoutMs) })
  } catch (e) {
    throw new Error(
      `GET ${route}: ${e.name === 'TimeoutError' ? `no answer in ${timeoutMs} ms (a worker spinning?)` : e.message}\nworkerd's log:\n${log}`,
      { cause: e },
    )
  }
  const body = await res.json()
  return { status: res.status, body, ms: performance.now() - t0 }
}

let checks = 0
const check = async (what, fn) => {
  try {
    await fn()
  } catch (e) {
    console.error(`FAILED: ${what}`)
    throw e
  }
  checks++
  console.log(`ok ${checks} - ${what}`)
}

try {
  // workerd is up once it answers (it prints nothing when ready).
  const deadline = Date.now() + 30_000
  for (;;) {
    if (exited !== null) throw new Error(`workerd exited (${JSON.stringify(exited)}):\n${log}`)
    try {
      await fetch(`${base}/none`, { signal: AbortSignal.timeout(1000) })
      break
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`workerd did not answer on ${base} in 30 s:\n${log}`, { cause: e })
      await new Promise((r) => setTimeout(r, 100))
    }
  }

  const TWITTER_EPOCH = 1288834974657n
  await check('decode: a twitter ID decodes inside the worker', async () => {
    const id = 1541815603606036480n
    const { status, body } = await get(`/decode?id=${id}`)
    assert.equal(status, 200, JSON.stringify(body))
    assert.equal(body.timestampMs, Number((id >> 22n) + TWITTER_EPOCH))
    assert.equal(body.datacenter, Number((id >> 17n) & 31n))
    assert.equal(body.worker, Number((id >> 12n) & 31n))
    assert.equal(body.sequence, Number(id & 4095n))
  })

  await check('PureGenerator: the time passed in', async () => {
    const { status, body } = await get('/pure?now=1656432460105')
    assert.equal(status, 200, JSON.stringify(body))
    assert.equal(BigInt(body.next.id), ((1656432460105n - TWITTER_EPOCH) << 22n) | (1n << 17n) | (3n << 12n))
  })

  await check("Date.now() in local workerd, and pinned for a request with frozen=1", async () => {
    const real = await get('/clock')
    const frozen = await get('/clock?frozen=1')
    assert.equal(frozen.body.changes, 0, JSON.stringify(frozen.body))
    console.log(`# local workerd's Date.now() changed ${real.body.changes} times over 5 million readings in a request (Cloudflare's: 0)`)
  })

  let last = 0n
  await check('nextId: IDs with the clock time, increasing within and across requests', async () => {
    for (let i = 0; i < 2; i++) {
      const { status, body } = await get('/next?worker=1')
      assert.equal(status, 200, JSON.stringify(body))
      const [a, b] = body.ids.map(BigInt)
      assert.ok(last < a && a < b, `${last} < ${a} < ${b}`)
      assert.ok(Math.abs(Number((a >> 22n) + TWITTER_EPOCH) - body.now) <= 1, `timestamp of ${a} vs Date.now() ${body.now}`)
      last = b
      await new Promise((r) => setTimeout(r, 5))
    }
  })

  await check('nextIds(5000), default options, local clock: the batch waits for the next milliseconds', async () => {
    const { status, body } = await get('/many?worker=5&n=5000')
    assert.equal(status, 200, JSON.stringify(body))
    assert.equal(body.unique, 5000)
    assert.equal(body.increasing, true)
  })

  await check("nextIds(5000), default options, frozen clock: clock_stalled at once, not a spin", async () => {
    const { status, body, ms } = await get('/many?worker=2&n=5000&frozen=1')
    assert.equal(status, 500, JSON.stringify(body))
    assert.equal(body.error.code, 'clock_stalled', JSON.stringify(body))
    assert.equal(body.error.name, 'Error')
    assert.match(body.error.message, /has not advanced past \d+ ms/)
    assert.match(body.error.message, /borrow:N/)
    assert.ok(ms < 2000, `took ${ms.toFixed(0)} ms`)
    console.log(`# clock_stalled after ${ms.toFixed(1)} ms (request round trip)`)
  })

  await check("the same generator issues again in a later request (the clock moved)", async () => {
    await new Promise((r) => setTimeout(r, 5))
    const { status, body } = await get('/next?worker=2&frozen=1')
    assert.equal(status, 200, JSON.stringify(body))
  })

  await check("nextIds(5000) with sequenceExhausted: 'borrow:2': 5000 unique increasing IDs at a frozen clock", async () => {
    const { status, body } = await get('/many?worker=3&n=5000&exhausted=borrow:2&frozen=1')
    assert.equal(status, 200, JSON.stringify(body))
    assert.equal(body.count, 5000)
    assert.equal(body.unique, 5000)
    assert.equal(body.increasing, true)
    assert.equal(body.clockFrozen, true, 'Date.now() advanced within the request')
    // Two time units: the clock's and one borrowed.
    assert.equal(Number((BigInt(body.last) >> 22n) - (BigInt(body.first) >> 22n)), 1)
  })

  await check("borrow:2 covers 3 units' sequences at most: 3 * 4096 + 1 IDs stall", async () => {
    await new Promise((r) => setTimeout(r, 10))
    const { status, body } = await get('/many?worker=4&n=12289&exhausted=borrow:2&frozen=1')
    assert.equal(body.error?.code, 'clock_stalled', `${status} ${JSON.stringify(body)}`)
  })

  console.log(`result: ${version}, snowmint-wasm (web build) in a Worker: ${checks} checks passed`)
} finally {
  stop()
}

// The decoder page (bindings-wasm/www/) in real headless Chromium, driven by
// playwright-core: known IDs, errors, the custom layout editor, the "which
// layout fits?" mode, no request leaving the page's origin, and the shared
// vectors run against the web package inside the browser.
//
//   SNOWMINT_VECTORS   the vectors folder (default: ../../vectors)
//   SNOWMINT_ARTIFACTS where to save the screenshot (default: ../../artifacts)
//   CHROMIUM           the browser (default: /usr/bin/chromium)
import assert from 'node:assert/strict'
import { mkdtempSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'

import { chromium } from 'playwright-core'

import { serve } from './serve.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..', '..')
const vectorsDir = process.env.SNOWMINT_VECTORS || path.join(root, 'vectors')
const artifacts = process.env.SNOWMINT_ARTIFACTS || path.join(root, 'artifacts')
const vectors = (name) => JSON.parse(readFileSync(path.join(vectorsDir, `${name}.json`), 'utf8'))
// The Node build of the same package, to compute what the page should show.
const snowmint = createRequire(import.meta.url)(path.join(here, '..', 'pkg-node'))

let server, context, page, profile
const requests = []
const pageErrors = []

before(async () => {
  server = await serve(path.join(here, '..', 'www'))
  profile = mkdtempSync(path.join(os.tmpdir(), 'snowmint-chromium-'))
  context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1000, height: 1100 },
  })
  page = context.pages()[0] || (await context.newPage())
  page.on('request', (r) => requests.push(r.url()))
  page.on('pageerror', (e) => pageErrors.push(String(e)))
  page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()) })
  await page.goto(server.url)
  await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 })
})

after(async () => {
  await context?.close()
  await server?.close()
  if (profile) rmSync(profile, { recursive: true, force: true })
})

/** Types `text` into the IDs box and returns what the results show. */
async function decodeText(text) {
  await page.fill('#ids', text)
  return results()
}

async function results() {
  return page.$$eval('[data-testid="result"]', (cards) => cards.map((c) => ({
    title: c.querySelector('h2')?.textContent,
    kv: Object.fromEntries([...c.querySelectorAll('dd[data-key]')].map((d) => [d.dataset.key, d.textContent])),
    fields: Object.fromEntries([...c.querySelectorAll('tr[data-field]')]
      .map((r) => [r.dataset.field, r.querySelector('.value').textContent])),
    error: c.querySelector('.error')?.dataset.code ?? null,
    fits: [...c.querySelectorAll('li[data-preset]')].map((li) => li.dataset.preset),
  })))
}

async function setMode(mode) {
  await page.check(`input[name="mode"][value="${mode}"]`)
}

describe('decoder page', () => {
  test('the preset selector lists the ten presets', async () => {
    const options = await page.$$eval('#preset option', (os) => os.map((o) => [o.value, o.textContent]))
    assert.deepEqual(options.map((o) => o[0]), snowmint.Layout.presets())
    const labels = options.map((o) => o[1]).join(' | ')
    for (const l of ['Twitter / X', 'Discord', 'Instagram', 'Sonyflake', 'Sonyflake v2', 'ShardingSphere',
      'Leaf', 'Baidu', 'TSID', 'Mastodon']) assert.ok(labels.includes(l), l)
  })

  test('a Discord ID', async () => {
    await setMode('preset')
    await page.selectOption('#preset', 'discord')
    const [r] = await decodeText('175928847299117063')
    assert.equal(r.error, null)
    assert.equal(r.kv.utc, '2016-04-30T11:18:25.796Z')
    assert.match(r.kv.layout, /Discord/)
    assert.equal(r.fields.worker, '1')
    assert.equal(r.fields.process, '0')
    assert.equal(r.fields.sequence, '7')
    assert.equal(r.kv.decimal, '175928847299117063')
    assert.equal(r.kv.base32, '04W86BB0G4007')
    assert.equal(r.kv.base62, snowmint.toBase62(175928847299117063n))
    assert.ok(r.kv.local.length > 0)
  })

  test('a Twitter ID, and the same ID pasted as base32', async () => {
    await page.selectOption('#preset', 'twitter')
    const rs = await decodeText('1541815603606036480\n\n  1asd13xh1f800  \n')
    assert.equal(rs.length, 2)
    for (const r of rs) {
      assert.equal(r.error, null)
      assert.equal(r.kv.utc, '2022-06-28T16:07:40.105Z')
      assert.equal(r.fields.datacenter, '11')
      assert.equal(r.fields.worker, '26')
      assert.equal(r.kv.decimal, '1541815603606036480')
    }
    assert.match(rs[1].title, /read as base32/)
  })

  test('invalid input shows its error and code inline', async () => {
    await page.selectOption('#preset', 'twitter')
    const rs = await decodeText(['12x4', '18446744073709551616', String(2n ** 63n), '1541815603606036480'].join('\n'))
    assert.deepEqual(rs.map((r) => r.error), ['invalid_id', 'invalid_id', 'invalid_id', null])
    const text = await page.textContent('[data-testid="result"] .error')
    assert.match(text, /invalid_id/)
  })

  test('custom layout editor', async () => {
    await setMode('custom')
    await page.fill('#custom', '{"epoch_ms":1420070400000,"fields":[["timestamp",42],["worker",5],["process",5],["sequence",12]]}')
    const [r] = await decodeText('175928847299117063')
    assert.equal(r.kv.utc, '2016-04-30T11:18:25.796Z')
    assert.match(r.kv.layout, /Discord/) // equal to a preset: named as such
    await page.fill('#custom', '{"epoch_ms":0,"fields":[["timestamp",37],["server",20],["sequence",16]]}')
    assert.equal(await page.getAttribute('#custom-error', 'data-code'), 'invalid_layout')
    assert.equal(await page.isVisible('#custom-error'), true)
    await page.fill('#custom', '{"epoch_ms":0,"fields":[["timestamp",40],["shard",8],["sequence",16]]}')
    assert.equal(await page.isVisible('#custom-error'), false)
    const [c] = await results()
    assert.equal(c.error, null)
    assert.deepEqual(Object.keys(c.fields), ['timestamp', 'shard', 'sequence'])
    await setMode('preset')
  })

  test('which layout fits?', async () => {
    await setMode('fits')
    const ids = ['175928847299117063', '1541815603606036480', '7', 'zz']
    const rs = await decodeText(ids.join('\n'))
    const now = Date.now()
    for (const [i, id] of ids.slice(0, 3).entries()) {
      const expected = snowmint.Layout.presets().filter((n) => snowmint.Layout.preset(n).isPlausible(id, now))
      assert.deepEqual(rs[i].fits, expected, id)
    }
    assert.ok(rs[0].fits.includes('discord'))
    assert.ok(rs[1].fits.includes('twitter'))
    assert.equal(rs[3].error, 'invalid_id')
    await setMode('preset')
  })

  test('the shared vectors, run against the web package in the browser', async () => {
    const failures = await page.evaluate(async ({ ids, strings, generate }) => {
      const m = await import('./pkg/index.js') // already initialised by the page
      const bad = []
      const check = (ok, what) => { if (!ok) bad.push(what) }
      const codeOf = (f) => { try { f(); return null } catch (e) { return e instanceof Error ? e.code : 'not-an-Error' } }
      for (const c of ids.decode) {
        if (c.error) { check(codeOf(() => m.decode(BigInt(c.id), c.layout)) === c.error, `decode ${c.id}`); continue }
        const p = m.decode(BigInt(c.id), c.layout)
        check(p.timestampMs === c.expect.timestamp_ms && p.sequence === c.expect.sequence &&
          JSON.stringify(p.nodes) === JSON.stringify(c.expect.nodes) && m.toBase32(c.id) === c.expect.base32 &&
          m.idBounds(c.layout, c.expect.timestamp_ms).join() === c.expect.bounds.join(), `decode ${c.layout} ${c.id}`)
      }
      for (const c of ids.compose) {
        const run = () => m.compose(c.layout, c.timestamp_ms, c.sequence, c.nodes)
        check(c.error ? codeOf(run) === c.error : run() === BigInt(c.expect), `compose ${JSON.stringify(c)}`)
      }
      for (const c of ids.fits) {
        const names = m.Layout.presets().filter((n) => m.Layout.preset(n).isPlausible(BigInt(c.id), c.now_ms))
        check(names.join() === c.expect.join(), `fits ${c.id}`)
      }
      for (const c of strings.encode) {
        for (const f of ['decimal', 'base32', 'base62']) {
          check(m.formatId(BigInt(c.id), f) === c[f] && m.parseId(c[f], f) === BigInt(c.id), `encode ${c.id} ${f}`)
        }
      }
      for (const c of strings.parse) {
        const run = () => m.parseId(c.input, c.format)
        check(c.error ? codeOf(run) === c.error : run() === BigInt(c.expect), `parse ${JSON.stringify(c)}`)
      }
      for (const c of strings.js_numbers) {
        const n = Number(c.number)
        const run = () => m.formatId(n, 'decimal')
        check(c.error ? codeOf(run) === c.error : run() === c.expect, `js_number ${c.number}`)
      }
      const opts = (o = {}) => Object.fromEntries(Object.entries({
        clockBackwards: o.clock_backwards, sequenceExhausted: o.sequence_exhausted,
        sequenceStart: o.sequence_start, seed: o.seed, resumeAfter: o.resume_after,
      }).filter(([, v]) => v !== undefined))
      for (const c of generate.cases) {
        const make = () => new m.PureGenerator(c.layout, c.nodes, opts(c.options))
        if (c.error) { check(codeOf(make) === c.error, c.name); continue }
        const g = make()
        for (const s of c.steps) {
          if ('reserve_until_ms' in s) { g.reserveUntil(s.reserve_until_ms); continue }
          if (s.error) { check(codeOf(() => g.next(s.now_ms)) === s.error, c.name); continue }
          const r = g.next(s.now_ms)
          check(s.id !== undefined ? r.id === BigInt(s.id) : r.retryAt === s.retry_at, `${c.name} at ${s.now_ms}`)
        }
      }
      return bad
    }, { ids: vectors('ids'), strings: vectors('strings'), generate: vectors('generate') })
    assert.deepEqual(failures, [])
  })

  test('screenshot (artifacts/decoder.png)', async () => {
    await setMode('preset')
    await page.selectOption('#preset', 'discord')
    await decodeText('175928847299117063\n1000000000000000000\nnot-an-id')
    mkdirSync(artifacts, { recursive: true })
    await page.screenshot({ path: path.join(artifacts, 'decoder.png'), fullPage: true })
  })

  test('nothing left the page: only its own files were requested, no page errors', () => {
    assert.ok(requests.length > 0)
    for (const u of requests) assert.ok(u.startsWith(server.url), `request outside the page: ${u}`)
    assert.deepEqual(pageErrors, [])
  })
})

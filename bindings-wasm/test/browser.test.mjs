// The decoder page (bindings-wasm/www/) in real headless Chromium, driven by
// playwright-core: known IDs, errors (one line each), the bits strip, relative
// time, the permalink in the fragment, the copy buttons (Clipboard API and the
// fallback, read back from the real clipboard), dark mode and contrast, the
// summary live region, the message when WebAssembly cannot load (a failed
// download, and a file:// page), the custom layout editor, the "which layout
// fits?" mode, no request leaving the page's origin, and the shared vectors run
// against the web package inside the browser.
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
import { fileURLToPath, pathToFileURL } from 'node:url'

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

/**
 * The page's address as the page has it now: Playwright's `page.url()` learns
 * of a `history.replaceState` through an event that can arrive after the
 * next statement (seen once: the layout of the edit before).
 */
async function href(p = page) {
  return p.evaluate(() => location.href)
}

async function results(p = page) {
  return p.$$eval('[data-testid="result"]', (cards) => cards.map((c) => ({
    title: c.querySelector('h2')?.textContent,
    input: c.querySelector('.error code.input')?.textContent ?? null,
    kv: Object.fromEntries([...c.querySelectorAll('[data-key]')].map((d) => [d.dataset.key, d.textContent])),
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

  test('one error line per bad ID: the input named, the code once', async () => {
    await page.selectOption('#preset', 'twitter')
    const inputs = ['12x4', '18446744073709551616', String(2n ** 63n), '1541815603606036480']
    const rs = await decodeText(inputs.join('\n'))
    assert.deepEqual(rs.map((r) => r.error), ['invalid_id', 'invalid_id', 'invalid_id', null])
    assert.deepEqual(rs.map((r) => r.input), [...inputs.slice(0, 3), null])
    const lines = await page.$$eval('[data-testid="result"].bad', (cards) => cards.map((c) => ({
      errors: c.querySelectorAll('.error').length, text: c.textContent, rest: c.querySelectorAll('h2, dl, table').length,
    })))
    assert.equal(lines.length, 3)
    for (const [i, l] of lines.entries()) {
      assert.equal(l.errors, 1)
      assert.equal(l.rest, 0, 'a bad ID is one line, not a card')
      assert.equal(l.text.split('invalid_id').length - 1, 1, `the code once: ${l.text}`)
      assert.ok(l.text.includes(inputs[i]) && l.text.includes(`line ${i + 1}`), l.text)
    }
    assert.match(lines[0].text, /unexpected character/)
    assert.match(lines[2].text, /above the layout's 63 bits/)
  })

  test('the bits strip: 64 cells coloured by field, each field named with its bits and value', async () => {
    await setMode('preset')
    for (const [preset, id] of [['discord', 175928847299117063n], ['twitter', 1541815603606036480n], ['sonyflake', 1000000000000000n]]) {
      await page.selectOption('#preset', preset)
      await decodeText(String(id))
      const layout = snowmint.Layout.preset(preset)
      const parts = layout.decode(id)
      const strip = await page.$eval('[data-testid="result"] [data-testid="bits"]', (s) => ({
        hidden: s.getAttribute('aria-hidden'),
        cells: [...s.querySelectorAll('.bit')].map((c) => ({ bit: Number(c.dataset.bit), text: c.textContent, cls: c.classList[1] })),
        segs: [...s.querySelectorAll('.seg')].map((g) => ({ field: g.dataset.field, cls: g.classList[1], text: g.textContent, title: g.title, span: g.style.gridColumn })),
      }))
      assert.equal(strip.hidden, 'true', 'the picture is hidden from screen readers: the table says it in words')
      assert.equal(strip.cells.length, 64)
      assert.deepEqual(strip.cells.map((c) => c.bit), [...Array(64).keys()].reverse())
      assert.equal(strip.cells.map((c) => c.text).join(''), id.toString(2).padStart(64, '0'))
      const expected = []
      if (layout.totalBits < 64) expected.push({ name: 'unused', bits: 64 - layout.totalBits, shift: layout.totalBits, value: '0' })
      for (const f of layout.fields) {
        const value = f.kind === 'timestamp' ? String((parts.timestampMs - layout.epochMs) / layout.timeUnitMs)
          : f.kind === 'sequence' ? String(parts.sequence) : String(parts.nodes[f.name])
        expected.push({ name: f.name, bits: f.bits, shift: f.shift, value })
      }
      assert.deepEqual(strip.segs.map((g) => g.field), expected.map((e) => e.name), preset)
      let cell = 0
      for (const [i, e] of expected.entries()) {
        const g = strip.segs[i]
        const cells = strip.cells.slice(cell, cell + e.bits)
        cell += e.bits
        assert.ok(cells.every((c) => c.cls === g.cls), `${preset} ${e.name}: its cells have its colour`)
        assert.equal(g.span, `span ${e.bits}`)
        assert.ok(g.title.startsWith(`${e.name}: ${e.value}`), g.title)
        const range = `${e.shift + e.bits - 1}–${e.shift}`
        if (e.bits >= 3) assert.ok(g.text.startsWith(e.name) && g.text.includes(e.value) && g.text.endsWith(range), `${preset}: ${g.text}`)
        else assert.equal(g.text, e.value)
      }
      assert.equal(new Set(strip.segs.map((g) => g.cls)).size, strip.segs.length, 'one colour per field')
      // The table says the same in words: bit ranges rather than "width @ shift".
      const rows = await page.$$eval('[data-testid="result"] tr[data-field]', (rs) => rs.map((r) => [r.dataset.field, r.children[1].textContent]))
      assert.deepEqual(rows, expected.map((e) => [e.name,
        e.bits === 1 ? `bit ${e.shift} (1)` : `bits ${e.shift + e.bits - 1}–${e.shift} (${e.bits})`]))
      assert.doesNotMatch(await page.textContent('#results'), /\d @ \d/)
    }
    await page.selectOption('#preset', 'twitter')
    const unused = await page.textContent('[data-testid="result"] tr[data-field="unused"]')
    assert.match(unused, /sign bit, always 0/)
  })

  test('the time also as relative time', async () => {
    await page.selectOption('#preset', 'discord')
    const now = Date.now()
    const [past] = await decodeText('175928847299117063')
    const years = Math.trunc((now - 1462015105796) / (365.2425 * 86400000))
    assert.equal(past.kv.relative, `${years} years ago`)
    // An ID three days and an hour ahead.
    const ahead = snowmint.Layout.preset('discord').compose(now + 3 * 86400000 + 3600000, 0, { worker: 1, process: 2 })
    const [future] = await decodeText(String(ahead))
    assert.equal(future.kv.relative, 'in 3 days')
    const [soon] = await decodeText(String(snowmint.Layout.preset('discord').compose(now + 5 * 60000 + 30000, 0, { worker: 0, process: 0 })))
    assert.equal(soon.kv.relative, 'in 5 minutes')
  })

  test('permalink: the fragment holds the IDs and the layout, and opening it reproduces the view', async () => {
    await setMode('preset')
    await page.selectOption('#preset', 'twitter')
    const before = await page.evaluate(() => history.length)
    for (const text of ['1', '15', '1541815603606036480', '1541815603606036480\n12x4\n1asd13xh1f800']) await page.fill('#ids', text)
    assert.equal(await page.evaluate(() => history.length), before, 'edits replace the history entry')
    const url = new URL(await href())
    const q = new URLSearchParams(url.hash.slice(1))
    assert.deepEqual(q.getAll('id'), ['1541815603606036480', '12x4', '1asd13xh1f800'])
    assert.equal(q.get('preset'), 'twitter')
    const shown = await results()

    const other = await context.newPage()
    try {
      await other.goto(url.href)
      await other.waitForSelector('body[data-ready="true"]', { timeout: 20000 })
      assert.deepEqual(await results(other), shown)
      assert.equal(await other.inputValue('#preset'), 'twitter')
      assert.equal(await other.inputValue('#ids'), '1541815603606036480\n12x4\n1asd13xh1f800')

      // A custom layout, as typed.
      await setMode('custom')
      const descriptor = '{"epoch_ms":0,"fields":[["timestamp",40],["shard",8],["sequence",16]]}'
      await page.fill('#custom', descriptor)
      assert.equal(new URLSearchParams(new URL(await href()).hash.slice(1)).get('layout'), descriptor)
      const custom = await results()
      await other.goto(await href())
      await other.waitForFunction((d) => document.getElementById('custom').value === d, descriptor)
      assert.equal(await other.isChecked('input[name="mode"][value="custom"]'), true)
      assert.deepEqual(await results(other), custom)

      // The "which layout fits?" mode.
      await setMode('fits')
      assert.equal(new URLSearchParams(new URL(await href()).hash.slice(1)).get('mode'), 'fits')
      const fits = await results()
      await other.goto(await href())
      await other.waitForFunction(() => document.querySelector('input[name="mode"][value="fits"]').checked)
      assert.deepEqual(await results(other), fits)
    } finally {
      await other.close()
    }

    // A link followed inside the page (the fragment changes): the view follows.
    await page.evaluate(() => { location.hash = '#id=175928847299117063&preset=discord' })
    await page.waitForFunction(() => document.querySelector('[data-key="utc"]')?.textContent === '2016-04-30T11:18:25.796Z')
    assert.equal(await page.inputValue('#preset'), 'discord')
    assert.equal(await page.isChecked('input[name="mode"][value="preset"]'), true)
  })

  test('copy buttons: the Clipboard API, the fallback, and the link to the view', async () => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url.replace(/\/$/, '') })
    await setMode('preset')
    await page.selectOption('#preset', 'discord')
    const [r] = await decodeText('175928847299117063')
    const clipboard = () => page.evaluate(() => navigator.clipboard.readText())
    const button = (key) => `[data-testid="result"] dd:has([data-key="${key}"]) button.copy`
    await page.evaluate(() => navigator.clipboard.writeText('-'))

    await page.click(button('base32'))
    assert.equal(await clipboard(), '04W86BB0G4007')
    assert.equal(await page.textContent(button('base32')), 'Copied')
    assert.equal(await page.getAttribute(button('base32'), 'aria-label'), 'Copy base32')

    // From the keyboard.
    await page.focus(button('unix-ms'))
    await page.keyboard.press('Enter')
    await page.waitForFunction(() => navigator.clipboard.readText().then((t) => t === '1462015105796'))

    // A field's value: the number alone.
    await page.click('[data-testid="result"] tr[data-field="timestamp"] button.copy')
    assert.equal(await clipboard(), r.fields.timestamp.replace(' ms since epoch', ''))

    // Without the Clipboard API (older browsers, insecure pages): a selected textarea and the
    // copy command, read back from the real clipboard.
    await page.evaluate(() => {
      window.realClipboard = navigator.clipboard
      Object.defineProperty(navigator, 'clipboard', { value: undefined, configurable: true })
    })
    try {
      await page.click(button('base62'))
      await page.waitForFunction((want) => window.realClipboard.readText().then((t) => t === want), r.kv.base62, { timeout: 5000 })
      assert.equal(await page.textContent(button('base62')), 'Copied')
      assert.equal(await page.$$eval('textarea', (ts) => ts.length), 2, 'the fallback removes its textarea')
    } finally {
      await page.evaluate(() => Object.defineProperty(navigator, 'clipboard', { value: window.realClipboard, configurable: true }))
    }

    await page.click('#copy-link')
    assert.equal(await clipboard(), await href())
    assert.match(await href(), /#id=175928847299117063&preset=discord$/)
  })

  test('the live region announces a summary, not the list', async () => {
    await setMode('preset')
    await page.selectOption('#preset', 'twitter')
    assert.equal(await page.getAttribute('#results', 'aria-live'), null)
    assert.equal(await page.$$eval('#results [aria-live], #results [role="status"], #results [role="alert"]', (e) => e.length), 0)
    assert.equal(await page.getAttribute('#summary', 'role'), 'status')
    assert.equal(await page.getAttribute('#summary', 'aria-live'), 'polite')
    const summary = (text) => page.waitForFunction((t) => document.getElementById('summary').textContent === t, text)
    await decodeText('1541815603606036480\n1\n2\nxx')
    await summary('3 IDs decoded, 1 error')
    await decodeText('1541815603606036480')
    await summary('1 ID decoded')
    await decodeText('')
    await summary('No IDs entered')
    // Typing a key at a time: the results follow every key (four different summaries on the
    // way), the summary is written once typing pauses (at most twice if the machine stalls).
    await page.evaluate(() => {
      window.summaryChanges = 0
      new MutationObserver(() => { window.summaryChanges++ })
        .observe(document.getElementById('summary'), { childList: true, characterData: true, subtree: true })
    })
    await page.type('#ids', '1\n2\n3\nx', { delay: 20 })
    await summary('3 IDs decoded, 1 error')
    assert.equal((await results()).length, 4)
    await page.waitForTimeout(500)
    assert.ok(await page.evaluate(() => window.summaryChanges) <= 2)
    await setMode('fits')
    await decodeText('1541815603606036480\nzz')
    await summary('1 ID checked against the presets, 1 error')
    await setMode('custom')
    await page.fill('#custom', '{"epoch_ms":0,"fields":[["timestamp",37],["server",20],["sequence",16]]}')
    await summary('Layout error: invalid_layout')
    await page.fill('#custom', '{"epoch_ms":0,"fields":[["timestamp",40],["shard",8],["sequence",16]]}')
    await setMode('preset')
  })

  test('dark mode from prefers-color-scheme, with readable contrast in both', async () => {
    const colours = () => page.evaluate(() => {
      const css = getComputedStyle(document.documentElement)
      const v = (n) => css.getPropertyValue(n).trim()
      return {
        background: css.backgroundColor,
        card: getComputedStyle(document.querySelector('.input')).backgroundColor,
        pairs: [['--fg', '--bg'], ['--muted', '--bg'], ['--fg', '--card'], ['--muted', '--card'], ['--accent', '--card'],
          ['--bad', '--bad-bg'], ...['unused', 'time', 'node0', 'node1', 'node2', 'node3', 'seq'].map((f) => ['--fg', `--f-${f}`])]
          .map(([a, b]) => [a, b, v(a), v(b)]),
      }
    })
    // WCAG 2 contrast of two #rrggbb colours.
    const luminance = (hex) => {
      const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255)
        .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4))
      return 0.2126 * r + 0.7152 * g + 0.0722 * b
    }
    const contrast = (a, b) => {
      const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p)
      return (x + 0.05) / (y + 0.05)
    }
    await page.emulateMedia({ colorScheme: 'light' })
    const light = await colours()
    await page.emulateMedia({ colorScheme: 'dark' })
    const dark = await colours()
    await page.emulateMedia({ colorScheme: 'light' })
    assert.notEqual(light.background, dark.background)
    assert.notEqual(light.card, dark.card)
    assert.equal(light.background, 'rgb(246, 247, 249)')
    for (const [mode, c] of [['light', light], ['dark', dark]]) {
      for (const [a, b, x, y] of c.pairs) {
        assert.match(x + y, /^#[0-9a-f]{6}#[0-9a-f]{6}$/i, `${a} ${b}`)
        assert.ok(contrast(x, y) >= 4.5, `${mode}: ${a} (${x}) on ${b} (${y}) is ${contrast(x, y).toFixed(2)}:1`)
      }
    }
    assert.equal(await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor), light.background)
  })

  test('a visible message when WebAssembly cannot load: a failed download', async () => {
    const other = await context.newPage()
    try {
      await other.route('**/*.wasm', (route) => route.abort())
      await other.goto(server.url)
      await other.waitForSelector('body[data-ready="failed"]', { timeout: 20000 })
      assert.equal(await other.isVisible('[data-testid="load-error"]'), true)
      assert.equal(await other.getAttribute('[data-testid="load-error"]', 'role'), 'alert')
      assert.match(await other.textContent('[data-testid="load-error"]'), /could not load its WebAssembly module/)
      assert.equal(await other.$$eval('[data-testid="result"]', (r) => r.length), 0)
    } finally {
      await other.close()
    }
  })

  test('a visible message when WebAssembly cannot load: a page opened from file://', async () => {
    const other = await context.newPage()
    try {
      await other.goto(pathToFileURL(path.join(here, '..', 'www', 'index.html')).href)
      await other.waitForSelector('body[data-ready="failed"]', { timeout: 20000 })
      assert.equal(await other.isVisible('[data-testid="load-error"]'), true)
      const text = await other.textContent('[data-testid="load-error"]')
      assert.match(text, /cannot start from a file:\/\/ address/)
      assert.match(text, /node bindings-wasm\/test\/serve\.mjs/)
    } finally {
      await other.close()
    }
  })

  test('the loading message is gone once the decoder runs', async () => {
    assert.equal(await page.isVisible('#load-status'), false)
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

  test('screenshot (artifacts/decoder.png; docs/decoder.png is a copy)', async () => {
    await page.emulateMedia({ colorScheme: 'light' })
    await setMode('preset')
    await page.selectOption('#preset', 'discord')
    await decodeText('175928847299117063\n1000000000000000000\nnot-an-id')
    await page.waitForFunction(() => document.getElementById('summary').textContent === '2 IDs decoded, 1 error')
    mkdirSync(artifacts, { recursive: true })
    await page.screenshot({ path: path.join(artifacts, 'decoder.png'), fullPage: true })
  })

  test('nothing left the page: only its own files were requested, no page errors', () => {
    assert.ok(requests.length > 0)
    for (const u of requests) assert.ok(u.startsWith(server.url), `request outside the page: ${u}`)
    assert.deepEqual(pageErrors, [])
  })
})

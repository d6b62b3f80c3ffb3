// The decoder page. All decoding is done by the WebAssembly package
// (./pkg/, the `--target web` build of bindings-wasm); this file only reads
// the form, renders results and keeps the address's fragment in step with the
// form. No network requests beyond loading ./pkg/.
//
// A classic script, not a module: browsers refuse module scripts on file://
// pages, and this file must run there to say so. It loads the package with
// import().
'use strict'
;(async () => {
  const LABELS = {
    twitter: 'Twitter / X',
    discord: 'Discord',
    instagram: 'Instagram',
    sonyflake: 'Sonyflake',
    'sonyflake-v2': 'Sonyflake v2',
    shardingsphere: 'ShardingSphere',
    leaf: 'Leaf (Meituan)',
    baidu: 'Baidu uid-generator',
    tsid: 'TSID',
    mastodon: 'Mastodon',
  }
  const DEFAULT_PRESET = 'discord'

  const $ = (id) => document.getElementById(id)

  /** `el('dt', {class: 'x'}, 'text', child...)`: DOM without innerHTML, so pasted text is never markup. */
  function el(tag, attrs = {}, ...children) {
    const e = document.createElement(tag)
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v)
    for (const c of children) e.append(c)
    return e
  }

  // ---- Loading the WebAssembly package -------------------------------------

  function showLoadError(e) {
    const box = $('load-status')
    box.className = 'notice error'
    box.setAttribute('role', 'alert')
    box.dataset.testid = 'load-error'
    if (location.protocol === 'file:') {
      box.replaceChildren(
        el('strong', {}, 'The decoder cannot start from a file:// address. '),
        'Browsers do not load JavaScript modules or WebAssembly for pages opened from files. ',
        'Serve the folder instead, for example with ', el('code', {}, 'node bindings-wasm/test/serve.mjs'),
        ' or ', el('code', {}, 'python3 -m http.server -d bindings-wasm/www'), ', and open the address it prints.')
    } else {
      box.replaceChildren(
        el('strong', {}, 'The decoder could not load its WebAssembly module. '),
        typeof WebAssembly === 'undefined'
          ? 'This browser has WebAssembly turned off or does not support it.'
          : `Reload the page to try again (${e && e.message ? e.message : String(e)}).`)
    }
  }

  let snowmint
  try {
    if (typeof WebAssembly === 'undefined') throw new Error('no WebAssembly')
    snowmint = await import('./pkg/index.js')
    await snowmint.default()
  } catch (e) {
    showLoadError(e)
    document.body.dataset.ready = 'failed'
    return
  }
  const { Layout, formatId, parseId } = snowmint
  $('load-status').hidden = true

  // ---- Small helpers -------------------------------------------------------

  /** The error's message without the code the core appends ("... [invalid_id]") or the code
   * spelt out in front ("invalid id: ..."): the page shows the code once, on its own. */
  function errorParts(e) {
    const code = e && e.code ? e.code : 'error'
    let message = String(e && e.message ? e.message : e)
    message = message.replace(new RegExp(`\\s*\\[${code}\\]$`), '')
    const spelt = `${code.replace(/_/g, ' ')}: `
    if (message.startsWith(spelt)) message = message.slice(spelt.length)
    return { code, message }
  }

  function errorBox(e) {
    const { code, message } = errorParts(e)
    const p = el('p', { class: 'error', 'data-code': code })
    p.append(el('code', {}, code), ' ', message)
    return p
  }

  /** One error line for one bad input line: the input, its line number, the code, the reason. */
  function badLine(line, n, e) {
    const card = el('article', { class: 'result bad', 'data-testid': 'result' })
    const { code, message } = errorParts(e)
    card.append(el('p', { class: 'error', 'data-code': code },
      el('code', { class: 'input' }, line), ` (line ${n}): `, el('code', { class: 'code' }, code), ' ', message))
    return card
  }

  /**
   * Reads one pasted line as an ID: decimal digits, else the base32 (13
   * characters) or base62 (11 characters) form. Returns { id, readAs }.
   */
  function readId(line) {
    if (/^[0-9]+$/.test(line)) return { id: parseId(line, 'decimal'), readAs: null }
    if (line.length === 13) return { id: parseId(line, 'base32'), readAs: 'base32' }
    if (line.length === 11) return { id: parseId(line, 'base62'), readAs: 'base62' }
    return { id: parseId(line, 'decimal'), readAs: null } // throws invalid_id with the reason
  }

  const valid = (date) => !Number.isNaN(date.getTime())

  function utc(date) {
    return valid(date) ? date.toISOString() : 'beyond the range of a JavaScript Date'
  }

  function local(date) {
    if (!valid(date)) return '-'
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone
    return `${date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' })} (${zone})`
  }

  const DAY = 86400000
  const UNITS = [['year', 365.2425 * DAY], ['month', 30.436875 * DAY], ['week', 7 * DAY], ['day', DAY],
    ['hour', 3600000], ['minute', 60000], ['second', 1000]]
  const relativeFormat = new Intl.RelativeTimeFormat(undefined, { numeric: 'always' })

  /** "3 years ago", "in 2 days": the largest unit that fits, whole units (truncated). */
  function relative(date, nowMs) {
    if (!valid(date)) return '-'
    const diff = date.getTime() - nowMs
    for (const [unit, ms] of UNITS) {
      if (Math.abs(diff) >= ms || unit === 'second') return relativeFormat.format(Math.trunc(diff / ms), unit)
    }
  }

  function layoutName(layout) {
    const p = layout.presetName
    return p ? `${LABELS[p] || p} (${p})` : 'custom'
  }

  // ---- Copying -------------------------------------------------------------

  /** The text to the clipboard: the Clipboard API, else a selected textarea and `copy`. */
  async function copyText(text) {
    try {
      if (navigator.clipboard && navigator.clipboard.writeText) {
        await navigator.clipboard.writeText(text)
        return true
      }
    } catch {
      // Refused (no permission, or not a secure context): the old way below.
    }
    const area = el('textarea', { readonly: '', class: 'offscreen', 'aria-hidden': 'true' })
    area.value = text
    const focused = document.activeElement
    document.body.append(area)
    area.focus()
    area.select()
    let ok
    try {
      ok = document.execCommand('copy')
    } finally {
      area.remove()
      if (focused && focused.focus) focused.focus() // back to the button, for keyboard users
    }
    return ok
  }

  /** A button that copies `text`; its label names what it copies. */
  function copyButton(text, what) {
    const label = `Copy ${what}`
    return el('button', { type: 'button', class: 'copy', 'aria-label': label, title: label, 'data-copy': text }, 'Copy')
  }

  async function onCopyClick(event) {
    const b = event.target.closest('button.copy[data-copy]')
    if (!b) return
    const ok = await copyText(b.dataset.copy)
    b.textContent = ok ? 'Copied' : 'Copy failed'
    clearTimeout(b.resetTimer)
    b.resetTimer = setTimeout(() => { b.textContent = b.dataset.label || 'Copy' }, 1500)
  }

  // ---- The bits of one ID --------------------------------------------------

  /**
   * The segments of a 64-bit ID under a layout, most significant first: the bits above the
   * layout's width ("unused"; for a 63-bit layout, the sign bit of a signed 64-bit integer), then
   * each field. Each: { name, kind, cls, high, low, value }.
   */
  function segments(layout, id, parts) {
    const segs = []
    if (layout.totalBits < 64) {
      const kind = layout.totalBits === 63 ? 'sign bit, always 0' : 'unused, always 0'
      segs.push({ name: 'unused', kind, cls: 'f-unused', high: 63, low: layout.totalBits, value: String(id >> BigInt(layout.totalBits)) })
    }
    let node = 0
    for (const f of layout.fields) {
      let value, cls
      if (f.kind === 'timestamp') {
        const units = (parts.timestampMs - layout.epochMs) / layout.timeUnitMs
        value = layout.timeUnitMs === 1 ? `${units} ms since epoch` : `${units} units of ${layout.timeUnitMs} ms`
        cls = 'f-time'
      } else if (f.kind === 'sequence') {
        value = String(parts.sequence)
        cls = 'f-seq'
      } else {
        value = String(parts.nodes[f.name])
        cls = `f-node${node++ % 4}`
      }
      segs.push({ name: f.name, kind: f.kind === f.name ? '' : f.kind, cls, high: f.shift + f.bits - 1, low: f.shift, value })
    }
    return segs
  }

  const range = (s) => (s.high === s.low ? `bit ${s.low}` : `bits ${s.high}–${s.low}`)
  const width = (s) => s.high - s.low + 1

  /** A strip of 64 cells, bit 63 on the left, coloured by field; under it each field's name,
   * bits and value. A picture: the table after it says the same in words. */
  function bitStrip(id, segs) {
    const bits = id.toString(2).padStart(64, '0')
    const strip = el('div', { class: 'strip', 'aria-hidden': 'true', 'data-testid': 'bits' })
    for (const s of segs) {
      for (let b = s.high; b >= s.low; b--) {
        const bit = bits[63 - b]
        const cell = el('span', { class: `bit ${s.cls}${bit === '1' ? ' one' : ''}`, 'data-bit': String(b) }, bit)
        if (b === s.high) cell.classList.add('first')
        strip.append(cell)
      }
    }
    for (const s of segs) {
      // A field one or two cells wide (the sign bit) shows only its value; the title and the
      // table name it.
      const narrow = width(s) < 3
      const label = el('span', { class: `seg ${s.cls}`, 'data-field': s.name, title: `${s.name}: ${s.value} (${range(s)})` },
        el('span', { class: 'seg-name' }, narrow ? '' : s.name),
        el('span', { class: 'seg-value' }, s.value.replace(/ ms since epoch$/, ' ms')),
        el('span', { class: 'seg-bits' }, narrow ? '' : `${s.high}–${s.low}`))
      label.style.gridColumn = `span ${width(s)}`
      strip.append(label)
    }
    return el('div', { class: 'strip-box' }, strip)
  }

  function fieldTable(segs) {
    const table = el('table', { class: 'fields' })
    table.append(el('caption', { class: 'offscreen' }, 'Fields'))
    table.append(el('tr', {}, el('th', { scope: 'col' }, 'Field'), el('th', { scope: 'col' }, 'Bits'),
      el('th', { scope: 'col' }, 'Value'), el('th', { scope: 'col' }, el('span', { class: 'offscreen' }, 'Copy'))))
    for (const s of segs) {
      table.append(el('tr', { 'data-field': s.name },
        el('td', {}, el('span', { class: `swatch ${s.cls}`, 'aria-hidden': 'true' }), s.name, ' ',
          el('span', { class: 'kind' }, s.kind ? `(${s.kind})` : '')),
        el('td', { class: 'num' }, `${range(s)} (${width(s)})`),
        el('td', { class: 'num value' }, s.value),
        el('td', {}, copyButton(s.value.replace(/ (ms since epoch|units of .*)$/, ''), `${s.name} value`))))
    }
    return table
  }

  // ---- Results -------------------------------------------------------------

  /** One decoded ID under one layout: a card, or one error line. */
  function renderDecoded(line, n, layout, nowMs) {
    let read, parts
    try {
      read = readId(line)
      parts = layout.decode(read.id)
    } catch (e) {
      return { card: badLine(line, n, e), ok: false }
    }
    const card = el('article', { class: 'result', 'data-testid': 'result' })
    const title = el('h2', {}, String(read.id))
    if (read.readAs) title.append(el('span', { class: 'read-as' }, `read as ${read.readAs}`))
    card.append(title)
    const kv = el('dl', { class: 'kv' })
    const row = (k, v, key) => kv.append(el('dt', {}, k),
      el('dd', {}, el('span', { 'data-key': key }, v), v === '-' || key === 'layout' ? '' : copyButton(v, k)))
    row('Layout', layoutName(layout), 'layout')
    const date = parts.date
    row('Time (UTC)', utc(date), 'utc')
    row('Time (local)', local(date), 'local')
    row('Relative', relative(date, nowMs), 'relative')
    row('Unix ms', String(parts.timestampMs), 'unix-ms')
    for (const f of ['decimal', 'base32', 'base62']) row(f, formatId(read.id, f), f)
    card.append(kv)
    const segs = segments(layout, read.id, parts)
    card.append(bitStrip(read.id, segs), fieldTable(segs))
    return { card, ok: true }
  }

  /** One ID against every preset: the plausible ones. */
  function renderFits(line, n, nowMs) {
    let read
    try {
      read = readId(line)
    } catch (e) {
      return { card: badLine(line, n, e), ok: false }
    }
    const card = el('article', { class: 'result', 'data-testid': 'result' })
    card.append(el('h2', {}, String(read.id)))
    const list = el('ul', { class: 'fits' })
    for (const name of Layout.presets()) {
      const layout = Layout.preset(name)
      if (!layout.isPlausible(read.id, nowMs)) continue
      const p = layout.decode(read.id)
      list.append(el('li', { 'data-preset': name },
        el('span', { class: 'preset' }, LABELS[name] || name),
        el('span', { class: 'when' }, utc(p.date)),
        el('span', { class: 'ago' }, relative(p.date, nowMs))))
    }
    if (list.children.length === 0) {
      card.append(el('p', { class: 'none' }, 'No preset decodes this ID to a plausible time.'))
    } else {
      card.append(list)
    }
    return { card, ok: true }
  }

  function presetInfo(layout) {
    const fields = layout.fields.map((f) => `${f.name} ${f.bits}`).join(' | ')
    const epoch = new Date(layout.epochMs).toISOString()
    const unit = layout.timeUnitMs === 1 ? 'ms' : `${layout.timeUnitMs} ms units`
    return `${fields} bits; epoch ${epoch}, ${unit}; runs out ${utc(new Date(layout.timeEndMs))}`
  }

  const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`

  // The summary is the page's only live region. It is written a moment after the last change,
  // and only when its text changes, so a screen reader hears one short line, not every keystroke.
  let summaryTimer
  function announce(text) {
    clearTimeout(summaryTimer)
    summaryTimer = setTimeout(() => {
      if ($('summary').textContent !== text) $('summary').textContent = text
    }, 400)
  }

  // ---- The form and the address's fragment --------------------------------

  function mode() {
    return document.querySelector('input[name="mode"]:checked').value
  }

  function lines() {
    return $('ids').value.split('\n').map((s) => s.trim()).filter(Boolean)
  }

  /** The view as a fragment: `#id=...&id=...&preset=discord` (or `layout=<JSON>`, or `mode=fits`). */
  function fragment() {
    const q = new URLSearchParams()
    for (const line of lines()) q.append('id', line)
    const m = mode()
    if (m === 'preset') q.set('preset', $('preset').value)
    else if (m === 'custom') q.set('layout', $('custom').value)
    else q.set('mode', 'fits')
    return `#${q}`
  }

  /** Fills the form from the fragment; false when the fragment names no view. */
  function applyFragment() {
    const q = new URLSearchParams(location.hash.slice(1))
    if (!['id', 'preset', 'layout', 'mode'].some((k) => q.has(k))) return false
    $('ids').value = q.getAll('id').join('\n')
    let m = 'preset'
    if (q.get('mode') === 'fits') m = 'fits'
    else if (q.has('layout')) {
      m = 'custom'
      $('custom').value = q.get('layout')
    }
    const preset = q.get('preset')
    $('preset').value = preset && Layout.presets().includes(preset) ? preset : DEFAULT_PRESET
    document.querySelector(`input[name="mode"][value="${m}"]`).checked = true
    return true
  }

  function update() {
    const m = mode()
    $('preset-box').hidden = m !== 'preset'
    $('custom-box').hidden = m !== 'custom'
    $('fits-box').hidden = m !== 'fits'
    const frag = fragment()
    if (location.hash !== frag) history.replaceState(history.state, '', frag) // no new history entry
    $('copy-link').hidden = false

    const out = $('results')
    out.replaceChildren()
    let layout = null
    if (m === 'preset') {
      layout = Layout.preset($('preset').value)
      $('preset-info').textContent = presetInfo(layout)
    } else if (m === 'custom') {
      const box = $('custom-error')
      try {
        layout = Layout.parse($('custom').value)
        box.hidden = true
      } catch (e) {
        box.replaceWith(Object.assign(errorBox(e), { id: 'custom-error' }))
        announce(`Layout error: ${errorParts(e).code}`)
        return
      }
    }
    const now = Date.now()
    let ok = 0
    let bad = 0
    for (const [i, line] of lines().entries()) {
      const r = m === 'fits' ? renderFits(line, i + 1, now) : renderDecoded(line, i + 1, layout, now)
      out.append(r.card)
      if (r.ok) ok++
      else bad++
    }
    const verb = m === 'fits' ? 'checked against the presets' : 'decoded'
    let text = ok + bad === 0 ? 'No IDs entered' : `${plural(ok, 'ID', 'IDs')} ${verb}`
    if (bad) text += `, ${plural(bad, 'error', 'errors')}`
    announce(text)
  }

  for (const name of Layout.presets()) {
    $('preset').append(el('option', { value: name }, LABELS[name] || name))
  }
  $('preset').value = DEFAULT_PRESET
  applyFragment()
  for (const id of ['ids', 'custom']) $(id).addEventListener('input', update)
  $('preset').addEventListener('change', update)
  for (const r of document.querySelectorAll('input[name="mode"]')) r.addEventListener('change', update)
  window.addEventListener('hashchange', () => {
    if (applyFragment()) update()
  })
  document.addEventListener('click', onCopyClick)
  // The link button copies the address at the moment of the click (the fragment follows the form).
  $('copy-link').dataset.label = $('copy-link').textContent
  $('copy-link').dataset.copy = ''
  $('copy-link').addEventListener('click', () => { $('copy-link').dataset.copy = location.href })
  update()
  document.body.dataset.ready = 'true'
})()

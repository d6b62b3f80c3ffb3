// The decoder page. All decoding is done by the WebAssembly package
// (./pkg/, the `--target web` build of bindings-wasm); this file only reads
// the form and renders results. No network requests beyond loading ./pkg/.
import init, { Layout, formatId, parseId } from './pkg/index.js'

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

const $ = (id) => document.getElementById(id)

/** `el('dt', {class: 'x'}, 'text', child...)`: DOM without innerHTML, so pasted text is never markup. */
function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v)
  for (const c of children) e.append(c)
  return e
}

function errorBox(e) {
  const code = e && e.code ? e.code : 'error'
  const p = el('p', { class: 'error', 'data-code': code })
  p.append(el('code', {}, code), ': ', String(e && e.message ? e.message : e))
  return p
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

function utc(date) {
  return Number.isNaN(date.getTime()) ? 'beyond the range of a JavaScript Date' : date.toISOString()
}

function local(date) {
  if (Number.isNaN(date.getTime())) return '-'
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone
  return `${date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' })} (${zone})`
}

function layoutName(layout) {
  const p = layout.presetName
  return p ? `${LABELS[p] || p} (${p})` : 'custom'
}

function stringForms(id) {
  return ['decimal', 'base32', 'base62'].map((f) => [f, formatId(id, f)])
}

/** One decoded ID under one layout. */
function renderDecoded(line, layout) {
  const card = el('article', { class: 'result', 'data-testid': 'result' })
  let read
  try {
    read = readId(line)
  } catch (e) {
    card.classList.add('bad')
    card.append(el('h2', {}, line), errorBox(e))
    return card
  }
  const title = el('h2', {}, String(read.id))
  if (read.readAs) title.append(el('span', { class: 'read-as' }, `read as ${read.readAs}`))
  card.append(title)
  let parts
  try {
    parts = layout.decode(read.id)
  } catch (e) {
    card.classList.add('bad')
    card.append(errorBox(e))
    return card
  }
  const kv = el('dl', { class: 'kv' })
  const row = (k, v, key) => kv.append(el('dt', {}, k), el('dd', { 'data-key': key }, v))
  row('Layout', layoutName(layout), 'layout')
  row('Time (UTC)', utc(parts.date), 'utc')
  row('Time (local)', local(parts.date), 'local')
  row('Unix ms', String(parts.timestampMs), 'unix-ms')
  for (const [f, s] of stringForms(read.id)) row(f, s, f)
  card.append(kv)

  const table = el('table', { class: 'fields' })
  table.append(el('tr', {}, el('th', {}, 'Field'), el('th', {}, 'Bits'), el('th', {}, 'Value')))
  for (const f of layout.fields) {
    let value
    if (f.kind === 'timestamp') value = `${parts.timestampMs - layout.epochMs} ms since epoch`
    else if (f.kind === 'sequence') value = String(parts.sequence)
    else value = String(parts.nodes[f.name])
    if (f.kind === 'timestamp' && layout.timeUnitMs !== 1) {
      value = `${(parts.timestampMs - layout.epochMs) / layout.timeUnitMs} units of ${layout.timeUnitMs} ms`
    }
    table.append(el('tr', { 'data-field': f.name },
      el('td', {}, f.name, ' ', el('span', { class: 'kind' }, f.name === f.kind ? '' : `(${f.kind})`)),
      el('td', { class: 'num' }, `${f.bits} @ ${f.shift}`),
      el('td', { class: 'num value' }, value)))
  }
  card.append(table)
  return card
}

/** One ID against every preset: the plausible ones. */
function renderFits(line, nowMs) {
  const card = el('article', { class: 'result', 'data-testid': 'result' })
  let read
  try {
    read = readId(line)
  } catch (e) {
    card.classList.add('bad')
    card.append(el('h2', {}, line), errorBox(e))
    return card
  }
  card.append(el('h2', {}, String(read.id)))
  const list = el('ul', { class: 'fits' })
  for (const name of Layout.presets()) {
    const layout = Layout.preset(name)
    if (!layout.isPlausible(read.id, nowMs)) continue
    const p = layout.decode(read.id)
    list.append(el('li', { 'data-preset': name },
      el('span', { class: 'preset' }, LABELS[name] || name),
      el('span', { class: 'when' }, utc(p.date))))
  }
  if (list.children.length === 0) {
    card.append(el('p', { class: 'none' }, 'No preset decodes this ID to a plausible time.'))
  } else {
    card.append(list)
  }
  return card
}

function mode() {
  return document.querySelector('input[name="mode"]:checked').value
}

function update() {
  const m = mode()
  $('preset-box').hidden = m !== 'preset'
  $('custom-box').hidden = m !== 'custom'
  $('fits-box').hidden = m !== 'fits'
  const out = $('results')
  out.replaceChildren()
  const lines = $('ids').value.split('\n').map((s) => s.trim()).filter(Boolean)

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
      return
    }
  }
  const now = Date.now()
  for (const line of lines) {
    out.append(m === 'fits' ? renderFits(line, now) : renderDecoded(line, layout))
  }
}

function presetInfo(layout) {
  const fields = layout.fields.map((f) => `${f.name} ${f.bits}`).join(' | ')
  const epoch = new Date(layout.epochMs).toISOString()
  const unit = layout.timeUnitMs === 1 ? 'ms' : `${layout.timeUnitMs} ms units`
  return `${fields}; epoch ${epoch}, ${unit}; runs out ${utc(new Date(layout.timeEndMs))}`
}

await init()
for (const name of Layout.presets()) {
  $('preset').append(el('option', { value: name }, LABELS[name] || name))
}
$('preset').value = 'discord'
for (const id of ['ids', 'custom']) $(id).addEventListener('input', update)
$('preset').addEventListener('change', update)
for (const r of document.querySelectorAll('input[name="mode"]')) r.addEventListener('change', update)
update()
document.body.dataset.ready = 'true'

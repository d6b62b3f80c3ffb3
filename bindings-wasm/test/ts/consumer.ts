// Type-checked (not run) by package.test.mjs against pkg-node's .d.ts: the
// API of issue 6 as a TypeScript user writes it.
import {
  Generator, Layout, PureGenerator, compose, decode, formatId, fromBase32, fromBase62, idBounds,
  parseId, toBase32, toBase62, type GeneratorOptions, type IdLike, type Parts,
  type GeneratorJSON, type LayoutJSON, type PartsJSON,
} from 'snowmint-wasm'

const layout: Layout = Layout.preset('discord')
const also: Layout[] = [Layout.fromJson('{"epoch_ms":0,"fields":[["timestamp",48],["sequence",16]]}'), Layout.parse('tsid')]
const names: string[] = Layout.presets()
const json: string = layout.toJson()
const nums: number[] = [layout.epochMs, layout.timeUnitMs, layout.totalBits, layout.timeEndMs, layout.i64EndMs, layout.jsSafeEndMs]
const max: bigint = layout.maxId
const preset: string | null = layout.presetName
const kinds: ('timestamp' | 'sequence' | 'node')[] = layout.fields.map((f) => f.kind)
const id: IdLike = 175928847299117063n
const p: Parts = layout.decode(id)
const when: Date = p.date
const ms: number = p.timestampMs
const worker: number = p.nodes.worker
const p2: Parts = decode('175928847299117063', 'discord')
const c: bigint = compose('mastodon', 1, 2) + layout.compose(Date.now(), 0, { worker: 1, process: 0 })
const [lo, hi]: [bigint, bigint] = idBounds(layout, ms)
const ok: boolean = layout.isPlausible(id, Date.now())
const s: string = toBase32(id) + toBase62(id) + formatId(id, 'base62')
const back: bigint = fromBase32(s.slice(0, 13)) + fromBase62('00000000001') + parseId('1', 'decimal')
const options: GeneratorOptions = { clockBackwards: 'fail', sequenceStart: 'zero', seed: 1n, resumeAfter: '5' }
const g = new Generator('mastodon')
const g2 = new Generator(layout, { worker: 1, process: 0 }, options)
const one: bigint = g.nextId()
const str: string = g2.nextIdString()
const many: BigUint64Array = g.nextIds(10)
const gl: Layout = g.layout
const pg = new PureGenerator('mastodon', {}, { seed: 0 })
const r = pg.next(Date.now())
const rid: bigint | undefined = 'id' in r ? r.id : undefined
const cols = layout.decodeMany(many)
const col: Float64Array = cols.nodes.worker
const cols2 = layout.decodeMany(many, new Float64Array(40))
const pj: PartsJSON = p.toJSON()
const pid: string = pj.id
const lj: LayoutJSON = layout.toJSON()
const bits: number = lj.fields[0][1]
const gj: GeneratorJSON = g2.toJSON()
const gnodes: Record<string, number> = g2.nodes
const text: string = String(layout) + p.toString() + layout.toString() + gj.layout.epoch_ms
export { pid, bits, gnodes, text }
export { also, names, json, nums, max, preset, kinds, when, worker, p2, c, lo, hi, ok, back, one, str, gl, rid, col, cols2 }

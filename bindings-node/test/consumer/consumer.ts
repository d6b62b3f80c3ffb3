// A TypeScript consumer: type-checked with `tsc --noEmit` against index.d.ts.
import {
  Layout, Generator, PureGenerator, decode, compose, idBounds, toBase32, fromBase32,
  toBase62, fromBase62, formatId, parseId, __backend as snowmintBackend,
} from 'snowmint'
import type { Field, GeneratorJSON, GeneratorOptions, IdLike, LayoutJSON, LeaseInfo, Parts, PartsJSON } from 'snowmint'

const layout: Layout = Layout.parse('twitter')
const fields: Field[] = layout.fields
const kind: 'timestamp' | 'sequence' | 'node' = fields[0].kind
const preset: string | null = layout.presetName
const maxId: bigint = layout.maxId
const options: GeneratorOptions = { clockBackwards: 'wait:5', seed: 1n, resumeAfter: '0' }
const g = new Generator(layout, { datacenter: 1, worker: 3 }, options)
const id: bigint = g.nextId()
const s: string = g.nextIdString()
const batch: BigUint64Array = g.nextIds(10)
const parts: Parts = decode(id, 'twitter')
const date: Date = parts.date
const ms: number = parts.timestampMs
const nodes: Record<string, number> = parts.nodes
const bounds: [bigint, bigint] = idBounds(layout, ms)
const composed: bigint = compose('twitter', ms, 0, { datacenter: 1, worker: 3 })
const like: IdLike[] = [1n, '1', 1]
const strs: string[] = [toBase32(id), toBase62(id), formatId(id, 'base62')]
const back: bigint[] = [fromBase32(strs[0]), fromBase62(strs[1]), parseId(s, 'decimal')]
const pure = new PureGenerator('mastodon')
const next = pure.next(Date.now())
const either: bigint | number = 'id' in next ? next.id : next.retryAt
const plausible: boolean = layout.isPlausible(id, Date.now())
const leaseOptions: GeneratorOptions = { lease: 'file:/tmp/snowmint-ids?namespace=orders' }
const leased = new Generator('twitter', { datacenter: 1 }, leaseOptions) // type-checked, never run
const info: LeaseInfo | null = leased.lease
const slot: number | undefined = info?.slot
const reserved: number | null | undefined = info?.reservedUntilMs
const nodeValues: Record<string, number> = leased.nodes
leased.close()
void [kind, preset, maxId, batch, date, nodes, bounds, composed, like, back, either, plausible]
void [slot, reserved, nodeValues]
const pj: PartsJSON = parts.toJSON()
const pid: string = pj.id
const lj: LayoutJSON = layout.toJSON()
const bits: number = lj.fields[0][1]
const gj: GeneratorJSON = g.toJSON()
const leaseJson: LeaseInfo | null = gj.lease
const text: string = String(layout) + parts.toString() + layout.toString()
const backend: 'native' | 'wasm' = snowmintBackend
void [pid, bits, leaseJson, text, backend]

// The WebAssembly package's own declarations: its classes and functions as
// wasm-bindgen's module has them (src/lib.rs) with what js/api.js adds.
// bindings-wasm/assemble.cjs writes each package's index.d.ts as the shared
// declarations of both JavaScript packages (bindings-node/types-header.d.ts,
// without its native-only blocks) followed by this file; the web copy also
// declares the module's init functions.

/** A layout: the epoch, the time unit, and the fields of an ID. Make one with
 * `Layout.preset`, `Layout.fromJson` or `Layout.parse`. */
export class Layout {
  private constructor()
  /** A preset by name (`twitter`, `discord`, ... see `Layout.presets()`). */
  static preset(name: string): Layout
  /** A layout from its JSON descriptor, e.g.
   * `{"epoch_ms":0,"fields":[["timestamp",48],["sequence",16]]}`. */
  static fromJson(json: string): Layout
  /** A preset name or a JSON descriptor (a string starting with `{` or `"`). */
  static parse(s: string): Layout
  /** The preset names, in a fixed order. */
  static presets(): string[]
  /** The canonical JSON descriptor. */
  toJson(): string
  /** The epoch, Unix milliseconds. */
  readonly epochMs: number
  /** The length of one time unit, in milliseconds. */
  readonly timeUnitMs: number
  /** The width of an ID in bits (at most 64). */
  readonly totalBits: number
  /** The largest ID of the layout. */
  readonly maxId: bigint
  /** The name of the preset equal to this layout, or `null`. */
  readonly presetName: string | null
  /** The fields, most significant first. */
  readonly fields: Field[]
  /** The first Unix ms the time field cannot hold. */
  readonly timeEndMs: number
  /** The first Unix ms from which IDs may not fit a signed 64-bit integer. */
  readonly i64EndMs: number
  /** The first Unix ms from which IDs may exceed `Number.MAX_SAFE_INTEGER`. */
  readonly jsSafeEndMs: number
  /** Builds an ID from a time (Unix ms), a sequence value and node values. */
  compose(timestampMs: UintLike, sequence: UintLike, nodes?: Record<string, UintLike>): bigint
  /** The smallest and largest IDs of the time unit holding `timestampMs`. */
  idBounds(timestampMs: UintLike): [bigint, bigint]
  /** True when the ID fits the layout and decodes to a time between the epoch and
   * `nowMs` plus one day. */
  isPlausible(id: IdLike, nowMs: UintLike): boolean
  /**
   * WebAssembly package only (not in the native package): decodes a whole
   * `BigUint64Array` into columns. An ID that does not fit the layout throws
   * `invalid_id` with its position in the error's `index`. The columns are views of one `Float64Array`
   * of `(2 + node fields) * n` values: a new one, or `into` when given (at least that
   * long), so a loop over many batches can reuse one buffer instead of allocating
   * (a new result of 10,000 IDs is 320 KB, whose allocation costs more than the
   * decoding: bench/RESULTS.md).
   */
  decodeMany(ids: BigUint64Array, into?: Float64Array): {
    timestampMs: Float64Array
    sequence: Float64Array
    nodes: Record<string, Float64Array>
  }
  /** Frees the object's WebAssembly memory now (wasm-bindgen's; otherwise garbage collection
   * does it). The object is unusable afterwards. */
  free(): void
}

/**
 * The generator on `Date.now()` (the core's `Generator`). Generators with the same
 * layout and node values share one state in the whole module instance, so they never
 * repeat an ID. Every module instance (each page, each worker) has its own state: give
 * each its own node values. Without a seed (or with 0), the seed of `random:N` sequence
 * starts comes from `crypto.getRandomValues` (or `Math.random` where there is no Web Crypto).
 */
export class Generator {
  constructor(layout: Layout | string, nodes?: Record<string, number>, options?: GeneratorOptions)
  /** The next ID. Waits (spinning on `Date.now()`) when a policy says to wait. */
  nextId(): bigint
  /** The next ID as a decimal string (for JSON). */
  nextIdString(): string
  /** `n` increasing IDs. */
  nextIds(n: UintLike): BigUint64Array
  /** The generator's layout. */
  readonly layout: Layout
  /** The node values by field name. */
  readonly nodes: Record<string, number>
  /** Frees the object's WebAssembly memory now (wasm-bindgen's; otherwise garbage collection
   * does it). The object is unusable afterwards. */
  free(): void
}

/** The pure generator (the core's `PureGenerator`): the caller passes the time. The seed is
 * used as given (default 0). Not shared with any other generator. */
export class PureGenerator {
  constructor(layout: Layout | string, nodes?: Record<string, number>, options?: GeneratorOptions)
  /** The next ID at clock reading `nowMs` (`{ id }`), or the Unix ms to ask again at (`{ retryAt }`). */
  next(nowMs: UintLike): { id: bigint } | { retryAt: number }
  /** IDs only in time units up to the one holding `untilMs` (a lease's confirmed reservation),
   * `lease_expired` past it; `null` removes the bound. */
  reserveUntil(untilMs: UintLike | null): void
  /** Frees the object's WebAssembly memory now (wasm-bindgen's; otherwise garbage collection
   * does it). The object is unusable afterwards. */
  free(): void
}

/** The ID in Crockford base32: 13 characters, upper case, sorts like the number. */
export function toBase32(id: IdLike): string
/** Reads a Crockford base32 ID (case-insensitive; `I`/`L` read as 1, `O` as 0). */
export function fromBase32(s: string): bigint
/** The ID in base62 (`0-9A-Za-z`): 11 characters, sorts like the number. */
export function toBase62(id: IdLike): string
/** Reads a base62 ID. */
export function fromBase62(s: string): bigint
/** The ID in `format`: `decimal`, `base32` or `base62`. */
export function formatId(id: IdLike, format: 'decimal' | 'base32' | 'base62'): string
/** Reads an ID written in `format`: `decimal`, `base32` or `base62`. */
export function parseId(s: string, format: 'decimal' | 'base32' | 'base62'): bigint

/** One field of a layout, most significant first. */
export interface Field {
  name: string
  bits: number
  /** Position of the field's lowest bit in the ID. */
  shift: number
  kind: 'timestamp' | 'sequence' | 'node'
}

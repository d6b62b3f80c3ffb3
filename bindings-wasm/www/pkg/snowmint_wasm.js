/* @ts-self-types="./snowmint_wasm.d.ts" */
import { idResult, makeError, Shape, pair } from './snippets/snowmint-wasm-7290618f7e0470cc/js/glue.js';
import * as import1 from "./snippets/snowmint-wasm-7290618f7e0470cc/js/glue.js"
import * as import2 from "./snippets/snowmint-wasm-7290618f7e0470cc/js/glue.js"
import * as import3 from "./snippets/snowmint-wasm-7290618f7e0470cc/js/glue.js"
import * as import4 from "./snippets/snowmint-wasm-7290618f7e0470cc/js/glue.js"


/**
 * The generator on `Date.now()` (the core's `SyncGenerator`).
 *
 * Generators with the same layout and node values share one state in the
 * whole module instance, so they never repeat an ID. Every module instance
 * (each page, each worker) has its own state: give each its own node values.
 */
export class Generator {
    __destroy_into_raw() {
        const ptr = this.__wbg_ptr;
        this.__wbg_ptr = 0;
        GeneratorFinalization.unregister(this);
        return ptr;
    }
    free() {
        const ptr = this.__destroy_into_raw();
        wasm.__wbg_generator_free(ptr, 0);
    }
    /**
     * The generator's layout.
     * @returns {Layout}
     */
    get layout() {
        const ret = wasm.generator_layout(this.__wbg_ptr);
        return Layout.__wrap(ret);
    }
    /**
     * `new Generator(layout, nodes?, options?)`. Without a seed (or with 0),
     * the seed of `random:N` sequence starts comes from
     * `crypto.getRandomValues` (or `Math.random` where there is no Web Crypto).
     * @param {Layout | string} layout
     * @param {Record<string, number>} [nodes]
     * @param {GeneratorOptions} [options]
     */
    constructor(layout, nodes, options) {
        const ret = wasm.generator_new(layout, isLikeNone(nodes) ? 0 : addToExternrefTable0(nodes), isLikeNone(options) ? 0 : addToExternrefTable0(options));
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        this.__wbg_ptr = ret[0];
        GeneratorFinalization.register(this, this.__wbg_ptr, this);
        return this;
    }
    /**
     * The next ID as a decimal string (for JSON).
     * @returns {string}
     */
    nextIdString() {
        let deferred2_0;
        let deferred2_1;
        try {
            const ret = wasm.generator_nextIdString(this.__wbg_ptr);
            var ptr1 = ret[0];
            var len1 = ret[1];
            if (ret[3]) {
                ptr1 = 0; len1 = 0;
                throw takeFromExternrefTable0(ret[2]);
            }
            deferred2_0 = ptr1;
            deferred2_1 = len1;
            return getStringFromWasm0(ptr1, len1);
        } finally {
            wasm.__wbindgen_free(deferred2_0, deferred2_1, 1);
        }
    }
    /**
     * The next ID. Waits (spinning on `Date.now()`) when a policy says to
     * wait, at most for the few time units the policy allows.
     * @returns {bigint}
     */
    nextId() {
        const ret = wasm.generator_nextId(this.__wbg_ptr);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return BigInt.asUintN(64, ret[0]);
    }
    /**
     * `n` increasing IDs.
     * @param {number} n
     * @returns {BigUint64Array}
     */
    nextIds(n) {
        const ret = wasm.generator_nextIds(this.__wbg_ptr, n);
        if (ret[3]) {
            throw takeFromExternrefTable0(ret[2]);
        }
        var v1 = getArrayU64FromWasm0(ret[0], ret[1]).slice();
        wasm.__wbindgen_free(ret[0], ret[1] * 8, 8);
        return v1;
    }
}
if (Symbol.dispose) Generator.prototype[Symbol.dispose] = Generator.prototype.free;

/**
 * A layout: the epoch, the time unit, and the fields of an ID. Make one with
 * `Layout.preset`, `Layout.fromJson` or `Layout.parse`.
 */
export class Layout {
    static __wrap(ptr) {
        const obj = Object.create(Layout.prototype);
        obj.__wbg_ptr = ptr;
        LayoutFinalization.register(obj, obj.__wbg_ptr, obj);
        return obj;
    }
    __destroy_into_raw() {
        const ptr = this.__wbg_ptr;
        this.__wbg_ptr = 0;
        LayoutFinalization.unregister(this);
        return ptr;
    }
    free() {
        const ptr = this.__destroy_into_raw();
        wasm.__wbg_layout_free(ptr, 0);
    }
    /**
     * Internal: see [`LayoutLike`].
     */
    __snowmintSelect() {
        wasm.layout___snowmintSelect(this.__wbg_ptr);
    }
    /**
     * Builds an ID from a time (Unix ms), a sequence value and node values.
     * @param {number} timestampMs
     * @param {number} sequence
     * @param {Record<string, number>} [nodes]
     * @returns {bigint}
     */
    compose(timestampMs, sequence, nodes) {
        const ret = wasm.layout_compose(this.__wbg_ptr, timestampMs, sequence, isLikeNone(nodes) ? 0 : addToExternrefTable0(nodes));
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return BigInt.asUintN(64, ret[0]);
    }
    /**
     * WebAssembly package only (not in the native package): decodes a whole
     * `BigUint64Array` in one call, into columns:
     * `{ timestampMs: Float64Array, sequence: Float64Array, nodes: { [field]: Float64Array } }`.
     * An ID that does not fit the layout throws `invalid_id` naming its index.
     *
     * The columns are views of one `Float64Array` of `(2 + node fields) * n`
     * values: a new one, or `into` when given (at least that long), so a
     * loop over many batches can reuse one buffer instead of allocating.
     * @param {BigUint64Array} ids
     * @param {Float64Array} [into]
     * @returns {{ timestampMs: Float64Array; sequence: Float64Array; nodes: Record<string, Float64Array> }}
     */
    decodeMany(ids, into) {
        const ret = wasm.layout_decodeMany(this.__wbg_ptr, ids, isLikeNone(into) ? 0 : addToExternrefTable0(into));
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return takeFromExternrefTable0(ret[0]);
    }
    /**
     * The epoch, Unix milliseconds.
     * @returns {number}
     */
    get epochMs() {
        const ret = wasm.layout_epoch_ms(this.__wbg_ptr);
        return ret;
    }
    /**
     * The fields, most significant first: `{ name, bits, shift, kind }`.
     * @returns {{ name: string; bits: number; shift: number; kind: 'timestamp' | 'sequence' | 'node' }[]}
     */
    get fields() {
        const ret = wasm.layout_fields(this.__wbg_ptr);
        return ret;
    }
    /**
     * A layout from its JSON descriptor, e.g.
     * `{"epoch_ms":0,"fields":[["timestamp",48],["sequence",16]]}`.
     * @param {string} json
     * @returns {Layout}
     */
    static fromJson(json) {
        const ret = wasm.layout_fromJson(json);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return Layout.__wrap(ret[0]);
    }
    /**
     * The first Unix ms from which IDs may not fit a signed 64-bit integer.
     * @returns {number}
     */
    get i64EndMs() {
        const ret = wasm.layout_i64_end_ms(this.__wbg_ptr);
        return ret;
    }
    /**
     * The smallest and largest IDs of the time unit holding `timestampMs`.
     * @param {number} timestampMs
     * @returns {[bigint, bigint]}
     */
    idBounds(timestampMs) {
        const ret = wasm.layout_idBounds(this.__wbg_ptr, timestampMs);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return takeFromExternrefTable0(ret[0]);
    }
    /**
     * True when the ID fits the layout and decodes to a time between the
     * epoch and `nowMs` plus one day (the decoder page's "which layout fits?").
     * @param {IdLike} id
     * @param {number} nowMs
     * @returns {boolean}
     */
    isPlausible(id, nowMs) {
        const ret = wasm.layout_isPlausible(this.__wbg_ptr, id, nowMs);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return ret[0] !== 0;
    }
    /**
     * The first Unix ms from which IDs may exceed `Number.MAX_SAFE_INTEGER`.
     * @returns {number}
     */
    get jsSafeEndMs() {
        const ret = wasm.layout_js_safe_end_ms(this.__wbg_ptr);
        return ret;
    }
    /**
     * The largest ID of the layout.
     * @returns {bigint}
     */
    get maxId() {
        const ret = wasm.layout_max_id(this.__wbg_ptr);
        return BigInt.asUintN(64, ret);
    }
    /**
     * A preset name or a JSON descriptor (a string starting with `{` or `"`).
     * @param {string} s
     * @returns {Layout}
     */
    static parse(s) {
        const ret = wasm.layout_parse(s);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return Layout.__wrap(ret[0]);
    }
    /**
     * A preset by name (`twitter`, `discord`, ... see `Layout.presets()`).
     * @param {string} name
     * @returns {Layout}
     */
    static preset(name) {
        const ret = wasm.layout_preset(name);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return Layout.__wrap(ret[0]);
    }
    /**
     * The name of the preset equal to this layout, or `null`.
     * @returns {string | null}
     */
    get presetName() {
        const ret = wasm.layout_preset_name(this.__wbg_ptr);
        return ret;
    }
    /**
     * The preset names, in a fixed order.
     * @returns {string[]}
     */
    static presets() {
        const ret = wasm.layout_presets();
        var v1 = getArrayJsValueFromWasm0(ret[0], ret[1]);
        wasm.__wbindgen_free(ret[0], ret[1] * 4, 4);
        return v1;
    }
    /**
     * The first Unix ms the time field cannot hold.
     * @returns {number}
     */
    get timeEndMs() {
        const ret = wasm.layout_time_end_ms(this.__wbg_ptr);
        return ret;
    }
    /**
     * The length of one time unit, in milliseconds.
     * @returns {number}
     */
    get timeUnitMs() {
        const ret = wasm.layout_time_unit_ms(this.__wbg_ptr);
        return ret;
    }
    /**
     * The canonical JSON descriptor.
     * @returns {string}
     */
    toJson() {
        let deferred1_0;
        let deferred1_1;
        try {
            const ret = wasm.layout_toJson(this.__wbg_ptr);
            deferred1_0 = ret[0];
            deferred1_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
        }
    }
    /**
     * The width of an ID in bits (at most 64).
     * @returns {number}
     */
    get totalBits() {
        const ret = wasm.layout_total_bits(this.__wbg_ptr);
        return ret >>> 0;
    }
}
if (Symbol.dispose) Layout.prototype[Symbol.dispose] = Layout.prototype.free;

/**
 * The pure generator (the core's `Generator`): the caller passes the time,
 * so it can be driven by a script of clock readings. The seed is used as
 * given (default 0). Not shared with any other generator.
 */
export class PureGenerator {
    __destroy_into_raw() {
        const ptr = this.__wbg_ptr;
        this.__wbg_ptr = 0;
        PureGeneratorFinalization.unregister(this);
        return ptr;
    }
    free() {
        const ptr = this.__destroy_into_raw();
        wasm.__wbg_puregenerator_free(ptr, 0);
    }
    /**
     * `new PureGenerator(layout, nodes?, options?)`.
     * @param {Layout | string} layout
     * @param {Record<string, number>} [nodes]
     * @param {GeneratorOptions} [options]
     */
    constructor(layout, nodes, options) {
        const ret = wasm.puregenerator_new(layout, isLikeNone(nodes) ? 0 : addToExternrefTable0(nodes), isLikeNone(options) ? 0 : addToExternrefTable0(options));
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        this.__wbg_ptr = ret[0];
        PureGeneratorFinalization.register(this, this.__wbg_ptr, this);
        return this;
    }
    /**
     * The next ID at clock reading `nowMs` (`{ id }`), or the Unix ms to ask
     * again at (`{ retryAt }`).
     * @param {number} nowMs
     * @returns {{ id: bigint } | { retryAt: number }}
     */
    next(nowMs) {
        const ret = wasm.puregenerator_next(this.__wbg_ptr, nowMs);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return takeFromExternrefTable0(ret[0]);
    }
}
if (Symbol.dispose) PureGenerator.prototype[Symbol.dispose] = PureGenerator.prototype.free;

/**
 * `layout.decode(id)` (layout handle `h`) for an ID already known to be a
 * `bigint` in 0..2^64 (JavaScript checked `BigInt.asUintN(64, id) === id`).
 * The hot path of js/api.js: no closure, no `Result` until a failure.
 * @param {number} h
 * @param {bigint} id
 * @returns {number}
 */
export function __decode(h, id) {
    const ret = wasm.__decode(h, id);
    return ret >>> 0;
}

/**
 * `layout.decode(id)` for any other argument: the ID conversion of every
 * other function (`bigint` outside 0..2^64, `string`, `number`, wrong types).
 * @param {number} h
 * @param {any} id
 * @returns {number}
 */
export function __decodeAny(h, id) {
    const ret = wasm.__decodeAny(h, id);
    return ret >>> 0;
}

/**
 * The exception for the last raw call that returned status 1.
 * @returns {any}
 */
export function __error() {
    const ret = wasm.__error();
    return ret;
}

/**
 * The layout argument of the free functions, as a `Layout` (a string is
 * parsed by the core; anything else is a `TypeError`).
 * @param {any} layout
 * @returns {Layout}
 */
export function __layoutArg(layout) {
    const ret = wasm.__layoutArg(layout);
    if (ret[2]) {
        throw takeFromExternrefTable0(ret[1]);
    }
    return Layout.__wrap(ret[0]);
}

/**
 * The module's `WebAssembly.Memory`, for the views of [`SCRATCH`].
 * @returns {any}
 */
export function __memory() {
    const ret = wasm.__memory();
    return ret;
}

/**
 * A handle for `layout` (equal layouts get the same one), for
 * [`raw_decode`]. js/api.js asks once per distinct layout; the registry
 * only grows (by one small entry per distinct layout ever decoded with).
 * @param {Layout} layout
 * @returns {number}
 */
export function __register(layout) {
    _assertClass(layout, Layout);
    const ret = wasm.__register(layout.__wbg_ptr);
    return ret >>> 0;
}

/**
 * The address of [`SCRATCH`] in the module's memory.
 * @returns {number}
 */
export function __scratch() {
    const ret = wasm.__scratch();
    return ret >>> 0;
}

/**
 * Builds an ID under `layout` from a time (Unix ms), a sequence value and node values.
 * @param {Layout | string} layout
 * @param {number} timestampMs
 * @param {number} sequence
 * @param {Record<string, number>} [nodes]
 * @returns {bigint}
 */
export function compose(layout, timestampMs, sequence, nodes) {
    const ret = wasm.compose(layout, timestampMs, sequence, isLikeNone(nodes) ? 0 : addToExternrefTable0(nodes));
    if (ret[2]) {
        throw takeFromExternrefTable0(ret[1]);
    }
    return BigInt.asUintN(64, ret[0]);
}

/**
 * The ID in `format`: `decimal`, `base32` or `base62`.
 * @param {IdLike} id
 * @param {'decimal' | 'base32' | 'base62'} format
 * @returns {string}
 */
export function formatId(id, format) {
    let deferred2_0;
    let deferred2_1;
    try {
        const ret = wasm.formatId(id, format);
        var ptr1 = ret[0];
        var len1 = ret[1];
        if (ret[3]) {
            ptr1 = 0; len1 = 0;
            throw takeFromExternrefTable0(ret[2]);
        }
        deferred2_0 = ptr1;
        deferred2_1 = len1;
        return getStringFromWasm0(ptr1, len1);
    } finally {
        wasm.__wbindgen_free(deferred2_0, deferred2_1, 1);
    }
}

/**
 * Reads a Crockford base32 ID (case-insensitive; `I`/`L` read as 1, `O` as 0).
 * @param {string} s
 * @returns {bigint}
 */
export function fromBase32(s) {
    const ret = wasm.fromBase32(s);
    if (ret[2]) {
        throw takeFromExternrefTable0(ret[1]);
    }
    return BigInt.asUintN(64, ret[0]);
}

/**
 * Reads a base62 ID.
 * @param {string} s
 * @returns {bigint}
 */
export function fromBase62(s) {
    const ret = wasm.fromBase62(s);
    if (ret[2]) {
        throw takeFromExternrefTable0(ret[1]);
    }
    return BigInt.asUintN(64, ret[0]);
}

/**
 * The smallest and largest IDs under `layout` of the time unit holding `timestampMs`.
 * @param {Layout | string} layout
 * @param {number} timestampMs
 * @returns {[bigint, bigint]}
 */
export function idBounds(layout, timestampMs) {
    const ret = wasm.idBounds(layout, timestampMs);
    if (ret[2]) {
        throw takeFromExternrefTable0(ret[1]);
    }
    return takeFromExternrefTable0(ret[0]);
}

/**
 * Reads an ID written in `format`: `decimal`, `base32` or `base62`.
 * @param {string} s
 * @param {'decimal' | 'base32' | 'base62'} format
 * @returns {bigint}
 */
export function parseId(s, format) {
    const ret = wasm.parseId(s, format);
    if (ret[2]) {
        throw takeFromExternrefTable0(ret[1]);
    }
    return BigInt.asUintN(64, ret[0]);
}

/**
 * The ID in Crockford base32: 13 characters, upper case, sorts like the number.
 * @param {IdLike} id
 * @returns {string}
 */
export function toBase32(id) {
    let deferred2_0;
    let deferred2_1;
    try {
        const ret = wasm.toBase32(id);
        var ptr1 = ret[0];
        var len1 = ret[1];
        if (ret[3]) {
            ptr1 = 0; len1 = 0;
            throw takeFromExternrefTable0(ret[2]);
        }
        deferred2_0 = ptr1;
        deferred2_1 = len1;
        return getStringFromWasm0(ptr1, len1);
    } finally {
        wasm.__wbindgen_free(deferred2_0, deferred2_1, 1);
    }
}

/**
 * The ID in base62 (`0-9A-Za-z`): 11 characters, sorts like the number.
 * @param {IdLike} id
 * @returns {string}
 */
export function toBase62(id) {
    let deferred2_0;
    let deferred2_1;
    try {
        const ret = wasm.toBase62(id);
        var ptr1 = ret[0];
        var len1 = ret[1];
        if (ret[3]) {
            ptr1 = 0; len1 = 0;
            throw takeFromExternrefTable0(ret[2]);
        }
        deferred2_0 = ptr1;
        deferred2_1 = len1;
        return getStringFromWasm0(ptr1, len1);
    } finally {
        wasm.__wbindgen_free(deferred2_0, deferred2_1, 1);
    }
}
function __wbg_get_imports() {
    const import0 = {
        __proto__: null,
        __wbg_String_1a31373771f42008: function(arg0, arg1) {
            const ret = String(arg1);
            const ptr1 = passStringToWasm0(ret, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            const len1 = WASM_VECTOR_LEN;
            getDataViewMemory0().setInt32((arg0 >>> 0) + 4 * 1, len1, true);
            getDataViewMemory0().setInt32((arg0 >>> 0) + 4 * 0, ptr1, true);
        },
        __wbg___snowmintSelect_75d1b8732e4b66f1: function() { return handleError(function (arg0) {
            arg0.__snowmintSelect();
        }, arguments); },
        __wbg___wbindgen_is_undefined_be5b34249ff1fc15: function(arg0) {
            const ret = arg0 === undefined;
            return ret;
        },
        __wbg___wbindgen_lt_0e30ec898d8dffe8: function(arg0, arg1) {
            const ret = arg0 < arg1;
            return ret;
        },
        __wbg___wbindgen_memory_17a1178bc3328ea3: function() {
            const ret = wasm.memory;
            return ret;
        },
        __wbg___wbindgen_string_get_7ce8eee7fd327545: function(arg0, arg1) {
            const obj = arg1;
            const ret = typeof(obj) === 'string' ? obj : undefined;
            var ptr1 = isLikeNone(ret) ? 0 : passStringToWasm0(ret, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            var len1 = WASM_VECTOR_LEN;
            getDataViewMemory0().setInt32((arg0 >>> 0) + 4 * 1, len1, true);
            getDataViewMemory0().setInt32((arg0 >>> 0) + 4 * 0, ptr1, true);
        },
        __wbg___wbindgen_throw_4c88d8bf264fd984: function(arg0, arg1) {
            throw new Error(getStringFromWasm0(arg0, arg1));
        },
        __wbg_columns_a8e7ace80a4c0547: function(arg0, arg1, arg2, arg3, arg4) {
            const ret = arg0.columns(getArrayF64FromWasm0(arg1, arg2), arg3 >>> 0, arg4);
            return ret;
        },
        __wbg_getRandomValues_a7a18e5ac1a7fd17: function() { return handleError(function (arg0, arg1) {
            const ret = arg0.getRandomValues(arg1);
            return ret;
        }, arguments); },
        __wbg_get_2080c49015e35254: function() { return handleError(function (arg0, arg1) {
            const ret = Reflect.get(arg0, arg1);
            return ret;
        }, arguments); },
        __wbg_get_index_bba57111ae9b9ed4: function(arg0, arg1) {
            const ret = arg0[arg1 >>> 0];
            return ret;
        },
        __wbg_get_unchecked_e6325ad374eff861: function(arg0, arg1) {
            const ret = arg0[arg1 >>> 0];
            return ret;
        },
        __wbg_idResult_a70a8a5a2ba257d4: function(arg0) {
            const ret = idResult(BigInt.asUintN(64, arg0));
            return ret;
        },
        __wbg_instanceof_BigUint64Array_b7138a187432f337: function(arg0) {
            let result;
            try {
                result = arg0 instanceof BigUint64Array;
            } catch (_) {
                result = false;
            }
            const ret = result;
            return ret;
        },
        __wbg_instanceof_Float64Array_4acace5b49aaf791: function(arg0) {
            let result;
            try {
                result = arg0 instanceof Float64Array;
            } catch (_) {
                result = false;
            }
            const ret = result;
            return ret;
        },
        __wbg_keys_105f5c0857898f84: function(arg0) {
            const ret = Object.keys(arg0);
            return ret;
        },
        __wbg_length_5a8bb8abe1e54e15: function(arg0) {
            const ret = arg0.length;
            return ret;
        },
        __wbg_length_b03a0fabb109b1e9: function(arg0) {
            const ret = arg0.length;
            return ret;
        },
        __wbg_length_f44a8927f9058599: function(arg0) {
            const ret = arg0.length;
            return ret;
        },
        __wbg_makeError_25fbe879df49ffda: function(arg0, arg1, arg2, arg3, arg4) {
            const ret = makeError(arg0 >>> 0, getStringFromWasm0(arg1, arg2), getStringFromWasm0(arg3, arg4));
            return ret;
        },
        __wbg_new_37eb45aaf5eeb820: function() {
            const ret = new Array();
            return ret;
        },
        __wbg_new_a6dbc3873ebac649: function(arg0, arg1) {
            const ret = new Shape(getStringFromWasm0(arg0, arg1));
            return ret;
        },
        __wbg_new_cd4348290afae586: function() {
            const ret = new Object();
            return ret;
        },
        __wbg_new_with_length_00818aa0a226a550: function(arg0) {
            const ret = new Uint32Array(arg0 >>> 0);
            return ret;
        },
        __wbg_now_463ac581d2fc7ea3: function() {
            const ret = Date.now();
            return ret;
        },
        __wbg_pair_1dd2396656ebfc53: function(arg0, arg1) {
            const ret = pair(BigInt.asUintN(64, arg0), BigInt.asUintN(64, arg1));
            return ret;
        },
        __wbg_prototypesetcall_991a3d9a5b981243: function(arg0, arg1, arg2) {
            BigUint64Array.prototype.set.call(getArrayU64FromWasm0(arg0, arg1), arg2);
        },
        __wbg_push_c9f4893fc209f768: function(arg0, arg1) {
            const ret = arg0.push(arg1);
            return ret;
        },
        __wbg_random_df36b90cd78a7d54: function() {
            const ret = Math.random();
            return ret;
        },
        __wbg_set_1e52975a1ddf5b71: function(arg0, arg1, arg2) {
            const ret = Reflect.set(arg0, arg1, arg2);
            return ret;
        },
        __wbg_set_c8e6162384817a76: function(arg0, arg1, arg2) {
            const ret = Reflect.set(arg0, arg1, arg2);
            return ret;
        },
        __wbg_static_accessor_CRYPTO_76142485172cc0b0: function() {
            const ret = typeof globalThis === 'undefined' ? undefined : globalThis?.crypto;
            return isLikeNone(ret) ? 0 : addToExternrefTable0(ret);
        },
        __wbindgen_generic_0000000000000001: function(arg0) {
            // Cast intrinsic for `F64 -> Externref`.
            const ret = arg0;
            return ret;
        },
        __wbindgen_generic_0000000000000002: function(arg0, arg1) {
            // Cast intrinsic for `Ref(String) -> Externref`.
            const ret = getStringFromWasm0(arg0, arg1);
            return ret;
        },
        __wbindgen_init_externref_table: function() {
            const table = wasm.__wbindgen_externrefs;
            table.set(0, undefined);
            table.set(1024, undefined);
            table.set(1025, null);
            table.set(1026, true);
            table.set(1027, false);
        },
    };
    return {
        __proto__: null,
        "./snowmint_wasm_bg.js": import0,
        "./snippets/snowmint-wasm-7290618f7e0470cc/js/glue.js": import1,
        "./snippets/snowmint-wasm-7290618f7e0470cc/js/glue.js": import2,
        "./snippets/snowmint-wasm-7290618f7e0470cc/js/glue.js": import3,
        "./snippets/snowmint-wasm-7290618f7e0470cc/js/glue.js": import4,
    };
}

const GeneratorFinalization = (typeof FinalizationRegistry === 'undefined')
    ? { register: () => {}, unregister: () => {} }
    : new FinalizationRegistry(ptr => wasm.__wbg_generator_free(ptr, 1));
const LayoutFinalization = (typeof FinalizationRegistry === 'undefined')
    ? { register: () => {}, unregister: () => {} }
    : new FinalizationRegistry(ptr => wasm.__wbg_layout_free(ptr, 1));
const PureGeneratorFinalization = (typeof FinalizationRegistry === 'undefined')
    ? { register: () => {}, unregister: () => {} }
    : new FinalizationRegistry(ptr => wasm.__wbg_puregenerator_free(ptr, 1));

function addToExternrefTable0(obj) {
    const idx = wasm.__externref_table_alloc();
    wasm.__wbindgen_externrefs.set(idx, obj);
    return idx;
}

function _assertClass(instance, klass) {
    if (!(instance instanceof klass)) {
        throw new Error(`expected instance of ${klass.name}`);
    }
}

function getArrayF64FromWasm0(ptr, len) {
    ptr = ptr >>> 0;
    return getFloat64ArrayMemory0().subarray(ptr / 8, ptr / 8 + len);
}

function getArrayJsValueFromWasm0(ptr, len) {
    ptr = ptr >>> 0;
    const mem = getDataViewMemory0();
    const result = [];
    for (let i = ptr; i < ptr + 4 * len; i += 4) {
        result.push(wasm.__wbindgen_externrefs.get(mem.getUint32(i, true)));
    }
    wasm.__externref_drop_slice(ptr, len);
    return result;
}

function getArrayU64FromWasm0(ptr, len) {
    ptr = ptr >>> 0;
    return getBigUint64ArrayMemory0().subarray(ptr / 8, ptr / 8 + len);
}

let cachedBigUint64ArrayMemory0 = null;
function getBigUint64ArrayMemory0() {
    if (cachedBigUint64ArrayMemory0 === null || cachedBigUint64ArrayMemory0.byteLength === 0) {
        cachedBigUint64ArrayMemory0 = new BigUint64Array(wasm.memory.buffer);
    }
    return cachedBigUint64ArrayMemory0;
}

let cachedDataViewMemory0 = null;
function getDataViewMemory0() {
    if (cachedDataViewMemory0 === null || cachedDataViewMemory0.buffer.detached === true || (cachedDataViewMemory0.buffer.detached === undefined && cachedDataViewMemory0.buffer !== wasm.memory.buffer)) {
        cachedDataViewMemory0 = new DataView(wasm.memory.buffer);
    }
    return cachedDataViewMemory0;
}

let cachedFloat64ArrayMemory0 = null;
function getFloat64ArrayMemory0() {
    if (cachedFloat64ArrayMemory0 === null || cachedFloat64ArrayMemory0.byteLength === 0) {
        cachedFloat64ArrayMemory0 = new Float64Array(wasm.memory.buffer);
    }
    return cachedFloat64ArrayMemory0;
}

function getStringFromWasm0(ptr, len) {
    ptr = ptr >>> 0;
    return decodeText(getUint8ArrayMemory0().subarray(ptr, ptr + len));
}

let cachedUint8ArrayMemory0 = null;
function getUint8ArrayMemory0() {
    if (cachedUint8ArrayMemory0 === null || cachedUint8ArrayMemory0.byteLength === 0) {
        cachedUint8ArrayMemory0 = new Uint8Array(wasm.memory.buffer);
    }
    return cachedUint8ArrayMemory0;
}

function handleError(f, args) {
    try {
        return f.apply(this, args);
    } catch (e) {
        const idx = addToExternrefTable0(e);
        wasm.__wbindgen_exn_store(idx);
    }
}

function isLikeNone(x) {
    return x === undefined || x === null;
}

function passStringToWasm0(arg, malloc, realloc) {
    if (realloc === undefined) {
        const buf = cachedTextEncoder.encode(arg);
        const ptr = malloc(buf.length, 1) >>> 0;
        getUint8ArrayMemory0().subarray(ptr, ptr + buf.length).set(buf);
        WASM_VECTOR_LEN = buf.length;
        return ptr;
    }

    let len = arg.length;
    let ptr = malloc(len, 1) >>> 0;

    const mem = getUint8ArrayMemory0();

    let offset = 0;

    for (; offset < len; offset++) {
        const code = arg.charCodeAt(offset);
        if (code > 0x7F) break;
        mem[ptr + offset] = code;
    }
    if (offset !== len) {
        if (offset !== 0) {
            arg = arg.slice(offset);
        }
        ptr = realloc(ptr, len, len = offset + arg.length * 3, 1) >>> 0;
        const view = getUint8ArrayMemory0().subarray(ptr + offset, ptr + len);
        const ret = cachedTextEncoder.encodeInto(arg, view);

        offset += ret.written;
        ptr = realloc(ptr, len, offset, 1) >>> 0;
    }

    WASM_VECTOR_LEN = offset;
    return ptr;
}

function takeFromExternrefTable0(idx) {
    const value = wasm.__wbindgen_externrefs.get(idx);
    wasm.__externref_table_dealloc(idx);
    return value;
}

let cachedTextDecoder = new TextDecoder('utf-8', { ignoreBOM: true });
cachedTextDecoder.decode();
const MAX_SAFARI_DECODE_BYTES = 2146435072;
let numBytesDecoded = 0;
function decodeText(bytes) {
    numBytesDecoded += bytes.length;
    if (numBytesDecoded >= MAX_SAFARI_DECODE_BYTES) {
        cachedTextDecoder = new TextDecoder('utf-8', { ignoreBOM: true });
        cachedTextDecoder.decode();
        numBytesDecoded = bytes.length;
    }
    return cachedTextDecoder.decode(bytes);
}

const cachedTextEncoder = new TextEncoder();

if (!('encodeInto' in cachedTextEncoder)) {
    cachedTextEncoder.encodeInto = function (arg, view) {
        const buf = cachedTextEncoder.encode(arg);
        view.set(buf);
        return {
            read: arg.length,
            written: buf.length
        };
    };
}

let WASM_VECTOR_LEN = 0;

let wasmModule, wasmInstance, wasm;
function __wbg_finalize_init(instance, module) {
    wasmInstance = instance;
    wasm = instance.exports;
    wasmModule = module;
    cachedBigUint64ArrayMemory0 = null;
    cachedDataViewMemory0 = null;
    cachedFloat64ArrayMemory0 = null;
    cachedUint8ArrayMemory0 = null;
    wasm.__wbindgen_start();
    return wasm;
}

async function __wbg_load(module, imports) {
    if (typeof Response === 'function' && module instanceof Response) {
        if (!module.ok) {
            throw new Error(`failed to fetch Wasm: ${module.status} ${module.statusText} fetching '${module.url}'`);
        }

        if (typeof WebAssembly.instantiateStreaming === 'function') {
            try {
                return await WebAssembly.instantiateStreaming(module, imports);
            } catch (e) {
                const validResponse = expectedResponseType(module.type);

                if (validResponse && module.headers.get('Content-Type') !== 'application/wasm') {
                    console.warn("`WebAssembly.instantiateStreaming` failed because your server does not serve Wasm with `application/wasm` MIME type. Falling back to `WebAssembly.instantiate` which is slower. Original error:\n", e);

                } else { throw e; }
            }
        }

        const bytes = await module.arrayBuffer();
        return await WebAssembly.instantiate(bytes, imports);
    } else {
        const instance = await WebAssembly.instantiate(module, imports);

        if (instance instanceof WebAssembly.Instance) {
            return { instance, module };
        } else {
            return instance;
        }
    }

    function expectedResponseType(type) {
        switch (type) {
            case 'basic': case 'cors': case 'default': return true;
        }
        return false;
    }
}

function initSync(module) {
    if (wasm !== undefined) return wasm;


    if (module !== undefined) {
        if (Object.getPrototypeOf(module) === Object.prototype) {
            ({module} = module)
        } else {
            console.warn('using deprecated parameters for `initSync()`; pass a single object instead')
        }
    }

    const imports = __wbg_get_imports();
    if (!(module instanceof WebAssembly.Module)) {
        module = new WebAssembly.Module(module);
    }
    const instance = new WebAssembly.Instance(module, imports);
    return __wbg_finalize_init(instance, module);
}

let __wbg_init_promise;
async function __wbg_init(module_or_path) {
    if (wasm !== undefined) return wasm;
    if (__wbg_init_promise === undefined) {
        __wbg_init_promise = __wbg_init_once(module_or_path);
        __wbg_init_promise.catch(() => { __wbg_init_promise = undefined; });
    }
    return __wbg_init_promise;
}

async function __wbg_init_once(module_or_path) {

    if (module_or_path !== undefined) {
        if (Object.getPrototypeOf(module_or_path) === Object.prototype) {
            ({module_or_path} = module_or_path)
        } else {
            console.warn('using deprecated parameters for the initialization function; pass a single object instead')
        }
    }

    if (module_or_path === undefined) {
        module_or_path = new URL('snowmint_wasm_bg.wasm', import.meta.url);
    }
    const imports = __wbg_get_imports();

    if (typeof module_or_path === 'string' || (typeof Request === 'function' && module_or_path instanceof Request) || (typeof URL === 'function' && module_or_path instanceof URL)) {
        module_or_path = fetch(module_or_path);
    }

    const { instance, module } = await __wbg_load(await module_or_path, imports);

    return __wbg_finalize_init(instance, module);
}

export { initSync, __wbg_init as default };

/* @ts-self-types="./snowmint_wasm.d.ts" */

/**
 * Pushes a bigint (`low` = `BigInt.asUintN(64, v)`, `lossless` = `low === v`).
 * @param {bigint} low
 * @param {boolean} negative
 * @param {boolean} lossless
 */
export function __argBigInt(low, negative, lossless) {
    wasm.__argBigInt(low, negative, lossless);
}

/**
 * Pushes a number.
 * @param {number} n
 */
export function __argNumber(n) {
    wasm.__argNumber(n);
}

/**
 * Pushes any other value: 0 `undefined`, 1 `null`, 2 an object with `n`
 * pairs following, 3 a `Layout` (handle `n`), 4 a `BigUint64Array` and 5 a
 * `Float64Array` (length `n`), anything else another value.
 * @param {number} kind
 * @param {number} n
 */
export function __argOther(kind, n) {
    wasm.__argOther(kind, n);
}

/**
 * Pushes a string.
 * @param {string} s
 */
export function __argString(s) {
    const ptr0 = passStringToWasm0(s, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
    const len0 = WASM_VECTOR_LEN;
    wasm.__argString(ptr0, len0);
}

/**
 * `Layout.decodeMany(ids, into?)`, first half: pushed `ids` and `into`;
 * checks them and makes room for `n` IDs, whose address is left in slot 1
 * of [`SCRATCH`] (js/api.js copies the IDs there), and the columns'
 * address and length in slots 2 and 3.
 * @param {number} h
 * @returns {number}
 */
export function __batch(h) {
    const ret = wasm.__batch(h);
    return ret >>> 0;
}

/**
 * `idBounds` (layout as for [`compose`]): pushed the time; the bounds in
 * slots 0 and 1.
 * @param {number} h
 * @returns {number}
 */
export function __bounds(h) {
    const ret = wasm.__bounds(h);
    return ret >>> 0;
}

/**
 * The core's error codes, comma-separated, in `ALL_CODES` order.
 * @returns {string}
 */
export function __codes() {
    let deferred1_0;
    let deferred1_1;
    try {
        const ret = wasm.__codes();
        deferred1_0 = ret[0];
        deferred1_1 = ret[1];
        return getStringFromWasm0(ret[0], ret[1]);
    } finally {
        wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
    }
}

/**
 * `compose` (layout handle `h`, or pushed when `h` is `u32::MAX`): pushed
 * the time, the sequence and the nodes; the ID in slot 0.
 * @param {number} h
 * @returns {number}
 */
export function __compose(h) {
    const ret = wasm.__compose(h);
    return ret >>> 0;
}

/**
 * `layout.decode(id)` (layout handle `h`) for an ID already known to be a
 * `bigint` in 0..2^64 (js/api.js checked `BigInt.asUintN(64, id) === id`).
 * The hot path: no pushed arguments, no `Result` until a failure.
 * @param {number} h
 * @param {bigint} id
 * @returns {number}
 */
export function __decode(h, id) {
    const ret = wasm.__decode(h, id);
    return ret >>> 0;
}

/**
 * `decode`: pushed the layout (handle `h` when `h` is not `u32::MAX`) and
 * the ID.
 * @param {number} h
 * @returns {number}
 */
export function __decodeAny(h) {
    const ret = wasm.__decodeAny(h);
    return ret >>> 0;
}

/**
 * `Layout.decodeMany`, second half: decodes the IDs js/api.js copied in
 * into columns (timestamps, sequences, then each node field: the core's
 * `decompose_columns`). An ID that does not fit the layout is an
 * `invalid_id` error naming its index.
 * @param {number} h
 * @returns {number}
 */
export function __decodeMany(h) {
    const ret = wasm.__decodeMany(h);
    return ret >>> 0;
}

/**
 * `toBase32` (0), `toBase62` (1), `formatId` (2: pushed the format after the
 * ID): pushed the ID; the string for `__text`.
 * @param {number} how
 * @returns {number}
 */
export function __format(how) {
    const ret = wasm.__format(how);
    return ret >>> 0;
}

/**
 * Frees generator `g` (js/api.js's object was collected).
 * @param {number} g
 */
export function __genFree(g) {
    wasm.__genFree(g);
}

/**
 * The layout handle of generator `g` in slot 1.
 * @param {number} g
 * @returns {number}
 */
export function __genLayout(g) {
    const ret = wasm.__genLayout(g);
    return ret >>> 0;
}

/**
 * `new Generator(layout, nodes?, options?)` (`pure` 0) or `new
 * PureGenerator(...)` (`pure` 1): pushed the three arguments. `random` is
 * the seed of `random:N` sequence starts when the options give none (or
 * 0), for `Generator` only: js/api.js takes it from
 * `crypto.getRandomValues` (or `Math.random` where there is no Web Crypto);
 * the core would fall back to std's hash keys, which are fixed on
 * `wasm32-unknown-unknown`. `PureGenerator` uses the seed as given. The
 * generator's handle in slot 1.
 * @param {number} pure
 * @param {bigint} random
 * @returns {number}
 */
export function __genNew(pure, random) {
    const ret = wasm.__genNew(pure, random);
    return ret >>> 0;
}

/**
 * `generator.nextId()` (`as_string` 0: the ID in slot 0) or
 * `nextIdString()` (1: the decimal string for `__text`). Waits (spinning on
 * `Date.now()`) when a policy says to wait, at most for the few time units
 * the policy allows.
 * @param {number} g
 * @param {number} as_string
 * @returns {number}
 */
export function __genNext(g, as_string) {
    const ret = wasm.__genNext(g, as_string);
    return ret >>> 0;
}

/**
 * `generator.nextIds(n)`: pushed `n`; the IDs in the batch buffer, its
 * address in slot 1 and the count in slot 2.
 * @param {number} g
 * @returns {number}
 */
export function __genNextIds(g) {
    const ret = wasm.__genNextIds(g);
    return ret >>> 0;
}

/**
 * `Layout.preset` (0), `Layout.fromJson` (1), `Layout.parse` (2), or any
 * layout argument (3: a `Layout` or a string): pushed the argument; the
 * layout's handle in slot 1 of [`SCRATCH`].
 * @param {number} how
 * @returns {number}
 */
export function __layout(how) {
    const ret = wasm.__layout(how);
    return ret >>> 0;
}

/**
 * Layout `h`'s numbers: slot 0 `maxId` (`u64`), slots 1.. `epochMs`,
 * `timeUnitMs`, `totalBits`, `timeEndMs`, `i64EndMs`, `jsSafeEndMs`.
 * @param {number} h
 * @returns {number}
 */
export function __layoutNumbers(h) {
    const ret = wasm.__layoutNumbers(h);
    return ret >>> 0;
}

/**
 * Layout `h`'s strings: 0 its canonical JSON, 1 its preset name (empty for
 * none), 2 its fields (`name bits shift kind`, comma-separated), 3 the
 * preset names (comma-separated; `h` unused).
 * @param {number} h
 * @param {number} what
 * @returns {string}
 */
export function __layoutText(h, what) {
    let deferred1_0;
    let deferred1_1;
    try {
        const ret = wasm.__layoutText(h, what);
        deferred1_0 = ret[0];
        deferred1_1 = ret[1];
        return getStringFromWasm0(ret[0], ret[1]);
    } finally {
        wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
    }
}

/**
 * The module's `WebAssembly.Memory`, for the views of [`SCRATCH`] and the
 * batch buffers.
 * @returns {any}
 */
export function __memory() {
    const ret = wasm.__memory();
    return ret;
}

/**
 * The message of the last failed operation.
 * @returns {string}
 */
export function __message() {
    let deferred1_0;
    let deferred1_1;
    try {
        const ret = wasm.__message();
        deferred1_0 = ret[0];
        deferred1_1 = ret[1];
        return getStringFromWasm0(ret[0], ret[1]);
    } finally {
        wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
    }
}

/**
 * `fromBase32` (0), `fromBase62` (1), `parseId` (2: pushed the format after
 * the string): pushed the string; the ID in slot 0.
 * @param {number} how
 * @returns {number}
 */
export function __parse(how) {
    const ret = wasm.__parse(how);
    return ret >>> 0;
}

/**
 * `layout.isPlausible(id, nowMs)`: pushed both; 1 or 0 in slot 1.
 * @param {number} h
 * @returns {number}
 */
export function __plausible(h) {
    const ret = wasm.__plausible(h);
    return ret >>> 0;
}

/**
 * `pureGenerator.next(nowMs)`: pushed the time. Status 0 with the ID in
 * slot 0, or status 0 with the time to retry at in slot 1 and 1 in slot 2.
 * @param {number} g
 * @returns {number}
 */
export function __pureNext(g) {
    const ret = wasm.__pureNext(g);
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
 * The last string result (`toBase32`, `nextIdString`...).
 * @returns {string}
 */
export function __text() {
    let deferred1_0;
    let deferred1_1;
    try {
        const ret = wasm.__text();
        deferred1_0 = ret[0];
        deferred1_1 = ret[1];
        return getStringFromWasm0(ret[0], ret[1]);
    } finally {
        wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
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
        __wbg___wbindgen_memory_17a1178bc3328ea3: function() {
            const ret = wasm.memory;
            return ret;
        },
        __wbg___wbindgen_throw_4c88d8bf264fd984: function(arg0, arg1) {
            throw new Error(getStringFromWasm0(arg0, arg1));
        },
        __wbg_now_c6967710652e1b08: function() {
            const ret = Date.now();
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
    };
}

let cachedDataViewMemory0 = null;
function getDataViewMemory0() {
    if (cachedDataViewMemory0 === null || cachedDataViewMemory0.buffer.detached === true || (cachedDataViewMemory0.buffer.detached === undefined && cachedDataViewMemory0.buffer !== wasm.memory.buffer)) {
        cachedDataViewMemory0 = new DataView(wasm.memory.buffer);
    }
    return cachedDataViewMemory0;
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
    cachedDataViewMemory0 = null;
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

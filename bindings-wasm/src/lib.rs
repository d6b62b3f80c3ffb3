//! The WebAssembly binding of snowmint (wasm-bindgen): the browser and Node
//! package, and the engine of the decoder page (`www/`).
//!
//! A thin layer: it converts JavaScript values to the core's types and back,
//! and core errors to JavaScript errors. Every rule about IDs, layouts and
//! generation lives in the core (`snowmint`); nothing here re-implements one.
//! It exports exactly the API of the native Node package (`bindings-node/`),
//! and the one shared suite in `tests/js/` drives both.
//!
//! Conventions of the JavaScript API:
//! - IDs are `bigint` out, and `bigint`, decimal `string` or safe-integer
//!   `number` in. wasm-bindgen would wrap a `u64` argument modulo 2^64, so
//!   every ID arrives as a `JsValue` and is range-checked by the core
//!   (`Id::from_bigint`, `Id::from_f64`, `Id::parse`), never wrapped or
//!   rounded.
//! - A core error becomes an `Error` whose `code` is the core's code
//!   (`Error::code`, the cross-language contract). An argument of the wrong
//!   type becomes a `TypeError`, a number out of its range a `RangeError`;
//!   both carry a `code` too (see [`Fail`]).
//! - Nothing here may panic on input: on `wasm32-unknown-unknown` a panic
//!   aborts the module (an `unreachable` trap), which would leave it unusable.
//!
//! std's clock panics on `wasm32-unknown-unknown`, so the generator runs on
//! [`DateClock`] (`Date.now()`) through `SyncGenerator::with_clock`.

use js_sys::{Array, BigUint64Array, Float64Array, Object};
use snowmint::{Clock, FieldKind, Format, Id, Next, Nodes, Options, SyncGenerator};
use std::cell::{Cell, OnceCell, RefCell, UnsafeCell};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

// A small allocator: about 1 KB of code instead of dlmalloc's 7 KB (the
// module is over its size budget; its allocations are few and short-lived,
// a free list's slower search does not show in the benchmarks).
// `AssumeSingleThreaded` is sound here: the module is built without the
// atomics feature, so an instance never runs on two threads (each worker has
// its own instance and memory).
#[cfg(target_arch = "wasm32")]
#[global_allocator]
// SAFETY: see above.
static ALLOCATOR: lol_alloc::AssumeSingleThreaded<lol_alloc::FreeListAllocator> =
    unsafe { lol_alloc::AssumeSingleThreaded::new(lol_alloc::FreeListAllocator::new()) };

// The JavaScript half of the conversions: see js/glue.js for why.
#[wasm_bindgen(module = "/js/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = kindOf)]
    fn kind_of(v: &JsValue) -> u32;
    #[wasm_bindgen(js_name = lowBits)]
    fn low_bits(v: &JsValue) -> u64;
    #[wasm_bindgen(js_name = numberOf)]
    fn number_of(v: &JsValue) -> f64;

    /// Builds Parts objects for one list of node field names.
    type Shape;
    #[wasm_bindgen(constructor)]
    fn new(names: &str) -> Shape;
    /// `{ timestampMs, sequence, nodes: { [field]: column } }` from a
    /// buffer of `2 + node count` columns of `n` values, copied once (into
    /// `into` when given).
    #[wasm_bindgen(method)]
    fn columns(this: &Shape, buf: &[f64], n: u32, into: Option<Float64Array>) -> Object;

    #[wasm_bindgen(js_name = makeError)]
    fn make_error(kind: u32, code: &str, message: &str) -> JsValue;
    #[wasm_bindgen(js_name = idResult)]
    fn id_result(id: u64) -> Object;
    #[wasm_bindgen(js_name = retryResult)]
    fn retry_result(ms: f64) -> Object;
    fn pair(lo: u64, hi: u64) -> Array;
}

/// What [`kind_of`] reports.
mod kind {
    pub const U64: u32 = 0;
    pub const BIGINT: u32 = 1;
    pub const NUMBER: u32 = 2;
    pub const STRING: u32 = 3;
    pub const NULLISH: u32 = 4;
    pub const OBJECT: u32 = 5;
}

#[wasm_bindgen]
extern "C" {
    // Typed forms of `Reflect.set`, for `Layout.fields` (not on a hot path):
    // numbers cross the boundary as plain f64 instead of being boxed into a
    // `JsValue` first.
    #[wasm_bindgen(js_namespace = Reflect, js_name = set)]
    fn set_f64(target: &Object, key: &JsValue, value: f64) -> bool;
    #[wasm_bindgen(js_namespace = Reflect, js_name = set)]
    fn set_val(target: &Object, key: &JsValue, value: &JsValue) -> bool;

    /// `String(n)`.
    #[wasm_bindgen(js_name = String)]
    fn number_to_string(n: f64) -> String;

    /// Anything passed where a `Layout` is expected.
    type LayoutLike;
    /// `Layout.prototype.__snowmintSelect` (below): a real `Layout` puts its
    /// value in [`SELECTED`]. wasm-bindgen can hand a class instance to Rust
    /// only by taking it away from JavaScript, so a borrowed `Layout`
    /// argument is read by calling this method on it instead.
    #[wasm_bindgen(method, catch, js_name = __snowmintSelect)]
    fn select(this: &LayoutLike) -> Result<(), JsValue>;

    /// `globalThis.crypto` when there is one (browsers, Node >= 19).
    type Crypto;
    #[wasm_bindgen(thread_local_v2, js_namespace = globalThis, js_name = crypto)]
    static CRYPTO: Option<Crypto>;
    #[wasm_bindgen(method, catch, js_name = getRandomValues)]
    fn get_random_values(this: &Crypto, buf: &js_sys::Uint32Array) -> Result<JsValue, JsValue>;
}

thread_local! {
    /// Where `Layout.__snowmintSelect` leaves its layout (see [`LayoutLike`]).
    static SELECTED: Cell<Option<snowmint::Layout>> = const { Cell::new(None) };
    /// The failure of the last raw call that returned a non-zero status
    /// (see [`take_error`]).
    static LAST_ERROR: RefCell<Option<Fail>> = const { RefCell::new(None) };
}

// ---- errors -----------------------------------------------------------------

/// Why a call failed, before it becomes a JavaScript exception. Every failure
/// of this binding becomes a `JsValue` in one place (`From<Fail> for
/// JsValue`): the one place errors are mapped.
enum Fail {
    /// A core error: an `Error` whose `code` is [`snowmint::Error::code`].
    ///
    /// The core's `Error` is `#[non_exhaustive]`, so no match can list every
    /// variant; none is needed, because JavaScript has one error form for all
    /// of them and the code comes from the core itself. The shared suite
    /// (`tests/js/`) provokes every code of `vectors/codes.json` through this
    /// path, so a new core variant is covered the day it gets a vector.
    Core(snowmint::Error),
    /// An argument of the wrong JavaScript type: a `TypeError` with `code`.
    Type(&'static str, String),
    /// A number that is not acceptable (negative, fractional, not a safe
    /// integer, a BigInt outside 0..2^64): a `RangeError` with `code`.
    Range(&'static str, String),
    /// A core error with a message of the binding's (naming an index): an
    /// `Error` with `code`.
    Plain(&'static str, String),
}

impl From<snowmint::Error> for Fail {
    fn from(e: snowmint::Error) -> Fail {
        Fail::Core(e)
    }
}

impl Fail {
    /// A core error about a number's range (from `Id::from_f64` or
    /// `Id::from_bigint`): a `RangeError` with the core's code and message.
    fn range(e: snowmint::Error) -> Fail {
        Fail::Range(e.code(), e.to_string())
    }
}

impl From<Fail> for JsValue {
    fn from(f: Fail) -> JsValue {
        match f {
            Fail::Core(e) => make_error(0, e.code(), &e.to_string()),
            Fail::Type(code, msg) => make_error(1, code, &msg),
            Fail::Range(code, msg) => make_error(2, code, &msg),
            Fail::Plain(code, msg) => make_error(0, code, &msg),
        }
    }
}

type Res<T> = Result<T, Fail>;

/// What the exported functions return: `Err` is thrown by wasm-bindgen.
type JsResult<T> = Result<T, JsValue>;

// ---- arguments ----------------------------------------------------------------

/// An optional argument: `undefined` (or `null`) arrives as `None`.
fn or_undefined(v: Option<JsValue>) -> JsValue {
    v.unwrap_or(JsValue::UNDEFINED)
}

/// The largest integer a JavaScript number holds exactly (2^53 - 1).
const MAX_SAFE: f64 = 9007199254740991.0;

/// An ID argument: `bigint`, decimal `string` or safe-integer `number`.
fn id_arg(v: &JsValue) -> Res<u64> {
    match kind_of(v) {
        kind::U64 => return Ok(low_bits(v)),
        kind::BIGINT => return bigint_arg(v),
        kind::NUMBER => return Id::from_f64(number_of(v)).map(Id::get).map_err(Fail::range),
        kind::STRING => {
            let s = v.as_string().unwrap_or_default();
            return Ok(Id::parse(&s, Format::Decimal)?.get());
        }
        _ => {}
    }
    Err(Fail::Type(
        "invalid_id",
        "an ID must be a bigint, a decimal string or a safe integer number".into(),
    ))
}

/// A BigInt whose low 64 bits are not its whole value (negative, or 2^64 or
/// more): the core decides, from what an engine reports for a BigInt (its
/// sign, its low 64 bits, and that they are not the whole value), which
/// `invalid_id` `RangeError` it is. Never wrapped.
fn bigint_arg(v: &JsValue) -> Res<u64> {
    let negative = v.lt(&JsValue::from_f64(0.0));
    Id::from_bigint(negative, low_bits(v), false)
        .map(Id::get)
        .map_err(Fail::range)
}

/// A `number` argument that must be a non-negative safe integer (a time, a
/// sequence or node value, a count). `code` is the core code whose meaning
/// fits the argument; `negative_code` is used for negative numbers.
fn uint_arg(v: &JsValue, what: &str, code: &'static str, negative_code: &'static str) -> Res<u64> {
    if kind_of(v) != kind::NUMBER {
        return Err(Fail::Type(code, [what, " must be a number"].concat()));
    }
    let n = number_of(v);
    if n < 0.0 {
        return Err(Fail::Range(
            negative_code,
            [what, " must not be negative (got ", &js_number(n), ")"].concat(),
        ));
    }
    // `n as u64` saturates and truncates; the round trip shows whether `n`
    // was an integer (f64::trunc needs a libm on this target).
    if n.is_nan() || n > MAX_SAFE || (n as u64) as f64 != n {
        return Err(Fail::Range(
            code,
            [what, " must be a safe integer (got ", &js_number(n), ")"].concat(),
        ));
    }
    Ok(n as u64)
}

/// A number as JavaScript prints it. Rust's float formatting would add
/// about 20 KB to the module for a few error messages.
fn js_number(n: f64) -> String {
    number_to_string(n)
}

/// A time in Unix milliseconds.
fn time_arg(v: &JsValue) -> Res<u64> {
    uint_arg(v, "a time in Unix ms", "time_overflow", "time_before_epoch")
}

fn string_arg(v: &JsValue, what: &str, code: &'static str) -> Res<String> {
    match kind_of(v) {
        kind::STRING => v.as_string(),
        _ => None,
    }
    .ok_or_else(|| Fail::Type(code, [what, " must be a string"].concat()))
}

fn format_arg(v: &JsValue) -> Res<Format> {
    Ok(Format::from_name(&string_arg(
        v,
        "the format",
        "invalid_id",
    )?)?)
}

/// A `Layout` instance or a string for `Layout.parse` (preset name or JSON).
fn layout_arg(v: &JsValue) -> Res<snowmint::Layout> {
    let k = kind_of(v);
    if k == kind::STRING {
        let s = v.as_string().unwrap_or_default();
        return Ok(snowmint::Layout::parse(&s)?);
    }
    if k == kind::OBJECT {
        SELECTED.with(|s| s.set(None));
        let like: &LayoutLike = v.unchecked_ref();
        // An object without the method (or a freed Layout) throws: not a layout.
        if like.select().is_ok() {
            if let Some(l) = SELECTED.with(|s| s.take()) {
                return Ok(l);
            }
        }
    }
    Err(Fail::Type(
        "invalid_layout",
        "a layout must be a Layout or a string (a preset name or a JSON descriptor)".into(),
    ))
}

/// Node values from `{ fieldName: value }`; absent (`undefined`/`null`)
/// means none, which the core accepts only for layouts without node fields.
fn nodes_arg(layout: &snowmint::Layout, v: &JsValue) -> Res<Nodes> {
    let k = kind_of(v);
    if k == kind::NULLISH {
        return Ok(layout.nodes_from_pairs([])?);
    }
    if k != kind::OBJECT {
        return Err(Fail::Type(
            "unknown_field",
            "nodes must be an object of field name -> number".into(),
        ));
    }
    let obj: &Object = v.unchecked_ref();
    let names = Object::keys(obj);
    let mut pairs: Vec<(String, u64)> = Vec::with_capacity(names.length() as usize);
    for name in names.iter() {
        let name = name.as_string().unwrap_or_default();
        let value = js_sys::Reflect::get(obj, &JsValue::from_str(&name)).unwrap_or_default();
        let what = ["node field '", &name, "'"].concat();
        let value = uint_arg(&value, &what, "node_out_of_range", "node_out_of_range")?;
        pairs.push((name, value));
    }
    Ok(layout.nodes_from_pairs(pairs.iter().map(|(n, v)| (n.as_str(), *v)))?)
}

/// `GeneratorOptions`: policy strings pass through unchanged to the core.
/// Returns the options and whether a seed was given.
fn options_arg(v: &JsValue) -> Res<(Options, bool)> {
    let mut policies: [Option<String>; 3] = [None, None, None];
    let mut seed = None;
    let mut resume_after = None;
    if !v.is_undefined() {
        if kind_of(v) != kind::OBJECT {
            return Err(Fail::Type(
                "invalid_option",
                "options must be an object".into(),
            ));
        }
        let obj: &Object = v.unchecked_ref();
        for key in Object::keys(obj).iter() {
            let key = key.as_string().unwrap_or_default();
            let value = js_sys::Reflect::get(obj, &JsValue::from_str(&key)).unwrap_or_default();
            if value.is_undefined() {
                continue; // `{ seed: undefined }` is the same as no seed.
            }
            let slot = match key.as_str() {
                "clockBackwards" => Some(0),
                "sequenceExhausted" => Some(1),
                "sequenceStart" => Some(2),
                _ => None,
            };
            if let Some(i) = slot {
                policies[i] = Some(string_arg(&value, &key, "invalid_option")?);
                continue;
            }
            match key.as_str() {
                "seed" => {
                    // The seed reads like an ID, but a bad one is a bad option.
                    seed = Some(id_arg(&value).map_err(|e| match e {
                        Fail::Core(e) => {
                            Fail::Range("invalid_option", ["seed: ", &e.to_string()].concat())
                        }
                        Fail::Type(_, m) => Fail::Type("invalid_option", ["seed: ", &m].concat()),
                        Fail::Range(_, m) | Fail::Plain(_, m) => {
                            Fail::Range("invalid_option", ["seed: ", &m].concat())
                        }
                    })?)
                }
                "resumeAfter" => resume_after = Some(id_arg(&value)?),
                _ => {
                    return Err(Fail::Type(
                        "invalid_option",
                        [
                            "unknown option '",
                            &key,
                            "' (known: clockBackwards, sequenceExhausted, sequenceStart, seed, \
                             resumeAfter)",
                        ]
                        .concat(),
                    ))
                }
            }
        }
    }
    let [clock, exhausted, start] = &policies;
    let mut options =
        Options::from_policies(clock.as_deref(), exhausted.as_deref(), start.as_deref())?;
    options.seed = seed.unwrap_or(0);
    options.resume_after = resume_after;
    Ok((options, seed.is_some()))
}

/// A seed for `random:N` sequence starts when the caller gives none (or 0):
/// 64 bits from `crypto.getRandomValues`, or from `Math.random` where there
/// is no Web Crypto. The core would fall back to std's hash keys, which are
/// fixed on `wasm32-unknown-unknown`. Never 0 (0 means "pick one").
fn random_seed() -> u64 {
    let buf = js_sys::Uint32Array::new_with_length(2);
    let from_crypto = CRYPTO.with(|c| match c {
        Some(c) => c.get_random_values(&buf).is_ok(),
        None => false,
    });
    let (hi, lo) = if from_crypto {
        (buf.get_index(0) as u64, buf.get_index(1) as u64)
    } else {
        let word = || (js_sys::Math::random() * 4294967296.0) as u64;
        (word(), word())
    };
    ((hi << 32) | lo).max(1)
}

// ---- results ------------------------------------------------------------------

fn new_shape(layout: &snowmint::Layout) -> Shape {
    let names: Vec<&str> = layout.nodes().map(|f| f.name()).collect();
    Shape::new(&names.join(","))
}

fn bounds_array((lo, hi): (u64, u64)) -> Array {
    pair(lo, hi)
}

fn encode(id: u64, format: Format) -> String {
    let mut buf = [0u8; snowmint::MAX_STR_LEN];
    Id::new(id).encode(format, &mut buf).to_string()
}

// ---- Layout ---------------------------------------------------------------------

/// A layout: the epoch, the time unit, and the fields of an ID. Make one with
/// `Layout.preset`, `Layout.fromJson` or `Layout.parse`.
#[wasm_bindgen]
pub struct Layout {
    inner: snowmint::Layout,
    /// This layout's Parts builder, made on first use.
    shape: OnceCell<Shape>,
}

impl Layout {
    fn wrap(inner: snowmint::Layout) -> Layout {
        Layout {
            inner,
            shape: OnceCell::new(),
        }
    }
}

fn field_kind(k: FieldKind) -> &'static str {
    match k {
        FieldKind::Timestamp => "timestamp",
        FieldKind::Sequence => "sequence",
        FieldKind::Node => "node",
    }
}

#[wasm_bindgen]
impl Layout {
    /// A preset by name (`twitter`, `discord`, ... see `Layout.presets()`).
    pub fn preset(
        #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
    ) -> JsResult<Layout> {
        let name = string_arg(&name, "the preset name", "unknown_preset")?;
        Ok(Layout::wrap(
            snowmint::Layout::preset(&name).map_err(Fail::Core)?,
        ))
    }

    /// A layout from its JSON descriptor, e.g.
    /// `{"epoch_ms":0,"fields":[["timestamp",48],["sequence",16]]}`.
    #[wasm_bindgen(js_name = fromJson)]
    pub fn from_json(
        #[wasm_bindgen(unchecked_param_type = "string")] json: JsValue,
    ) -> JsResult<Layout> {
        let json = string_arg(&json, "the JSON descriptor", "invalid_layout")?;
        Ok(Layout::wrap(
            snowmint::Layout::from_json(&json).map_err(Fail::Core)?,
        ))
    }

    /// A preset name or a JSON descriptor (a string starting with `{` or `"`).
    pub fn parse(#[wasm_bindgen(unchecked_param_type = "string")] s: JsValue) -> JsResult<Layout> {
        let s = string_arg(&s, "the layout", "invalid_layout")?;
        Ok(Layout::wrap(
            snowmint::Layout::parse(&s).map_err(Fail::Core)?,
        ))
    }

    /// The preset names, in a fixed order.
    pub fn presets() -> Vec<String> {
        snowmint::Layout::PRESETS
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    /// The canonical JSON descriptor.
    #[wasm_bindgen(js_name = toJson)]
    pub fn to_json(&self) -> String {
        self.inner.to_json()
    }

    /// The epoch, Unix milliseconds.
    #[wasm_bindgen(getter = epochMs)]
    pub fn epoch_ms(&self) -> f64 {
        self.inner.epoch_ms() as f64
    }

    /// The length of one time unit, in milliseconds.
    #[wasm_bindgen(getter = timeUnitMs)]
    pub fn time_unit_ms(&self) -> f64 {
        self.inner.time_unit_ms() as f64
    }

    /// The width of an ID in bits (at most 64).
    #[wasm_bindgen(getter = totalBits)]
    pub fn total_bits(&self) -> u32 {
        self.inner.total_bits()
    }

    /// The largest ID of the layout.
    #[wasm_bindgen(getter = maxId)]
    pub fn max_id(&self) -> u64 {
        self.inner.max_id()
    }

    /// The name of the preset equal to this layout, or `null`.
    #[wasm_bindgen(getter = presetName, unchecked_return_type = "string | null")]
    pub fn preset_name(&self) -> JsValue {
        match self.inner.preset_name() {
            Some(n) => JsValue::from_str(n),
            None => JsValue::NULL,
        }
    }

    /// The fields, most significant first: `{ name, bits, shift, kind }`.
    #[wasm_bindgen(
        getter,
        unchecked_return_type = "{ name: string; bits: number; shift: number; kind: 'timestamp' | 'sequence' | 'node' }[]"
    )]
    pub fn fields(&self) -> Array {
        let out = Array::new();
        for f in self.inner.fields() {
            let o = Object::new();
            set_val(&o, &"name".into(), &f.name().into());
            set_f64(&o, &"bits".into(), f.bits() as f64);
            set_f64(&o, &"shift".into(), f.shift() as f64);
            set_val(&o, &"kind".into(), &field_kind(f.kind()).into());
            out.push(&o);
        }
        out
    }

    /// The first Unix ms the time field cannot hold.
    #[wasm_bindgen(getter = timeEndMs)]
    pub fn time_end_ms(&self) -> f64 {
        self.inner.time_end_ms() as f64
    }

    /// The first Unix ms from which IDs may not fit a signed 64-bit integer.
    #[wasm_bindgen(getter = i64EndMs)]
    pub fn i64_end_ms(&self) -> f64 {
        self.inner.i64_end_ms() as f64
    }

    /// The first Unix ms from which IDs may exceed `Number.MAX_SAFE_INTEGER`.
    #[wasm_bindgen(getter = jsSafeEndMs)]
    pub fn js_safe_end_ms(&self) -> f64 {
        self.inner.js_safe_end_ms() as f64
    }

    /// Builds an ID from a time (Unix ms), a sequence value and node values.
    pub fn compose(
        &self,
        #[wasm_bindgen(js_name = timestampMs, unchecked_param_type = "number")]
        timestamp_ms: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number")] sequence: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "Record<string, number>")] nodes: Option<
            JsValue,
        >,
    ) -> JsResult<u64> {
        Ok(compose_with(
            &self.inner,
            &timestamp_ms,
            &sequence,
            &or_undefined(nodes),
        )?)
    }

    /// The smallest and largest IDs of the time unit holding `timestampMs`.
    #[wasm_bindgen(js_name = idBounds, unchecked_return_type = "[bigint, bigint]")]
    pub fn id_bounds(
        &self,
        #[wasm_bindgen(js_name = timestampMs, unchecked_param_type = "number")]
        timestamp_ms: JsValue,
    ) -> JsResult<Array> {
        let ms = time_arg(&timestamp_ms)?;
        Ok(bounds_array(self.inner.id_bounds(ms).map_err(Fail::Core)?))
    }

    /// True when the ID fits the layout and decodes to a time between the
    /// epoch and `nowMs` plus one day (the decoder page's "which layout fits?").
    #[wasm_bindgen(js_name = isPlausible)]
    pub fn is_plausible(
        &self,
        #[wasm_bindgen(unchecked_param_type = "IdLike")] id: JsValue,
        #[wasm_bindgen(js_name = nowMs, unchecked_param_type = "number")] now_ms: JsValue,
    ) -> JsResult<bool> {
        let id = id_arg(&id)?;
        let now = time_arg(&now_ms)?;
        Ok(self.inner.is_plausible(id, now))
    }

    /// WebAssembly package only (not in the native package): decodes a whole
    /// `BigUint64Array` in one call, into columns:
    /// `{ timestampMs: Float64Array, sequence: Float64Array, nodes: { [field]: Float64Array } }`.
    /// An ID that does not fit the layout throws `invalid_id` naming its index.
    ///
    /// The columns are views of one `Float64Array` of `(2 + node fields) * n`
    /// values: a new one, or `into` when given (at least that long), so a
    /// loop over many batches can reuse one buffer instead of allocating.
    #[wasm_bindgen(
        js_name = decodeMany,
        unchecked_return_type = "{ timestampMs: Float64Array; sequence: Float64Array; nodes: Record<string, Float64Array> }"
    )]
    pub fn decode_many(
        &self,
        #[wasm_bindgen(unchecked_param_type = "BigUint64Array")] ids: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "Float64Array")] into: Option<JsValue>,
    ) -> JsResult<Object> {
        let Some(ids) = ids.dyn_ref::<BigUint64Array>() else {
            return Err(Fail::Type("invalid_id", "ids must be a BigUint64Array".into()).into());
        };
        let layout = &self.inner;
        let n = ids.length() as usize;
        // One buffer, column after column (timestamps, sequences, then each
        // node field: the core's `decompose_columns`); JavaScript gets one
        // copy of it and a view per column. A batch too large for this
        // module's memory is an exception, not an aborted module.
        let width = 2 + layout.node_count();
        let too_many = || Fail::Range("invalid_id", "too many IDs for memory".into());
        let total = n.checked_mul(width).ok_or_else(too_many)?;
        let (mut copy, mut out): (Vec<u64>, Vec<f64>) = (Vec::new(), Vec::new());
        copy.try_reserve_exact(n).map_err(|_| too_many())?;
        out.try_reserve_exact(total).map_err(|_| too_many())?;
        copy.resize(n, 0);
        ids.copy_to(&mut copy);
        let ids = copy;
        out.resize(total, 0.0);
        layout.decompose_columns(&ids, &mut out).map_err(|(i, e)| {
            Fail::Plain(
                e.code(),
                ["ids[", &i.to_string(), "]: ", &e.to_string()].concat(),
            )
        })?;
        let into = match into {
            None => None,
            Some(into) => match into.dyn_into::<Float64Array>() {
                Ok(a) if a.length() as usize >= out.len() => Some(a),
                Ok(_) => {
                    let msg = [
                        "into must hold at least ",
                        &out.len().to_string(),
                        " values",
                    ];
                    return Err(Fail::Range("invalid_option", msg.concat()).into());
                }
                Err(_) => {
                    let msg = "into must be a Float64Array";
                    return Err(Fail::Type("invalid_option", msg.into()).into());
                }
            },
        };
        let shape = self.shape.get_or_init(|| new_shape(layout));
        Ok(shape.columns(&out, n as u32, into))
    }

    /// Internal: see [`LayoutLike`].
    #[wasm_bindgen(js_name = __snowmintSelect, skip_typescript)]
    pub fn snowmint_select(&self) {
        SELECTED.with(|s| s.set(Some(self.inner)));
    }
}

fn compose_with(
    layout: &snowmint::Layout,
    timestamp_ms: &JsValue,
    sequence: &JsValue,
    nodes: &JsValue,
) -> Res<u64> {
    let ms = time_arg(timestamp_ms)?;
    let seq = uint_arg(
        sequence,
        "the sequence",
        "node_out_of_range",
        "node_out_of_range",
    )?;
    let nodes = nodes_arg(layout, nodes)?;
    Ok(layout.compose(ms, seq, &nodes)?)
}

// ---- raw exports for js/api.js -----------------------------------------------
//
// `decode` is built in JavaScript (js/api.js) on these: one call into the
// module per decode, numbers only. The call writes its results to
// [`SCRATCH`], which JavaScript reads through typed-array views of the
// module's memory, and returns a status: 0, or 1 when it failed, the failure
// waiting in [`LAST_ERROR`] for [`take_error`] to turn it into the
// JavaScript exception. The checks and the error codes stay the core's.

/// Where the raw calls leave their results: slot 0 the ID (a `u64`'s bits),
/// slot 1 the time (Unix ms), slot 2 the sequence, slots 3.. the node values
/// (the core's `decompose_columns` for one ID).
struct Scratch(UnsafeCell<[f64; 3 + MAX_NODES]>);
/// Layouts registered by [`raw_register`], by handle.
struct Registry(UnsafeCell<Vec<snowmint::Layout>>);
// SAFETY (both): the module is built without the atomics feature, so it never
// runs on two threads (see ALLOCATOR); on the host (tests, clippy) only the
// raw exports touch them, each to completion, and no reference to their
// contents outlives a call.
unsafe impl Sync for Scratch {}
unsafe impl Sync for Registry {}
static SCRATCH: Scratch = Scratch(UnsafeCell::new([0.0; 3 + MAX_NODES]));
static REGISTRY: Registry = Registry(UnsafeCell::new(Vec::new()));

/// The most node fields a layout has (the core's limit).
const MAX_NODES: usize = snowmint::MAX_NODES;

/// A raw call's status: 0 on success, 1 with the failure kept for
/// [`take_error`].
fn status(r: Res<()>) -> u32 {
    match r {
        Ok(()) => 0,
        Err(f) => {
            LAST_ERROR.with(|e| *e.borrow_mut() = Some(f));
            1
        }
    }
}

/// Decodes `id` into [`SCRATCH`].
fn decode_into(layout: &snowmint::Layout, id: u64) -> Res<()> {
    // SAFETY: see `Scratch`.
    let out = unsafe { &mut *SCRATCH.0.get() };
    out[0] = f64::from_bits(id);
    layout
        .decompose_columns(&[id], &mut out[1..])
        .map_err(|(_, e)| Fail::Core(e))
}

/// A handle for `layout` (equal layouts get the same one), for
/// [`raw_decode`]. js/api.js asks once per distinct layout; the registry
/// only grows (by one small entry per distinct layout ever decoded with).
#[wasm_bindgen(js_name = __register, skip_typescript)]
pub fn raw_register(layout: &Layout) -> u32 {
    // SAFETY: see `Registry`.
    let all = unsafe { &mut *REGISTRY.0.get() };
    let at = all
        .iter()
        .position(|l| *l == layout.inner)
        .unwrap_or_else(|| {
            all.push(layout.inner);
            all.len() - 1
        });
    at as u32
}

/// Calls `f` with the registered layout `h` (js/api.js passes only handles
/// it was given; any other is an `invalid_layout` error, not a panic).
fn with_registered(h: u32, f: impl FnOnce(&snowmint::Layout) -> Res<()>) -> u32 {
    // SAFETY: see `Registry`; `f` does not register layouts.
    let all = unsafe { &*REGISTRY.0.get() };
    status(match all.get(h as usize) {
        Some(l) => f(l),
        None => Err(Fail::Plain("invalid_layout", "not a layout handle".into())),
    })
}

/// The address of [`SCRATCH`] in the module's memory.
#[wasm_bindgen(js_name = __scratch, skip_typescript)]
pub fn scratch() -> u32 {
    SCRATCH.0.get() as usize as u32
}

/// The module's `WebAssembly.Memory`, for the views of [`SCRATCH`].
#[wasm_bindgen(js_name = __memory, skip_typescript)]
pub fn memory() -> JsValue {
    wasm_bindgen::memory()
}

/// The exception for the last raw call that returned status 1.
#[wasm_bindgen(js_name = __error, skip_typescript)]
pub fn take_error() -> JsValue {
    match LAST_ERROR.with(|e| e.borrow_mut().take()) {
        Some(f) => f.into(),
        None => make_error(0, "invalid_id", "no error"),
    }
}

/// `layout.decode(id)` (layout handle `h`) for an ID already known to be a
/// `bigint` in 0..2^64 (JavaScript checked `BigInt.asUintN(64, id) === id`).
/// The hot path of js/api.js: no closure, no `Result` until a failure.
#[wasm_bindgen(js_name = __decode, skip_typescript)]
pub fn raw_decode(h: u32, id: u64) -> u32 {
    // SAFETY: see `Registry` and `Scratch`.
    let (all, out) = unsafe { (&*REGISTRY.0.get(), &mut *SCRATCH.0.get()) };
    let Some(layout) = all.get(h as usize) else {
        return with_registered(h, |_| Ok(()));
    };
    out[0] = f64::from_bits(id);
    match layout.decompose_columns(&[id], &mut out[1..]) {
        Ok(()) => 0,
        Err((_, e)) => status(Err(Fail::Core(e))),
    }
}

/// `layout.decode(id)` for any other argument: the ID conversion of every
/// other function (`bigint` outside 0..2^64, `string`, `number`, wrong types).
#[wasm_bindgen(js_name = __decodeAny, skip_typescript)]
pub fn raw_decode_any(h: u32, id: JsValue) -> u32 {
    with_registered(h, |l| decode_into(l, id_arg(&id)?))
}

/// The layout argument of the free functions, as a `Layout` (a string is
/// parsed by the core; anything else is a `TypeError`).
#[wasm_bindgen(js_name = __layoutArg, skip_typescript)]
pub fn raw_layout_arg(layout: JsValue) -> JsResult<Layout> {
    Ok(Layout::wrap(layout_arg(&layout)?))
}

// ---- functions ----------------------------------------------------------------

/// Builds an ID under `layout` from a time (Unix ms), a sequence value and node values.
#[wasm_bindgen]
pub fn compose(
    #[wasm_bindgen(unchecked_param_type = "Layout | string")] layout: JsValue,
    #[wasm_bindgen(js_name = timestampMs, unchecked_param_type = "number")] timestamp_ms: JsValue,
    #[wasm_bindgen(unchecked_param_type = "number")] sequence: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "Record<string, number>")] nodes: Option<
        JsValue,
    >,
) -> JsResult<u64> {
    let layout = layout_arg(&layout)?;
    Ok(compose_with(
        &layout,
        &timestamp_ms,
        &sequence,
        &or_undefined(nodes),
    )?)
}

/// The smallest and largest IDs under `layout` of the time unit holding `timestampMs`.
#[wasm_bindgen(js_name = idBounds, unchecked_return_type = "[bigint, bigint]")]
pub fn id_bounds(
    #[wasm_bindgen(unchecked_param_type = "Layout | string")] layout: JsValue,
    #[wasm_bindgen(js_name = timestampMs, unchecked_param_type = "number")] timestamp_ms: JsValue,
) -> JsResult<Array> {
    let layout = layout_arg(&layout)?;
    let ms = time_arg(&timestamp_ms)?;
    Ok(bounds_array(layout.id_bounds(ms).map_err(Fail::Core)?))
}

/// The ID in Crockford base32: 13 characters, upper case, sorts like the number.
#[wasm_bindgen(js_name = toBase32)]
pub fn to_base32(#[wasm_bindgen(unchecked_param_type = "IdLike")] id: JsValue) -> JsResult<String> {
    Ok(encode(id_arg(&id)?, Format::Base32))
}

/// Reads a Crockford base32 ID (case-insensitive; `I`/`L` read as 1, `O` as 0).
#[wasm_bindgen(js_name = fromBase32)]
pub fn from_base32(#[wasm_bindgen(unchecked_param_type = "string")] s: JsValue) -> JsResult<u64> {
    Ok(parse_with(&s, Format::Base32)?)
}

/// The ID in base62 (`0-9A-Za-z`): 11 characters, sorts like the number.
#[wasm_bindgen(js_name = toBase62)]
pub fn to_base62(#[wasm_bindgen(unchecked_param_type = "IdLike")] id: JsValue) -> JsResult<String> {
    Ok(encode(id_arg(&id)?, Format::Base62))
}

/// Reads a base62 ID.
#[wasm_bindgen(js_name = fromBase62)]
pub fn from_base62(#[wasm_bindgen(unchecked_param_type = "string")] s: JsValue) -> JsResult<u64> {
    Ok(parse_with(&s, Format::Base62)?)
}

/// The ID in `format`: `decimal`, `base32` or `base62`.
#[wasm_bindgen(js_name = formatId)]
pub fn format_id(
    #[wasm_bindgen(unchecked_param_type = "IdLike")] id: JsValue,
    #[wasm_bindgen(unchecked_param_type = "'decimal' | 'base32' | 'base62'")] format: JsValue,
) -> JsResult<String> {
    let id = id_arg(&id)?;
    Ok(encode(id, format_arg(&format)?))
}

/// Reads an ID written in `format`: `decimal`, `base32` or `base62`.
#[wasm_bindgen(js_name = parseId)]
pub fn parse_id(
    #[wasm_bindgen(unchecked_param_type = "string")] s: JsValue,
    #[wasm_bindgen(unchecked_param_type = "'decimal' | 'base32' | 'base62'")] format: JsValue,
) -> JsResult<u64> {
    let format = format_arg(&format)?;
    Ok(parse_with(&s, format)?)
}

fn parse_with(s: &JsValue, format: Format) -> Res<u64> {
    let s = string_arg(s, "the ID string", "invalid_id")?;
    Ok(Id::parse(&s, format)?.get())
}

// ---- generators -----------------------------------------------------------------

/// The clock of [`Generator`]: `Date.now()`. std's `SystemTime` and `Instant`
/// panic on `wasm32-unknown-unknown`, so the core's `SystemClock` is never
/// used here. Waiting spins (the core's default): there is no way to sleep
/// in a synchronous call, and waits last at most a few time units.
#[derive(Clone, Copy, Debug, Default)]
pub struct DateClock;

impl Clock for DateClock {
    fn now_ms(&self) -> u64 {
        // A clock before 1970 reads as 0: every real layout then refuses to
        // generate with `time_before_epoch`. `as` saturates and truncates.
        js_sys::Date::now().max(0.0) as u64
    }
}

/// The generator on `Date.now()` (the core's `SyncGenerator`).
///
/// Generators with the same layout and node values share one state in the
/// whole module instance, so they never repeat an ID. Every module instance
/// (each page, each worker) has its own state: give each its own node values.
#[wasm_bindgen]
pub struct Generator {
    inner: SyncGenerator<DateClock>,
}

#[wasm_bindgen]
impl Generator {
    /// `new Generator(layout, nodes?, options?)`. Without a seed (or with 0),
    /// the seed of `random:N` sequence starts comes from
    /// `crypto.getRandomValues` (or `Math.random` where there is no Web Crypto).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "Layout | string")] layout: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "Record<string, number>")] nodes: Option<
            JsValue,
        >,
        #[wasm_bindgen(unchecked_optional_param_type = "GeneratorOptions")] options: Option<
            JsValue,
        >,
    ) -> JsResult<Generator> {
        let layout = layout_arg(&layout)?;
        let nodes = nodes_arg(&layout, &or_undefined(nodes))?;
        let (mut options, _) = options_arg(&or_undefined(options))?;
        if options.seed == 0 {
            options.seed = random_seed();
        }
        Ok(Generator {
            inner: SyncGenerator::with_clock(layout, nodes, options, DateClock)
                .map_err(Fail::Core)?,
        })
    }

    /// The next ID. Waits (spinning on `Date.now()`) when a policy says to
    /// wait, at most for the few time units the policy allows.
    #[wasm_bindgen(js_name = nextId)]
    pub fn next_id(&self) -> JsResult<u64> {
        Ok(self.inner.next_id().map_err(Fail::Core)?.get())
    }

    /// The next ID as a decimal string (for JSON).
    #[wasm_bindgen(js_name = nextIdString)]
    pub fn next_id_string(&self) -> JsResult<String> {
        let id = self.inner.next_id().map_err(Fail::Core)?;
        Ok(encode(id.get(), Format::Decimal))
    }

    /// `n` increasing IDs.
    #[wasm_bindgen(js_name = nextIds)]
    pub fn next_ids(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] n: JsValue,
    ) -> JsResult<Vec<u64>> {
        let n = uint_arg(&n, "the count", "invalid_option", "invalid_option")?;
        SyncGenerator::<DateClock>::check_batch(n).map_err(Fail::Core)?;
        // `check_batch` allows 2^32, which does not fit a 32-bit usize.
        let too_many = || {
            Fail::Range(
                "invalid_option",
                ["cannot allocate ", &n.to_string(), " IDs"].concat(),
            )
        };
        let n = usize::try_from(n).map_err(|_| too_many())?;
        let mut out: Vec<u64> = Vec::new();
        // A huge count must be an exception, not an aborted module.
        out.try_reserve_exact(n).map_err(|_| too_many())?;
        out.resize(n, 0);
        self.inner.next_ids(&mut out).map_err(Fail::Core)?;
        Ok(out)
    }

    /// The generator's layout.
    #[wasm_bindgen(getter)]
    pub fn layout(&self) -> Layout {
        Layout::wrap(*self.inner.config().layout())
    }
}

/// The pure generator (the core's `Generator`): the caller passes the time,
/// so it can be driven by a script of clock readings. The seed is used as
/// given (default 0). Not shared with any other generator.
#[wasm_bindgen]
pub struct PureGenerator {
    inner: snowmint::Generator,
}

#[wasm_bindgen]
impl PureGenerator {
    /// `new PureGenerator(layout, nodes?, options?)`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "Layout | string")] layout: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "Record<string, number>")] nodes: Option<
            JsValue,
        >,
        #[wasm_bindgen(unchecked_optional_param_type = "GeneratorOptions")] options: Option<
            JsValue,
        >,
    ) -> JsResult<PureGenerator> {
        let layout = layout_arg(&layout)?;
        let nodes = nodes_arg(&layout, &or_undefined(nodes))?;
        let (options, _) = options_arg(&or_undefined(options))?;
        Ok(PureGenerator {
            inner: snowmint::Generator::new(layout, nodes, options).map_err(Fail::Core)?,
        })
    }

    /// The next ID at clock reading `nowMs` (`{ id }`), or the Unix ms to ask
    /// again at (`{ retryAt }`).
    #[wasm_bindgen(unchecked_return_type = "{ id: bigint } | { retryAt: number }")]
    pub fn next(
        &mut self,
        #[wasm_bindgen(js_name = nowMs, unchecked_param_type = "number")] now_ms: JsValue,
    ) -> JsResult<Object> {
        let now = time_arg(&now_ms)?;
        let next = self.inner.next(now).map_err(Fail::Core)?;
        Ok(match next {
            Next::Id(id) => id_result(id.get()),
            Next::RetryAt(at) => retry_result(at as f64),
        })
    }
}

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &str = r#"
/** An ID argument: a bigint, a decimal string, or a number only if Number.isSafeInteger. */
export type IdLike = bigint | string | number;

/**
 * A decoded ID. Node fields are also spread at the top level (never overriding the fixed names).
 * `date` is a getter of the prototype (`new Date(timestampMs)`, made when read), not an own property.
 */
export interface Parts {
  id: bigint;
  timestampMs: number;
  readonly date: Date;
  sequence: number;
  nodes: Record<string, number>;
  [nodeField: string]: unknown;
}

/** Splits an ID into its parts under `layout` (a `Layout` or a preset name or JSON descriptor). */
export function decode(id: IdLike, layout: Layout | string): Parts;

export interface Layout {
  /** Splits an ID into its parts. */
  decode(id: IdLike): Parts;
}

/** Generator options: policy strings as in the core (`fail`, `wait:5`, `borrow:10`, `random:16`...). */
export interface GeneratorOptions {
  clockBackwards?: string;
  sequenceExhausted?: string;
  sequenceStart?: string;
  seed?: bigint | string | number;
  resumeAfter?: IdLike;
}
"#;

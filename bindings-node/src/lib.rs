//! The Node.js binding of snowmint (napi-rs): the npm package `snowmint`.
//!
//! A thin layer: it converts JavaScript values to the core's types and back,
//! and core errors to JavaScript errors. Every rule about IDs, layouts and
//! generation lives in the core (`snowmint`); nothing here re-implements one.
//!
//! Conventions of the JavaScript API (the WebAssembly package exports exactly
//! the same, and one test suite in `tests/js/` drives both):
//! - IDs are `bigint` out, and `bigint`, decimal `string` or safe-integer
//!   `number` in. A BigInt outside `0..2^64` or a number that may already be
//!   rounded is refused, never wrapped or rounded.
//! - A core error becomes an `Error` whose `code` is the core's code
//!   (`Error::code`, the cross-language contract). An argument of the wrong
//!   type becomes a `TypeError`, a number out of its range a `RangeError`;
//!   both carry a `code` too (see [`Fail`]).
//!
//! Layout of the package: `napi build --js binding.js` generates the loader
//! (`binding.js`) and `index.d.ts` (with `types-header.d.ts` on top) from this
//! crate; `index.js` is the entry point, re-exporting the binding and adding
//! `decode`, whose `Parts` objects it builds in JavaScript from numbers the
//! core decoded (see [`decoder`]). The hot calls use raw N-API (`fast.rs`).

mod fast;

use std::sync::Arc;

use napi::bindgen_prelude::{
    BigInt, ClassInstance, Env, JavaScriptClassExt, JsError, JsRangeError, JsTypeError, Object,
    This, ToNapiValue, Unknown,
};
use napi::{sys, JsValue, Status, ValueType};
use napi_derive::napi;
use snowmint::{Format, Generator as SyncGenerator, Id, Next, Nodes, Options};

// ---- errors -------------------------------------------------------------

/// Why a call failed, before it becomes a JavaScript exception. Every failure
/// of this binding goes through [`Fail::throw`]: the one place errors are
/// mapped.
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
    /// A failure of N-API itself (the engine refused a call); thrown as napi-rs
    /// throws it.
    Napi(napi::Error),
}

impl From<snowmint::Error> for Fail {
    fn from(e: snowmint::Error) -> Fail {
        Fail::Core(e)
    }
}

impl From<napi::Error> for Fail {
    fn from(e: napi::Error) -> Fail {
        Fail::Napi(e)
    }
}

impl Fail {
    /// A core error about a number's range (from `Id::from_f64` or
    /// `Id::from_bigint`): a `RangeError` with the core's code and message.
    fn range(e: snowmint::Error) -> Fail {
        Fail::Range(e.code(), e.to_string())
    }

    /// Throws the JavaScript error and returns the marker napi-rs expects for
    /// "an exception is already pending" (it then throws nothing more).
    fn throw(self, env: &Env) -> napi::Error {
        let raw = env.raw();
        // SAFETY: `raw` is the live environment of the current call.
        unsafe {
            match self {
                Fail::Core(e) => {
                    JsError::from(napi::Error::new(e.code(), e.to_string())).throw_into(raw)
                }
                Fail::Type(code, msg) => {
                    JsTypeError::from(napi::Error::new(code, msg)).throw_into(raw)
                }
                Fail::Range(code, msg) => {
                    JsRangeError::from(napi::Error::new(code, msg)).throw_into(raw)
                }
                Fail::Napi(e) => return e,
            }
        }
        napi::Error::new(Status::PendingException, String::new())
    }
}

type Res<T> = std::result::Result<T, Fail>;

/// Turns a [`Res`] into what a `#[napi]` function returns, throwing on error.
trait OrThrow<T> {
    fn or_throw(self, env: &Env) -> napi::Result<T>;
}

impl<T, E: Into<Fail>> OrThrow<T> for std::result::Result<T, E> {
    fn or_throw(self, env: &Env) -> napi::Result<T> {
        self.map_err(|e| e.into().throw(env))
    }
}

// ---- arguments ------------------------------------------------------------

/// The largest integer a JavaScript number holds exactly (2^53 - 1).
const MAX_SAFE: f64 = 9007199254740991.0;

fn kind(v: &Unknown) -> Res<ValueType> {
    Ok(v.get_type()?)
}

/// An ID argument: `bigint`, decimal `string` or safe-integer `number`.
fn id_arg(v: &Unknown) -> Res<u64> {
    match kind(v)? {
        ValueType::BigInt => bigint_arg(v),
        ValueType::String => {
            // SAFETY: the value is a string (checked above).
            let s: String = unsafe { v.cast() }?;
            Ok(Id::parse(&s, Format::Decimal)?.get())
        }
        ValueType::Number => {
            // SAFETY: the value is a number (checked above).
            let n: f64 = unsafe { v.cast() }?;
            Id::from_f64(n).map(Id::get).map_err(Fail::range)
        }
        _ => Err(Fail::Type(
            "invalid_id",
            "an ID must be a bigint, a decimal string or a safe integer number".into(),
        )),
    }
}

/// A BigInt in `0..2^64`; anything else is a `RangeError` (never wrapped).
fn bigint_arg(v: &Unknown) -> Res<u64> {
    let (env, raw) = (v.value().env, v.raw());
    let mut value = 0u64;
    let mut lossless = false;
    // SAFETY: `env` and `raw` are the live handles of this call's argument,
    // which is a BigInt (the caller checked its type).
    let status = unsafe { sys::napi_get_value_bigint_uint64(env, raw, &mut value, &mut lossless) };
    if status == sys::Status::napi_ok && lossless {
        return Ok(value);
    }
    // Negative, or 2^64 or more: the sign and the word count tell which.
    // SAFETY: as above, the value is a BigInt.
    let big: BigInt = unsafe { v.cast() }?;
    let (negative, low, lossless) = big.get_u64();
    Id::from_bigint(negative, low, lossless)
        .map(Id::get)
        .map_err(Fail::range)
}

/// A `number` argument that must be a non-negative safe integer (a time, a
/// sequence or node value, a count). `code` is the core code whose meaning
/// fits the argument; `negative_code` is used for negative numbers.
fn uint_arg(v: &Unknown, what: &str, code: &'static str, negative_code: &'static str) -> Res<u64> {
    if kind(v)? != ValueType::Number {
        return Err(Fail::Type(code, format!("{what} must be a number")));
    }
    // SAFETY: the value is a number (checked above).
    let n: f64 = unsafe { v.cast() }?;
    if n < 0.0 {
        return Err(Fail::Range(
            negative_code,
            format!("{what} must not be negative (got {n})"),
        ));
    }
    if n.is_nan() || n > MAX_SAFE || n.trunc() != n {
        return Err(Fail::Range(
            code,
            format!("{what} must be a safe integer (got {n})"),
        ));
    }
    Ok(n as u64)
}

/// A time in Unix milliseconds.
fn time_arg(v: &Unknown) -> Res<u64> {
    uint_arg(v, "a time in Unix ms", "time_overflow", "time_before_epoch")
}

fn string_arg(v: &Unknown, what: &str, code: &'static str) -> Res<String> {
    if kind(v)? != ValueType::String {
        return Err(Fail::Type(code, format!("{what} must be a string")));
    }
    // SAFETY: the value is a string (checked above).
    Ok(unsafe { v.cast() }?)
}

fn format_arg(v: &Unknown) -> Res<Format> {
    Ok(Format::from_name(&string_arg(
        v,
        "the format",
        "invalid_id",
    )?)?)
}

/// A `Layout` instance or a string for `Layout.parse` (preset name or JSON).
fn layout_arg(env: &Env, v: &Unknown) -> Res<snowmint::Layout> {
    match kind(v)? {
        ValueType::String => {
            // SAFETY: the value is a string (checked above).
            let s: String = unsafe { v.cast() }?;
            Ok(snowmint::Layout::parse(&s)?)
        }
        ValueType::Object if Layout::instance_of(env, v)? => {
            // SAFETY: the value is an instance of the `Layout` class (checked
            // above), so it wraps a `Layout`.
            // An object made with `Object.create(Layout.prototype)` passes
            // `instanceof` but wraps nothing: napi-rs refuses to unwrap it.
            let l: ClassInstance<Layout> = unsafe { v.cast() }.map_err(|_| not_a_layout())?;
            Ok(l.inner)
        }
        _ => Err(not_a_layout()),
    }
}

fn not_a_layout() -> Fail {
    Fail::Type(
        "invalid_layout",
        "a layout must be a Layout or a string (a preset name or a JSON descriptor)".into(),
    )
}

/// Node values from `{ fieldName: value }`; absent (`undefined`/`null`)
/// means none, which the core accepts only for layouts without node fields.
fn nodes_arg(layout: &snowmint::Layout, v: Option<&Unknown>) -> Res<Nodes> {
    let Some(v) = v else {
        return Ok(layout.nodes_from_pairs([])?);
    };
    if kind(v)? != ValueType::Object {
        return Err(Fail::Type(
            "unknown_field",
            "nodes must be an object of field name -> number".into(),
        ));
    }
    // SAFETY: the value is an object (checked above).
    let obj: Object = unsafe { v.cast() }?;
    let names = Object::keys(&obj)?;
    let mut pairs = Vec::with_capacity(names.len());
    for name in &names {
        let value: Unknown = obj.get(name)?.ok_or_else(|| {
            Fail::Type(
                "node_out_of_range",
                format!("node field '{name}' has no value"),
            )
        })?;
        let what = format!("node field '{name}'");
        pairs.push((
            name.as_str(),
            uint_arg(&value, &what, "node_out_of_range", "node_out_of_range")?,
        ));
    }
    Ok(layout.nodes_from_pairs(pairs.iter().copied())?)
}

/// `GeneratorOptions`: policy strings pass through unchanged to the core.
fn options_arg(v: Option<&Unknown>, default_seed: u64) -> Res<Options> {
    let mut policies: [Option<String>; 3] = [None, None, None];
    let mut seed = default_seed;
    let mut resume_after = None;
    if let Some(v) = v {
        if kind(v)? != ValueType::Object {
            return Err(Fail::Type(
                "invalid_option",
                "options must be an object".into(),
            ));
        }
        // SAFETY: the value is an object (checked above).
        let obj: Object = unsafe { v.cast() }?;
        for key in Object::keys(&obj)? {
            let Some(value) = obj.get::<Unknown>(&key)? else {
                continue; // `{ seed: undefined }` is the same as no seed.
            };
            match key.as_str() {
                "clockBackwards" | "sequenceExhausted" | "sequenceStart" => {
                    let i = match key.as_str() {
                        "clockBackwards" => 0,
                        "sequenceExhausted" => 1,
                        _ => 2,
                    };
                    policies[i] = Some(string_arg(&value, &key, "invalid_option")?);
                }
                "seed" => {
                    // The seed reads like an ID, but a bad one is a bad option.
                    seed = id_arg(&value).map_err(|e| match e {
                        Fail::Core(e) => Fail::Range("invalid_option", format!("seed: {e}")),
                        Fail::Type(_, m) => Fail::Type("invalid_option", format!("seed: {m}")),
                        Fail::Range(_, m) => Fail::Range("invalid_option", format!("seed: {m}")),
                        other => other,
                    })?
                }
                "resumeAfter" => resume_after = Some(id_arg(&value)?),
                _ => {
                    return Err(Fail::Type(
                        "invalid_option",
                        format!(
                            "unknown option '{key}' (known: clockBackwards, sequenceExhausted, \
                             sequenceStart, seed, resumeAfter)"
                        ),
                    ))
                }
            }
        }
    }
    let [clock, exhausted, start] = &policies;
    let mut options =
        Options::from_policies(clock.as_deref(), exhausted.as_deref(), start.as_deref())?;
    options.seed = seed;
    options.resume_after = resume_after;
    Ok(options)
}

// ---- results --------------------------------------------------------------

fn bounds_array(env: &Env, (lo, hi): (u64, u64)) -> Res<Unknown<'_>> {
    // SAFETY: `env` is the live environment of the current call.
    let raw = unsafe { ToNapiValue::to_napi_value(env.raw(), vec![lo, hi]) }?;
    // SAFETY: `raw` was just created in this environment.
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), raw) })
}

// ---- Layout ---------------------------------------------------------------

/// One field of a layout, most significant first.
#[napi(object, js_name = "Field")]
pub struct FieldInfo {
    pub name: String,
    pub bits: u32,
    /// Position of the field's lowest bit in the ID.
    pub shift: u32,
    #[napi(ts_type = "'timestamp' | 'sequence' | 'node'")]
    pub kind: String,
}

/// A layout: the epoch, the time unit, and the fields of an ID. Make one with
/// `Layout.preset`, `Layout.fromJson` or `Layout.parse`.
#[napi]
pub struct Layout {
    inner: snowmint::Layout,
}

#[napi]
impl Layout {
    /// A preset by name (`twitter`, `discord`, ... see `Layout.presets()`).
    #[napi(catch_unwind, factory)]
    pub fn preset(
        env: &Env,
        #[napi(ts_arg_type = "string")] name: Unknown,
    ) -> napi::Result<Layout> {
        let name = string_arg(&name, "the preset name", "unknown_preset").or_throw(env)?;
        let inner = snowmint::Layout::preset(&name).or_throw(env)?;
        Ok(Layout { inner })
    }

    /// A layout from its JSON descriptor, e.g.
    /// `{"epoch_ms":0,"fields":[["timestamp",48],["sequence",16]]}`.
    #[napi(catch_unwind, factory)]
    pub fn from_json(
        env: &Env,
        #[napi(ts_arg_type = "string")] json: Unknown,
    ) -> napi::Result<Layout> {
        let json = string_arg(&json, "the JSON descriptor", "invalid_layout").or_throw(env)?;
        let inner = snowmint::Layout::from_json(&json).or_throw(env)?;
        Ok(Layout { inner })
    }

    /// A preset name or a JSON descriptor (a string starting with `{` or `"`).
    #[napi(catch_unwind, factory)]
    pub fn parse(env: &Env, #[napi(ts_arg_type = "string")] s: Unknown) -> napi::Result<Layout> {
        let s = string_arg(&s, "the layout", "invalid_layout").or_throw(env)?;
        let inner = snowmint::Layout::parse(&s).or_throw(env)?;
        Ok(Layout { inner })
    }

    /// The preset names, in a fixed order.
    #[napi(catch_unwind)]
    pub fn presets() -> Vec<&'static str> {
        snowmint::Layout::PRESETS.to_vec()
    }

    /// The canonical JSON descriptor.
    #[napi(catch_unwind)]
    pub fn to_json(&self) -> String {
        self.inner.to_json()
    }

    /// The epoch, Unix milliseconds.
    #[napi(getter)]
    pub fn epoch_ms(&self) -> f64 {
        self.inner.epoch_ms() as f64
    }

    /// The length of one time unit, in milliseconds.
    #[napi(getter)]
    pub fn time_unit_ms(&self) -> f64 {
        self.inner.time_unit_ms() as f64
    }

    /// The width of an ID in bits (at most 64).
    #[napi(getter)]
    pub fn total_bits(&self) -> u32 {
        self.inner.total_bits()
    }

    /// The largest ID of the layout.
    #[napi(getter)]
    pub fn max_id(&self) -> u64 {
        self.inner.max_id()
    }

    /// The name of the preset equal to this layout, or `null`.
    #[napi(getter, ts_return_type = "string | null")]
    pub fn preset_name(&self) -> Option<&'static str> {
        self.inner.preset_name()
    }

    /// The fields, most significant first.
    #[napi(getter)]
    pub fn fields(&self) -> Vec<FieldInfo> {
        self.inner
            .fields()
            .iter()
            .map(|f| FieldInfo {
                name: f.name().to_string(),
                bits: f.bits(),
                shift: f.shift(),
                kind: f.kind().as_str().to_string(),
            })
            .collect()
    }

    /// The first Unix ms the time field cannot hold.
    #[napi(getter)]
    pub fn time_end_ms(&self) -> f64 {
        self.inner.time_end_ms() as f64
    }

    /// The first Unix ms from which IDs may not fit a signed 64-bit integer.
    #[napi(getter)]
    pub fn i64_end_ms(&self) -> f64 {
        self.inner.i64_end_ms() as f64
    }

    /// The first Unix ms from which IDs may exceed `Number.MAX_SAFE_INTEGER`.
    #[napi(getter)]
    pub fn js_safe_end_ms(&self) -> f64 {
        self.inner.js_safe_end_ms() as f64
    }

    /// Builds an ID from a time (Unix ms), a sequence value and node values.
    #[napi(catch_unwind)]
    pub fn compose(
        &self,
        env: &Env,
        #[napi(ts_arg_type = "number")] timestamp_ms: Unknown,
        #[napi(ts_arg_type = "number")] sequence: Unknown,
        #[napi(ts_arg_type = "Record<string, number>")] nodes: Option<Unknown>,
    ) -> napi::Result<u64> {
        compose_with(&self.inner, &timestamp_ms, &sequence, nodes.as_ref()).or_throw(env)
    }

    /// The smallest and largest IDs of the time unit holding `timestampMs`.
    #[napi(catch_unwind, ts_return_type = "[bigint, bigint]")]
    pub fn id_bounds<'e>(
        &self,
        env: &'e Env,
        #[napi(ts_arg_type = "number")] timestamp_ms: Unknown,
    ) -> napi::Result<Unknown<'e>> {
        time_arg(&timestamp_ms)
            .and_then(|ms| Ok(self.inner.id_bounds(ms)?))
            .and_then(|b| bounds_array(env, b))
            .or_throw(env)
    }

    /// True when the ID fits the layout and decodes to a time between the
    /// epoch and `nowMs` plus one day.
    #[napi(catch_unwind)]
    pub fn is_plausible(
        &self,
        env: &Env,
        #[napi(ts_arg_type = "IdLike")] id: Unknown,
        #[napi(ts_arg_type = "number")] now_ms: Unknown,
    ) -> napi::Result<bool> {
        let id = id_arg(&id).or_throw(env)?;
        let now = time_arg(&now_ms).or_throw(env)?;
        Ok(self.inner.is_plausible(id, now))
    }
}

fn compose_with(
    layout: &snowmint::Layout,
    timestamp_ms: &Unknown,
    sequence: &Unknown,
    nodes: Option<&Unknown>,
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

// ---- functions ------------------------------------------------------------

/// Internal, for `index.js`, which builds `Parts` objects in JavaScript (an
/// N-API property write costs ~300 ns here, a JavaScript object literal a few
/// ns): a function that decodes IDs of `layout` and writes the timestamp,
/// sequence and node values into `scratch` (a `Float64Array`), returning the
/// ID as a bigint. See `fast::decoder`.
#[napi(js_name = "__decoder", skip_typescript, catch_unwind)]
pub fn decoder<'e>(env: &'e Env, layout: Unknown, scratch: Unknown) -> napi::Result<Unknown<'e>> {
    layout_arg(env, &layout)
        .and_then(|layout| fast::decoder(env.raw(), layout, &scratch))
        // SAFETY: the function was just created in this environment.
        .map(|raw| unsafe { Unknown::from_raw_unchecked(env.raw(), raw) })
        .or_throw(env)
}

/// Builds an ID under `layout` from a time (Unix ms), a sequence value and node values.
#[napi(catch_unwind)]
pub fn compose(
    env: &Env,
    #[napi(ts_arg_type = "Layout | string")] layout: Unknown,
    #[napi(ts_arg_type = "number")] timestamp_ms: Unknown,
    #[napi(ts_arg_type = "number")] sequence: Unknown,
    #[napi(ts_arg_type = "Record<string, number>")] nodes: Option<Unknown>,
) -> napi::Result<u64> {
    layout_arg(env, &layout)
        .and_then(|l| compose_with(&l, &timestamp_ms, &sequence, nodes.as_ref()))
        .or_throw(env)
}

/// The smallest and largest IDs under `layout` of the time unit holding `timestampMs`.
#[napi(catch_unwind, ts_return_type = "[bigint, bigint]")]
pub fn id_bounds<'e>(
    env: &'e Env,
    #[napi(ts_arg_type = "Layout | string")] layout: Unknown,
    #[napi(ts_arg_type = "number")] timestamp_ms: Unknown,
) -> napi::Result<Unknown<'e>> {
    layout_arg(env, &layout)
        .and_then(|l| Ok(l.id_bounds(time_arg(&timestamp_ms)?)?))
        .and_then(|b| bounds_array(env, b))
        .or_throw(env)
}

fn encode(id: u64, format: Format) -> String {
    let mut buf = [0u8; snowmint::MAX_STR_LEN];
    Id::new(id).encode(format, &mut buf).to_string()
}

/// The ID in Crockford base32: 13 characters, upper case, sorts like the number.
#[napi(catch_unwind)]
pub fn to_base32(env: &Env, #[napi(ts_arg_type = "IdLike")] id: Unknown) -> napi::Result<String> {
    Ok(encode(id_arg(&id).or_throw(env)?, Format::Base32))
}

/// Reads a Crockford base32 ID (case-insensitive; `I`/`L` read as 1, `O` as 0).
#[napi(catch_unwind)]
pub fn from_base32(env: &Env, #[napi(ts_arg_type = "string")] s: Unknown) -> napi::Result<u64> {
    parse_with(&s, Format::Base32).or_throw(env)
}

/// The ID in base62 (`0-9A-Za-z`): 11 characters, sorts like the number.
#[napi(catch_unwind)]
pub fn to_base62(env: &Env, #[napi(ts_arg_type = "IdLike")] id: Unknown) -> napi::Result<String> {
    Ok(encode(id_arg(&id).or_throw(env)?, Format::Base62))
}

/// Reads a base62 ID.
#[napi(catch_unwind)]
pub fn from_base62(env: &Env, #[napi(ts_arg_type = "string")] s: Unknown) -> napi::Result<u64> {
    parse_with(&s, Format::Base62).or_throw(env)
}

/// The ID in `format`: `decimal`, `base32` or `base62`.
#[napi(catch_unwind)]
pub fn format_id(
    env: &Env,
    #[napi(ts_arg_type = "IdLike")] id: Unknown,
    #[napi(ts_arg_type = "'decimal' | 'base32' | 'base62'")] format: Unknown,
) -> napi::Result<String> {
    (|| -> Res<_> { Ok(encode(id_arg(&id)?, format_arg(&format)?)) })().or_throw(env)
}

/// Reads an ID written in `format`: `decimal`, `base32` or `base62`.
#[napi(catch_unwind)]
pub fn parse_id(
    env: &Env,
    #[napi(ts_arg_type = "string")] s: Unknown,
    #[napi(ts_arg_type = "'decimal' | 'base32' | 'base62'")] format: Unknown,
) -> napi::Result<u64> {
    format_arg(&format)
        .and_then(|f| parse_with(&s, f))
        .or_throw(env)
}

fn parse_with(s: &Unknown, format: Format) -> Res<u64> {
    let s = string_arg(s, "the ID string", "invalid_id")?;
    Ok(Id::parse(&s, format)?.get())
}

// ---- generators -------------------------------------------------------------

/// The thread-safe generator on the system clock (the core's `SyncGenerator`).
///
/// Generators with the same layout and node values share one state in the
/// whole process, worker threads included, so they never repeat an ID. Other
/// processes (`cluster`, `child_process`) need node values of their own.
#[napi]
pub struct Generator {
    inner: Arc<SyncGenerator>,
}

#[napi]
impl Generator {
    #[napi(constructor, catch_unwind)]
    pub fn new(
        env: &Env,
        this: This,
        #[napi(ts_arg_type = "Layout | string")] layout: Unknown,
        #[napi(ts_arg_type = "Record<string, number>")] nodes: Option<Unknown>,
        #[napi(ts_arg_type = "GeneratorOptions")] options: Option<Unknown>,
    ) -> napi::Result<Self> {
        (|| -> Res<_> {
            let layout = layout_arg(env, &layout)?;
            let nodes = nodes_arg(&layout, nodes.as_ref())?;
            // A seed of 0 asks the core for one from the operating system.
            let options = options_arg(options.as_ref(), 0)?;
            let inner = Arc::new(SyncGenerator::new(layout, nodes, options)?);
            // The instance's own `nextId` and `nextIds`, bound to this
            // generator, shadow the methods below (see `fast`).
            fast::bind(env.raw(), this.object.raw(), &inner)?;
            Ok(Generator { inner })
        })()
        .or_throw(env)
    }

    /// The next ID. Blocks (sleeps) when a policy says to wait, at most for
    /// the few time units the policy allows.
    #[napi(catch_unwind)]
    pub fn next_id(&self, env: &Env) -> napi::Result<u64> {
        self.inner.next_id().map(|id| id.get()).or_throw(env)
    }

    /// The next ID as a decimal string (for JSON).
    #[napi(catch_unwind)]
    pub fn next_id_string(&self, env: &Env) -> napi::Result<String> {
        self.inner.next_id().map(|id| id.to_string()).or_throw(env)
    }

    /// `n` increasing IDs.
    #[napi(catch_unwind, ts_return_type = "BigUint64Array")]
    pub fn next_ids<'e>(
        &self,
        env: &'e Env,
        #[napi(ts_arg_type = "number")] n: Unknown,
    ) -> napi::Result<Unknown<'e>> {
        fast::next_ids(env.raw(), &self.inner, &n)
            // SAFETY: the array was just created in this environment.
            .map(|raw| unsafe { Unknown::from_raw_unchecked(env.raw(), raw) })
            .or_throw(env)
    }

    /// The generator's layout.
    #[napi(getter)]
    pub fn layout(&self) -> Layout {
        Layout {
            inner: *self.inner.config().layout(),
        }
    }
}

/// The pure generator (the core's `Generator`): the caller passes the time,
/// so it can be driven by a script of clock readings. The seed is used as
/// given (default 0). Not shared with any other generator.
#[napi]
pub struct PureGenerator {
    inner: snowmint::PureGenerator,
}

#[napi]
impl PureGenerator {
    #[napi(catch_unwind, constructor)]
    pub fn new(
        env: &Env,
        #[napi(ts_arg_type = "Layout | string")] layout: Unknown,
        #[napi(ts_arg_type = "Record<string, number>")] nodes: Option<Unknown>,
        #[napi(ts_arg_type = "GeneratorOptions")] options: Option<Unknown>,
    ) -> napi::Result<Self> {
        (|| -> Res<_> {
            let layout = layout_arg(env, &layout)?;
            let nodes = nodes_arg(&layout, nodes.as_ref())?;
            let options = options_arg(options.as_ref(), 0)?;
            Ok(PureGenerator {
                inner: snowmint::PureGenerator::new(layout, nodes, options)?,
            })
        })()
        .or_throw(env)
    }

    /// The next ID at clock reading `nowMs` (`{ id }`), or the Unix ms to ask
    /// again at (`{ retryAt }`).
    #[napi(catch_unwind, ts_return_type = "{ id: bigint } | { retryAt: number }")]
    pub fn next<'e>(
        &mut self,
        env: &'e Env,
        #[napi(ts_arg_type = "number")] now_ms: Unknown,
    ) -> napi::Result<Unknown<'e>> {
        (|| -> Res<_> {
            let now = time_arg(&now_ms)?;
            let mut obj = Object::new(env)?;
            match self.inner.next(now)? {
                Next::Id(id) => obj.set("id", id.get())?,
                Next::RetryAt(at) => obj.set("retryAt", at as f64)?,
            }
            Ok(obj.to_unknown())
        })()
        .or_throw(env)
    }
}

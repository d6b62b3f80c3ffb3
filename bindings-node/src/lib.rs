//! The Node.js binding of snowmint (napi-rs): the npm package `snowmint`.
//!
//! A translation and nothing more. [`Js`] turns each JavaScript argument into
//! the core's loose [`Value`]; the core's conversion layer (`Value::to_id`,
//! `to_layout`, `to_nodes`, `to_options`, ...) decides what it may mean, with
//! every code and message; [`throw`] turns a core error into the JavaScript
//! error its `Error::class` names. docs/SEMANTICS.md ("Arguments") has the rules.
//!
//! The package: `napi build --js binding.js` generates the loader
//! (`binding.js`) and `index.d.ts` (with `types-header.d.ts` on top) from this
//! crate; `main.js` is the hand-written entry point, which adds `decode` (its
//! `Parts` objects are built in JavaScript by `parts.js`, from numbers the core
//! decoded here). `fast.rs` is the one bypass of napi-rs, and says what it buys;
//! `ffi.rs` is the C entry that Deno calls for `decode` (through `Deno.dlopen`).
// Its types are printed by the host language (repr, inspect, the C header's
// accessors), not by Rust's Debug: the workspace's missing_debug_implementations
// does not apply.
#![allow(missing_debug_implementations)]

mod fast;
mod ffi;
mod mask;

pub use fast::decoder;
pub use ffi::{ffi_slot, library_path};
pub use mask::IdMask;

use std::sync::Arc;

use napi::bindgen_prelude::{
    BigInt, BigUint64Array, ClassInstance, Env, FromNapiValue, JsError, JsObjectValue,
    JsRangeError, JsTypeError, KeyCollectionMode, KeyConversion, KeyFilter, Null, Object, This,
    Unknown,
};
use napi::{sys, JsValue, Status, ValueType};
use napi_derive::napi;
use snowmint::{Arg, ErrorClass, Format, Id, Next, Value};
use snowmint_lease::{AnyGenerator, InfoValue, LeaseError};

// ---- arguments and errors -------------------------------------------------------

/// A JavaScript argument as the core's loose [`Value`]: what the value may
/// mean is the core's to decide.
pub struct Js(Value);

impl FromNapiValue for Js {
    unsafe fn from_napi_value(env: sys::napi_env, raw: sys::napi_value) -> napi::Result<Js> {
        // SAFETY: napi-rs passes a live value of `env`.
        value(&unsafe { Unknown::from_raw_unchecked(env, raw) }).map(Js)
    }
}

/// An optional argument: `undefined`, `null` or left out is [`Value::Absent`].
fn opt(v: Option<Js>) -> Value {
    v.map_or(Value::Absent, |v| v.0)
}

/// The one conversion of a JavaScript value.
pub(crate) fn value(v: &Unknown<'_>) -> napi::Result<Value> {
    // Every cast below is to the type `get_type` just read.
    Ok(match v.get_type()? {
        // SAFETY: the value is a number.
        ValueType::Number => Value::Float(unsafe { v.cast()? }),
        ValueType::BigInt => {
            // napi-rs's `lossless` is also false for a negative value; the
            // core's asks only whether the magnitude fits 64 bits.
            // SAFETY: the value is a bigint.
            let b: BigInt = unsafe { v.cast()? };
            let ((negative, low, _), lossless) = (b.get_u64(), b.words.len() == 1);
            Value::Int {
                negative,
                low,
                lossless,
            }
        }
        // SAFETY: the value is a string.
        ValueType::String => Value::Str(unsafe { v.cast()? }),
        // SAFETY: the value is a boolean.
        ValueType::Boolean => Value::Bool(unsafe { v.cast()? }),
        ValueType::Undefined | ValueType::Null => Value::Absent,
        // SAFETY: the value is an object.
        ValueType::Object => object(unsafe { v.cast()? })?,
        ValueType::Function => Value::Other("a function"),
        ValueType::Symbol => Value::Other("a symbol"),
        _ => Value::Other("an external value"),
    })
}

/// A `Layout` instance, an array, a plain object (its own enumerable string
/// keys, in order), or another object.
fn object(obj: Object<'_>) -> napi::Result<Value> {
    // napi-rs checks the wrapped class, so another class's object (or one
    // made with `Object.create(Layout.prototype)`) is refused here.
    // SAFETY: a live object of this call.
    let as_layout = unsafe { Unknown::from_raw_unchecked(obj.value().env, obj.raw()).cast() };
    if let Ok(l) = as_layout.map(|l: ClassInstance<'_, Layout>| l.inner) {
        return Ok(Value::Layout(l));
    }
    if obj.is_array()? {
        return Ok(Value::Other("an array"));
    }
    // Plain: made by `{}` (its prototype's prototype is null) or with a null
    // prototype.
    let proto = obj.get_prototype()?;
    let plain = proto.get_type()? == ValueType::Null
        // SAFETY: a prototype that is not null is an object.
        || unsafe { proto.cast::<Object<'_>>()? }.get_prototype()?.get_type()? == ValueType::Null;
    if !plain {
        return Ok(Value::Other("an object"));
    }
    let keys = obj.get_all_property_names(
        KeyCollectionMode::OwnOnly,
        KeyFilter::Enumerable,
        KeyConversion::NumbersToStrings,
    )?;
    let mut pairs = Vec::new();
    for i in 0..keys.get_array_length()? {
        let key: Unknown<'_> = keys.get_element(i)?;
        if key.get_type()? == ValueType::String {
            let v: Js = obj.get_property_unchecked(key)?;
            // SAFETY: the key is a string (checked above).
            pairs.push((unsafe { key.cast()? }, v.0));
        }
    }
    Ok(Value::Map(pairs))
}

/// Throws a core error as the JavaScript error its class names (`TypeError`,
/// `RangeError` or `Error`), with the core's message and `code`; returns what
/// napi-rs reads as "an exception is pending".
pub(crate) fn throw(env: &Env, e: snowmint::Error) -> napi::Error {
    throw_as(env, &e, e.to_string())
}

/// [`throw`] for the error `kind` with the message `message` (a lease error's
/// code and class are those of its core error; its message says more).
fn throw_as(env: &Env, kind: &snowmint::Error, message: String) -> napi::Error {
    let err = napi::Error::new(kind.code(), message);
    // SAFETY: `env` is the live environment of the current call.
    unsafe {
        match kind.class() {
            ErrorClass::Type => JsTypeError::from(err).throw_into(env.raw()),
            ErrorClass::Range => JsRangeError::from(err).throw_into(env.raw()),
            ErrorClass::Value => JsError::from(err).throw_into(env.raw()),
        }
    }
    napi::Error::new(Status::PendingException, String::new())
}

/// `result.or_throw(env)?`: a core (or lease) error thrown by [`throw`].
trait OrThrow<T> {
    fn or_throw(self, env: &Env) -> napi::Result<T>;
}

impl<T> OrThrow<T> for snowmint::Result<T> {
    fn or_throw(self, env: &Env) -> napi::Result<T> {
        self.map_err(|e| throw(env, e))
    }
}

impl<T> OrThrow<T> for Result<T, LeaseError> {
    fn or_throw(self, env: &Env) -> napi::Result<T> {
        self.map_err(|e| throw_as(env, &e.kind, e.to_string()))
    }
}

// ---- Layout -----------------------------------------------------------------------

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
    #[napi(factory)]
    pub fn preset(env: &Env, #[napi(ts_arg_type = "string")] name: Js) -> napi::Result<Layout> {
        let inner = name
            .0
            .into_text(Arg::Layout)
            .and_then(|s| snowmint::Layout::preset(&s));
        inner.or_throw(env).map(|inner| Layout { inner })
    }

    /// A layout from its JSON descriptor, e.g.
    /// `{"epoch_ms":0,"fields":[["timestamp",48],["sequence",16]]}`.
    #[napi(factory)]
    pub fn from_json(env: &Env, #[napi(ts_arg_type = "string")] json: Js) -> napi::Result<Layout> {
        let inner = json
            .0
            .into_text(Arg::Layout)
            .and_then(|s| snowmint::Layout::from_json(&s));
        inner.or_throw(env).map(|inner| Layout { inner })
    }

    /// A preset name or a JSON descriptor (a string starting with `{` or `"`).
    #[napi(factory)]
    pub fn parse(env: &Env, #[napi(ts_arg_type = "string")] s: Js) -> napi::Result<Layout> {
        s.0.to_layout().or_throw(env).map(|inner| Layout { inner })
    }

    /// The preset names, in a fixed order.
    #[napi]
    pub fn presets() -> Vec<&'static str> {
        snowmint::Layout::PRESETS.to_vec()
    }

    /// The canonical JSON descriptor.
    #[napi]
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
        self.inner.max_id().get()
    }

    /// The name of the preset equal to this layout, or `null`.
    #[napi(getter, ts_return_type = "string | null")]
    pub fn preset_name(&self) -> Option<&'static str> {
        self.inner.preset_name()
    }

    /// The fields, most significant first.
    #[napi(getter)]
    pub fn fields(&self) -> Vec<FieldInfo> {
        let field = |f: &snowmint::Field| FieldInfo {
            name: f.name().to_string(),
            bits: f.bits(),
            shift: f.shift(),
            kind: f.kind().as_str().to_string(),
        };
        self.inner.fields().iter().map(field).collect()
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
    #[napi]
    pub fn compose(
        &self,
        env: &Env,
        #[napi(ts_arg_type = "UintLike")] timestamp_ms: Js,
        #[napi(ts_arg_type = "UintLike")] sequence: Js,
        #[napi(ts_arg_type = "Record<string, UintLike>")] nodes: Option<Js>,
    ) -> napi::Result<u64> {
        let ms = timestamp_ms.0.to_time_ms().or_throw(env)?;
        let seq = sequence.0.to_sequence().or_throw(env)?;
        let nodes = opt(nodes).to_nodes(&self.inner).or_throw(env)?;
        self.inner
            .compose(ms, seq, &nodes)
            .map(Id::get)
            .or_throw(env)
    }

    /// The smallest and largest IDs of the time unit holding `timestampMs`.
    #[napi(ts_return_type = "[bigint, bigint]")]
    pub fn id_bounds(
        &self,
        env: &Env,
        #[napi(ts_arg_type = "UintLike")] timestamp_ms: Js,
    ) -> napi::Result<Vec<u64>> {
        let ms = timestamp_ms.0.to_time_ms().or_throw(env)?;
        let (lo, hi) = self.inner.id_bounds(ms).or_throw(env)?;
        Ok(vec![lo.get(), hi.get()])
    }

    /// True when the ID fits the layout and decodes to a time between the
    /// epoch and `nowMs` plus one day.
    #[napi]
    pub fn is_plausible(
        &self,
        env: &Env,
        #[napi(ts_arg_type = "IdLike")] id: Js,
        #[napi(ts_arg_type = "UintLike")] now_ms: Js,
    ) -> napi::Result<bool> {
        let id = id.0.to_id().or_throw(env)?;
        let now = now_ms.0.to_time_ms().or_throw(env)?;
        Ok(self.inner.is_plausible(id.get(), now))
    }
}

// ---- functions ----------------------------------------------------------------------

/// The ID in Crockford base32: 13 characters, upper case, sorts like the number.
#[napi]
pub fn to_base32(env: &Env, #[napi(ts_arg_type = "IdLike")] id: Js) -> napi::Result<String> {
    Ok(id.0.to_id().or_throw(env)?.to_string_in(Format::Base32))
}

/// Reads a Crockford base32 ID (case-insensitive; `I`/`L` read as 1, `O` as 0).
#[napi]
pub fn from_base32(env: &Env, #[napi(ts_arg_type = "string")] s: Js) -> napi::Result<u64> {
    s.0.to_id_in(Format::Base32).map(Id::get).or_throw(env)
}

/// The ID in base62 (`0-9A-Za-z`): 11 characters, sorts like the number.
#[napi]
pub fn to_base62(env: &Env, #[napi(ts_arg_type = "IdLike")] id: Js) -> napi::Result<String> {
    Ok(id.0.to_id().or_throw(env)?.to_string_in(Format::Base62))
}

/// Reads a base62 ID.
#[napi]
pub fn from_base62(env: &Env, #[napi(ts_arg_type = "string")] s: Js) -> napi::Result<u64> {
    s.0.to_id_in(Format::Base62).map(Id::get).or_throw(env)
}

/// The ID in `format`: `decimal`, `base32` or `base62`.
#[napi]
pub fn format_id(
    env: &Env,
    #[napi(ts_arg_type = "IdLike")] id: Js,
    #[napi(ts_arg_type = "'decimal' | 'base32' | 'base62'")] format: Js,
) -> napi::Result<String> {
    let id = id.0.to_id().or_throw(env)?;
    Ok(id.to_string_in(format.0.to_format().or_throw(env)?))
}

/// Reads an ID written in `format`: `decimal`, `base32` or `base62`.
#[napi]
pub fn parse_id(
    env: &Env,
    #[napi(ts_arg_type = "string")] s: Js,
    #[napi(ts_arg_type = "'decimal' | 'base32' | 'base62'")] format: Js,
) -> napi::Result<u64> {
    let format = format.0.to_format().or_throw(env)?;
    s.0.to_id_in(format).map(Id::get).or_throw(env)
}

// ---- generators -----------------------------------------------------------------------

/// A generator's layout, node values and options.
fn generator(layout: Js, nodes: Option<Js>, options: Option<Js>) -> snowmint::Result<Config> {
    let layout = layout.0.to_layout()?;
    let nodes = opt(nodes).to_nodes(&layout)?;
    Ok((layout, nodes, opt(options).to_options()?))
}

type Config = (snowmint::Layout, snowmint::Nodes, snowmint::Options);

/// The thread-safe generator on the system clock.
///
/// Generators with the same layout and node values share one state in the
/// whole process, worker threads included, so they never repeat an ID. Other
/// processes (`cluster`, `child_process`) need node values of their own, or
/// a `lease` option that assigns one node field from a shared store.
#[napi]
pub struct Generator {
    inner: Arc<AnyGenerator>,
}

#[napi]
impl Generator {
    #[napi(constructor)]
    pub fn new(
        env: &Env,
        this: This<'_>,
        #[napi(ts_arg_type = "Layout | string")] layout: Js,
        #[napi(ts_arg_type = "Record<string, UintLike>")] nodes: Option<Js>,
        #[napi(ts_arg_type = "GeneratorOptions")] options: Option<Js>,
    ) -> napi::Result<Self> {
        let layout = layout.0.to_layout().or_throw(env)?;
        // A seed of 0 (the default) asks the core for one from the system.
        let inner = AnyGenerator::from_values(layout, &opt(nodes), &opt(options));
        let inner = Arc::new(inner.or_throw(env)?);
        // The instance's own `nextId` shadows the method below (see `fast`).
        fast::bind_next_id(env, &this, &inner)?;
        Ok(Generator { inner })
    }

    /// The core generator's address (for `ffi::snowmint_node_next_id`).
    pub(crate) fn address(&self) -> usize {
        Arc::as_ptr(&self.inner) as usize
    }

    /// The next ID. Blocks (sleeps) when a policy says to wait, at most for
    /// the few time units the policy allows.
    #[napi]
    pub fn next_id(&self, env: &Env) -> napi::Result<u64> {
        Ok(self.inner.next_id().or_throw(env)?.get())
    }

    /// The next ID as a decimal string (for JSON).
    #[napi]
    pub fn next_id_string(&self, env: &Env) -> napi::Result<String> {
        Ok(self
            .inner
            .next_id()
            .or_throw(env)?
            .to_string_in(Format::Decimal))
    }

    /// `n` increasing IDs (1 to 2^32).
    #[napi]
    pub fn next_ids(
        &self,
        env: &Env,
        #[napi(ts_arg_type = "UintLike")] n: Js,
    ) -> napi::Result<BigUint64Array> {
        let mut ids = vec![0; n.0.to_count().or_throw(env)?];
        self.inner.next_ids(&mut ids).or_throw(env)?;
        Ok(BigUint64Array::new(ids))
    }

    /// The generator's layout.
    #[napi(getter)]
    pub fn layout(&self) -> Layout {
        let inner = *self.inner.config().layout();
        Layout { inner }
    }

    /// The node values by field name, the leased one included.
    #[napi(getter, ts_return_type = "Record<string, number>")]
    pub fn nodes<'e>(&self, env: &'e Env) -> napi::Result<Object<'e>> {
        let config = self.inner.config();
        let mut obj = Object::new(env)?;
        for (f, v) in config.layout().nodes().zip(config.nodes().values()) {
            obj.set(f.name(), *v as f64)?;
        }
        Ok(obj)
    }

    /// The lease's state (see `LeaseInfo`), or `null` without a `lease` option.
    #[napi(getter, ts_return_type = "LeaseInfo | null")]
    pub fn lease<'e>(&self, env: &'e Env) -> napi::Result<Option<Object<'e>>> {
        let Some(info) = self.inner.lease() else {
            return Ok(None);
        };
        let mut obj = Object::new(env)?;
        for (_, key, v) in info.entries() {
            match v {
                // Unix ms and small counters: all below 2^53.
                InfoValue::Int(n) => obj.set(key, n as f64)?,
                InfoValue::Text(t) => obj.set(key, t)?,
                InfoValue::None => obj.set(key, Null)?,
            }
        }
        Ok(Some(obj))
    }

    /// Releases the lease: the generator stops issuing (`nextId` then throws
    /// `lease_expired`) and its slot is free for another. Calling it again
    /// does nothing; without a lease it does nothing at all. Garbage
    /// collection releases a generator's lease too, but at no set time.
    #[napi]
    pub fn close(&self, env: &Env) -> napi::Result<()> {
        self.inner.close().or_throw(env)
    }
}

/// The pure generator: the caller passes the time, so it can be driven by a
/// script of clock readings. The seed is used as given (default 0). Not
/// shared with any other generator.
#[napi]
pub struct PureGenerator {
    inner: snowmint::PureGenerator,
}

#[napi]
impl PureGenerator {
    #[napi(constructor)]
    pub fn new(
        env: &Env,
        #[napi(ts_arg_type = "Layout | string")] layout: Js,
        #[napi(ts_arg_type = "Record<string, UintLike>")] nodes: Option<Js>,
        #[napi(ts_arg_type = "GeneratorOptions")] options: Option<Js>,
    ) -> napi::Result<Self> {
        let (l, n, o) = generator(layout, nodes, options).or_throw(env)?;
        let inner = snowmint::PureGenerator::new(l, n, o).or_throw(env)?;
        Ok(PureGenerator { inner })
    }

    /// The next ID at clock reading `nowMs` (`{ id }`), or the Unix ms to ask
    /// again at (`{ retryAt }`).
    #[napi(ts_return_type = "{ id: bigint } | { retryAt: number }")]
    pub fn next<'e>(
        &mut self,
        env: &'e Env,
        #[napi(ts_arg_type = "UintLike")] now_ms: Js,
    ) -> napi::Result<Object<'e>> {
        let now = now_ms.0.to_time_ms().or_throw(env)?;
        let mut obj = Object::new(env)?;
        match self.inner.next(now).or_throw(env)? {
            Next::Id(id) => obj.set("id", id.get())?,
            Next::RetryAt(at) => obj.set("retryAt", at as f64)?,
        }
        Ok(obj)
    }

    /// IDs only in time units up to the one holding `untilMs` (a lease's
    /// confirmed reservation), `lease_expired` past it; `null` removes the bound.
    #[napi]
    pub fn reserve_until(
        &mut self,
        env: &Env,
        #[napi(ts_arg_type = "UintLike | null")] until_ms: Option<Js>,
    ) -> napi::Result<()> {
        let until = opt(until_ms).to_opt_time_ms().or_throw(env)?;
        self.inner.reserve_until(until);
        Ok(())
    }
}

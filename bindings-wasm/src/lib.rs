//! The WebAssembly binding of snowmint (wasm-bindgen): the browser and Node
//! package, and the engine of the decoder page (`www/`).
//!
//! A translation and nothing more: each JavaScript argument becomes a
//! [`snowmint::Value`] in one function ([`value`]), the core's conversion
//! layer turns it into an ID, a time, a layout, node values or options, and a
//! core error becomes a JavaScript error in one function ([`js_error`]). The
//! exports are wasm-bindgen's ordinary classes and functions; `js/api.js`
//! adds what the JavaScript API builds in JavaScript (the `Parts` objects of
//! `decode`, shared with the Node package, the columns of `decodeMany`, and
//! the free functions taking a layout string, parsed once).
//!
//! std's clock panics on `wasm32-unknown-unknown`, so `Generator` runs on
//! [`DateClock`] (`Date.now()`).
// Its types are printed by the host language (repr, inspect, the C header's
// accessors), not by Rust's Debug: the workspace's missing_debug_implementations
// does not apply.
#![allow(missing_debug_implementations)]

use js_sys::{Array, Float64Array, Object, Reflect, Symbol};
use snowmint::{Arg, Clock, ErrorClass, Format, Id, Next, OptionProblem, Value};
use std::cell::UnsafeCell;
use wasm_bindgen::prelude::*;

// A small allocator (about 1 KB of code instead of dlmalloc's 7 KB): the
// module's allocations are few and short-lived. `AssumeSingleThreaded` is
// sound: the module is built without the atomics feature, so an instance
// never runs on two threads.
#[cfg(target_arch = "wasm32")]
#[global_allocator]
// SAFETY: see above.
static ALLOCATOR: lol_alloc::AssumeSingleThreaded<lol_alloc::FreeListAllocator> =
    unsafe { lol_alloc::AssumeSingleThreaded::new(lol_alloc::FreeListAllocator::new()) };

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = Date, js_name = now)]
    fn date_now() -> f64;
}

// ---- errors -------------------------------------------------------------------

/// A failed call: the JavaScript error to throw. A core error becomes one
/// at once ([`js_error`]), so that what moves through every `?` is one
/// handle, not the core's error (the copies of a large error value in every
/// export cost the module several KB); an exception that JavaScript threw
/// while an argument was read (a getter) is passed on as it is.
pub struct Fail(JsValue);

impl From<snowmint::Error> for Fail {
    #[inline(never)]
    fn from(e: snowmint::Error) -> Fail {
        Fail(js_error(&e).into())
    }
}

impl From<JsValue> for Fail {
    fn from(e: JsValue) -> Fail {
        Fail(e)
    }
}

impl From<Fail> for JsValue {
    fn from(f: Fail) -> JsValue {
        f.0
    }
}

type Res<T> = Result<T, Fail>;

/// The JavaScript error of a core error: its class from `Error::class()`
/// (`TypeError`, `RangeError` or `Error`), its message the core's, and its
/// `code` property the core's code.
fn js_error(e: &snowmint::Error) -> js_sys::Error {
    let mut message = String::new();
    let _ = e.write_message(&mut message);
    let error: js_sys::Error = match e.class() {
        ErrorClass::Type => js_sys::TypeError::new(&message).into(),
        ErrorClass::Range => js_sys::RangeError::new(&message).into(),
        _ => js_sys::Error::new(&message),
    };
    let _ = Reflect::set(&error, &"code".into(), &e.code().into());
    error
}

// ---- arguments ----------------------------------------------------------------

/// A JavaScript value as the core's loose input. `top`: a plain object
/// becomes a map of its own enumerable keys (nodes, options); below the top
/// it is only "an object", so a value is read one level deep at most.
#[inline(never)]
fn value(v: &JsValue, top: bool) -> Res<Value> {
    Ok(if let Some(n) = v.as_f64() {
        Value::Float(n)
    } else if v.is_bigint() {
        // wasm-bindgen's `u64::try_from` refuses what is outside 0..2^64
        // (its `as u64` would wrap); the sign comes from a comparison.
        let negative = v.lt(&JsValue::from(0u64));
        let magnitude = if negative { -v } else { v.clone() };
        match u64::try_from(magnitude) {
            Ok(low) => Value::Int {
                negative,
                low,
                lossless: true,
            },
            Err(_) => Value::Int {
                negative,
                low: 0,
                lossless: false,
            },
        }
    } else if let Some(s) = v.as_string() {
        Value::Str(s)
    } else if let Some(b) = v.as_bool() {
        Value::Bool(b)
    } else if v.is_undefined() || v.is_null() {
        Value::Absent
    } else if let Some(layout) = layout_of(v) {
        Value::Layout(layout)
    } else if v.is_function() {
        Value::Other("a function")
    } else if v.is_symbol() {
        Value::Other("a symbol")
    } else if Array::is_array(v) {
        Value::Other("an array")
    } else if !top {
        Value::Other("an object")
    } else {
        let mut pairs = Vec::new();
        for key in Object::keys(v.unchecked_ref::<Object>()) {
            let item = value(&Reflect::get(v, &key)?, false)?;
            pairs.push((key.as_string().unwrap_or_default(), item));
        }
        Value::Map(pairs)
    })
}

/// The argument of a value-only parameter (an ID, a time, a name).
fn arg(v: &JsValue) -> Res<Value> {
    value(v, false)
}

// The conversions of the exports' arguments, each out of line: inlined into
// every export that takes one, with a `Value` on the stack each time, they
// cost the module several KB.

#[inline(never)]
fn id_arg(v: &JsValue) -> Res<Id> {
    Ok(arg(v)?.to_id()?)
}

#[inline(never)]
fn time_arg(v: &JsValue) -> Res<u64> {
    Ok(arg(v)?.to_time_ms()?)
}

#[inline(never)]
fn layout_arg(v: &JsValue) -> Res<snowmint::Layout> {
    Ok(arg(v)?.to_layout()?)
}

// ---- layouts ------------------------------------------------------------------

/// A static of this module, used by one call at a time: the module is built
/// without the atomics feature, so an instance never runs on two threads,
/// and no reference to a static's contents outlives the call that took it.
/// (std's `thread_local!` would work too, at the cost of its lazy-state
/// checks and their panic messages in the module.)
struct Static<T>(UnsafeCell<T>);
// SAFETY: see above.
unsafe impl<T> Sync for Static<T> {}

impl<T> Static<T> {
    #[allow(clippy::mut_from_ref)]
    fn get(&self) -> &mut T {
        // SAFETY: see `Static`.
        unsafe { &mut *self.0.get() }
    }
}

/// Every distinct layout made so far, by handle (equal layouts share one; a
/// small entry each, never removed).
static LAYOUTS: Static<Vec<snowmint::Layout>> = Static(UnsafeCell::new(Vec::new()));

/// The property under which a `Layout` object keeps its handle.
fn handle_key() -> Symbol {
    Symbol::for_("snowmint.layout")
}

/// A `Layout` object's layout, or none for any other value.
fn layout_of(v: &JsValue) -> Option<snowmint::Layout> {
    if !v.is_object() {
        return None;
    }
    let h = Reflect::get(v, &handle_key()).ok()?.as_f64()?;
    LAYOUTS.get().get(h as usize).copied()
}

/// A new `Layout` object for `layout`, its handle under [`handle_key`] (so that
/// [`value`] recognises it).
fn wrap(layout: snowmint::Layout) -> JsValue {
    let all = LAYOUTS.get();
    let h = all.iter().position(|l| *l == layout).unwrap_or_else(|| {
        all.push(layout);
        all.len() - 1
    });
    let object = JsValue::from(Layout { layout });
    let _ = Reflect::set(&object, &handle_key(), &(h as f64).into());
    object
}

/// A layout. Make one with `Layout.preset`, `Layout.fromJson` or `Layout.parse`.
#[wasm_bindgen]
pub struct Layout {
    layout: snowmint::Layout,
}

impl Layout {
    #[inline(always)]
    fn decode_into(&self, id: u64) -> snowmint::Result<usize> {
        self.layout.decompose_f64(id, SCRATCH.get())
    }
}

/// Where `__decode` leaves the time, the sequence and the node values, read
/// by js/api.js through the view `__scratch()` returns.
static SCRATCH: Static<[f64; 2 + snowmint::MAX_NODES]> =
    Static(UnsafeCell::new([0.0; 2 + snowmint::MAX_NODES]));

#[wasm_bindgen]
impl Layout {
    /// A preset by name (`Layout::PRESETS`).
    pub fn preset(name: JsValue) -> Res<JsValue> {
        Ok(wrap(snowmint::Layout::preset(&text(&name, Arg::Layout)?)?))
    }

    /// A layout from its JSON descriptor.
    #[wasm_bindgen(js_name = fromJson)]
    pub fn from_json(json: JsValue) -> Res<JsValue> {
        Ok(wrap(snowmint::Layout::from_json(&text(
            &json,
            Arg::Layout,
        )?)?))
    }

    /// A preset name or a JSON descriptor.
    pub fn parse(s: JsValue) -> Res<JsValue> {
        Ok(wrap(snowmint::Layout::parse(&text(&s, Arg::Layout)?)?))
    }

    /// The preset names.
    pub fn presets() -> Array {
        snowmint::Layout::PRESETS
            .iter()
            .map(|&p| JsValue::from(p))
            .collect()
    }

    #[wasm_bindgen(js_name = toJson)]
    pub fn to_json(&self) -> String {
        self.layout.to_json()
    }

    #[wasm_bindgen(getter, js_name = epochMs)]
    pub fn epoch_ms(&self) -> f64 {
        self.layout.epoch_ms() as f64
    }

    #[wasm_bindgen(getter, js_name = timeUnitMs)]
    pub fn time_unit_ms(&self) -> f64 {
        self.layout.time_unit_ms() as f64
    }

    #[wasm_bindgen(getter, js_name = totalBits)]
    pub fn total_bits(&self) -> u32 {
        self.layout.total_bits()
    }

    #[wasm_bindgen(getter, js_name = maxId)]
    pub fn max_id(&self) -> u64 {
        self.layout.max_id().get()
    }

    #[wasm_bindgen(getter, js_name = timeEndMs)]
    pub fn time_end_ms(&self) -> f64 {
        self.layout.time_end_ms() as f64
    }

    #[wasm_bindgen(getter, js_name = i64EndMs)]
    pub fn i64_end_ms(&self) -> f64 {
        self.layout.i64_end_ms() as f64
    }

    #[wasm_bindgen(getter, js_name = jsSafeEndMs)]
    pub fn js_safe_end_ms(&self) -> f64 {
        self.layout.js_safe_end_ms() as f64
    }

    /// The preset's name, or `null`.
    #[wasm_bindgen(getter, js_name = presetName)]
    pub fn preset_name(&self) -> JsValue {
        self.layout
            .preset_name()
            .map_or(JsValue::NULL, JsValue::from)
    }

    /// `[{ name, bits, shift, kind }]`, from the top bit down.
    #[wasm_bindgen(getter)]
    pub fn fields(&self) -> Array {
        let field = |f: &snowmint::Field| {
            let o = Object::new();
            for (k, v) in [
                ("name", f.name().into()),
                ("bits", f.bits().into()),
                ("shift", f.shift().into()),
                ("kind", f.kind().as_str().into()),
            ] {
                let _ = Reflect::set(&o, &k.into(), &v);
            }
            o
        };
        self.layout.fields().iter().map(field).collect()
    }

    pub fn compose(&self, timestamp_ms: JsValue, sequence: JsValue, nodes: JsValue) -> Res<u64> {
        let ms = time_arg(&timestamp_ms)?;
        let sequence = arg(&sequence)?.to_sequence()?;
        let nodes = value(&nodes, true)?.to_nodes(&self.layout)?;
        Ok(self.layout.compose(ms, sequence, &nodes)?.get())
    }

    #[wasm_bindgen(js_name = idBounds)]
    pub fn id_bounds(&self, timestamp_ms: JsValue) -> Res<Array> {
        let (lo, hi) = self.layout.id_bounds(time_arg(&timestamp_ms)?)?;
        Ok(Array::of2(&lo.get().into(), &hi.get().into()))
    }

    #[wasm_bindgen(js_name = isPlausible)]
    pub fn is_plausible(&self, id: JsValue, now_ms: JsValue) -> Res<bool> {
        let id = id_arg(&id)?.get();
        Ok(self.layout.is_plausible(id, time_arg(&now_ms)?))
    }

    /// `decode` of an ID that js/api.js checked is a bigint in 0..2^64 (the
    /// hot path: wasm-bindgen passes it as a `u64`, and returns a number, not
    /// a Result, which would cost an array per call): 0 when the parts went
    /// to `__scratch`, 1 when the core refused the ID (js/api.js then passes
    /// it to `__decodeAny`, which throws the core's error).
    #[wasm_bindgen(js_name = __decode)]
    pub fn decode_u64(&self, id: u64) -> u32 {
        u32::from(self.decode_into(id).is_err())
    }

    /// `decodeMany`'s work: the IDs (a `BigUint64Array`, copied in) decoded
    /// into `out` as columns (`Layout::decompose_columns`, copied back).
    /// Returns -1, or the index of the first ID that is not one of the
    /// layout's (js/api.js then throws that ID's own error).
    #[wasm_bindgen(js_name = __decodeMany)]
    pub fn decode_many(&self, ids: &[u64], out: &mut [f64]) -> i32 {
        match self.layout.decompose_columns(ids, out) {
            Ok(()) => -1,
            Err((at, _)) => at as i32,
        }
    }

    /// `decode` of any other ID argument: converted, checked, decoded as
    /// above, and returned as a bigint.
    #[wasm_bindgen(js_name = __decodeAny)]
    pub fn decode_any(&self, id: JsValue) -> Res<u64> {
        let id = id_arg(&id)?.get();
        self.decode_into(id)?;
        Ok(id)
    }
}

/// The view of the scratch values (`__decode`): js/api.js asks again when a
/// growth of the module's memory detached it (its length is then 0).
#[wasm_bindgen(js_name = __scratch)]
pub fn scratch() -> Float64Array {
    // SAFETY: the scratch values never move; a growth of the module's memory
    // detaches the view (the engine shows it with a length of 0).
    unsafe { Float64Array::view(SCRATCH.get()) }
}

/// A string argument (a layout's name or JSON).
#[inline(never)]
fn text(v: &JsValue, what: Arg) -> Res<String> {
    Ok(arg(v)?.into_text(what)?)
}

/// `n` zeroes, or the core's error for a count too large (for this
/// module's memory: an allocation failure would abort the module).
fn zeroed<T: Clone + Default>(n: usize) -> Res<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| snowmint::Error::InvalidOption(OptionProblem::Count))?;
    v.resize(n, T::default());
    Ok(v)
}

// ---- ID strings -----------------------------------------------------------------

fn parse(s: &JsValue, format: Format) -> Res<u64> {
    Ok(arg(s)?.to_id_in(format)?.get())
}

#[wasm_bindgen(js_name = toBase32)]
pub fn to_base32(id: JsValue) -> Res<String> {
    Ok(id_arg(&id)?.to_string_in(Format::Base32))
}

#[wasm_bindgen(js_name = toBase62)]
pub fn to_base62(id: JsValue) -> Res<String> {
    Ok(id_arg(&id)?.to_string_in(Format::Base62))
}

#[wasm_bindgen(js_name = formatId)]
pub fn format_id(id: JsValue, format: JsValue) -> Res<String> {
    let id = id_arg(&id)?;
    Ok(id.to_string_in(arg(&format)?.to_format()?))
}

#[wasm_bindgen(js_name = fromBase32)]
pub fn from_base32(s: JsValue) -> Res<u64> {
    parse(&s, Format::Base32)
}

#[wasm_bindgen(js_name = fromBase62)]
pub fn from_base62(s: JsValue) -> Res<u64> {
    parse(&s, Format::Base62)
}

#[wasm_bindgen(js_name = parseId)]
pub fn parse_id(s: JsValue, format: JsValue) -> Res<u64> {
    let format = arg(&format)?.to_format()?;
    parse(&s, format)
}

// ---- generators -------------------------------------------------------------------

/// The clock of `Generator`: `Date.now()` (std's clock panics on this
/// target). Waiting spins (the core's default): a synchronous call cannot
/// sleep, and waits last at most a few time units. A `Date.now()` that
/// stands still (a Cloudflare Worker's, within a request) ends the wait
/// after `snowmint::STALL_READS` equal readings: `clock_stalled`.
#[derive(Clone, Copy, Debug, Default)]
pub struct DateClock;

impl Clock for DateClock {
    fn now_ms(&self) -> u64 {
        // Before 1970 reads as 0 (`time_before_epoch` for every real layout).
        date_now().max(0.0) as u64
    }
}

/// The layout, node values and options of a generator's constructor.
#[inline(never)]
fn config(
    layout: &JsValue,
    nodes: &JsValue,
    options: &JsValue,
) -> Res<(snowmint::Layout, snowmint::Nodes, snowmint::Options)> {
    let layout = layout_arg(layout)?;
    let nodes = value(nodes, true)?.to_nodes(&layout)?;
    Ok((layout, nodes, value(options, true)?.to_options()?))
}

/// The generator on `Date.now()`. Generators with the same layout and node
/// values share one state in the module instance, so they never repeat an ID.
#[wasm_bindgen]
pub struct Generator(snowmint::Generator<DateClock>);

#[wasm_bindgen]
impl Generator {
    /// Without a seed in the options, `random:N` sequence starts are seeded
    /// from `Math.random()` (std's hash keys are fixed on this target).
    #[wasm_bindgen(constructor)]
    pub fn new(layout: JsValue, nodes: JsValue, options: JsValue) -> Res<Generator> {
        let (layout, nodes, mut options) = config(&layout, &nodes, &options)?;
        if options.seed == 0 {
            let half = || (js_sys::Math::random() * 4294967296.0) as u64;
            options.seed = (half() << 32 | half()).max(1);
        }
        Ok(Generator(snowmint::Generator::with_clock(
            layout, nodes, options, DateClock,
        )?))
    }

    #[wasm_bindgen(js_name = nextId)]
    pub fn next_id(&self) -> Res<u64> {
        Ok(self.0.next_id()?.get())
    }

    #[wasm_bindgen(js_name = nextIdString)]
    pub fn next_id_string(&self) -> Res<String> {
        Ok(self.0.next_id()?.to_string_in(Format::Decimal))
    }

    /// `n` IDs (1 to 2^32) as a `BigUint64Array`. Where `Date.now()` stands
    /// still (Cloudflare Workers), more than a time unit's sequence throws
    /// `clock_stalled` (the call's IDs are skipped, never reissued) unless
    /// `sequenceExhausted: 'borrow:N'` covers them.
    #[wasm_bindgen(js_name = nextIds)]
    pub fn next_ids(&self, n: JsValue) -> Res<Vec<u64>> {
        let mut ids = zeroed(arg(&n)?.to_count()?)?;
        self.0.next_ids(&mut ids)?;
        Ok(ids)
    }

    #[wasm_bindgen(getter)]
    pub fn layout(&self) -> JsValue {
        wrap(*self.0.config().layout())
    }

    /// The node values by field name.
    #[wasm_bindgen(getter)]
    pub fn nodes(&self) -> Object {
        let config = self.0.config();
        let o = Object::new();
        for (f, v) in config.layout().nodes().zip(config.nodes().values()) {
            let _ = Reflect::set(&o, &f.name().into(), &(*v as f64).into());
        }
        o
    }
}

/// The pure generator: the caller passes the time (`next(nowMs)`).
#[wasm_bindgen]
pub struct PureGenerator(snowmint::PureGenerator);

#[wasm_bindgen]
impl PureGenerator {
    #[wasm_bindgen(constructor)]
    pub fn new(layout: JsValue, nodes: JsValue, options: JsValue) -> Res<PureGenerator> {
        let (layout, nodes, options) = config(&layout, &nodes, &options)?;
        Ok(PureGenerator(snowmint::PureGenerator::new(
            layout, nodes, options,
        )?))
    }

    /// `{ id }`, or `{ retryAt }` (Unix ms) when the sequence is used up.
    pub fn next(&mut self, now_ms: JsValue) -> Res<Object> {
        let now = time_arg(&now_ms)?;
        let (key, v): (&str, JsValue) = match self.0.next(now)? {
            Next::Id(id) => ("id", id.get().into()),
            Next::RetryAt(at) => ("retryAt", (at as f64).into()),
        };
        let o = Object::new();
        let _ = Reflect::set(&o, &key.into(), &v);
        Ok(o)
    }

    /// IDs only in time units up to the one holding `untilMs` (a lease's
    /// confirmed reservation), `lease_expired` past it; `null` removes it.
    #[wasm_bindgen(js_name = reserveUntil)]
    pub fn reserve_until(&mut self, until_ms: JsValue) -> Res<()> {
        let absent = until_ms.is_undefined() || until_ms.is_null();
        self.0.reserve_until(if absent {
            None
        } else {
            Some(time_arg(&until_ms)?)
        });
        Ok(())
    }
}

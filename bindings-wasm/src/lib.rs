//! The WebAssembly binding of snowmint (wasm-bindgen): the browser and Node
//! package, and the engine of the decoder page (`www/`).
//!
//! A thin layer: it converts JavaScript values to the core's types and back,
//! and core errors to JavaScript errors. Every rule about IDs, layouts and
//! generation lives in the core (`snowmint`); nothing here re-implements one.
//! With `js/api.js` it exports exactly the API of the native Node package
//! (`bindings-node/`), and the one shared suite in `tests/js/` drives both.
//!
//! The module's interface is numbers and strings only (its size: each
//! exported function taking JavaScript values cost wasm-bindgen a shim of
//! about 0.5 KB, plus the conversions inlined into it). `js/api.js` holds the
//! JavaScript classes and functions; for each call it pushes the arguments
//! with the `__arg*` exports (each value tagged with its JavaScript type,
//! see [`Arg`]), then calls the operation (`__op`, see [`op`]), which converts and checks
//! them here exactly as before, and returns a status: 0, or the failure's
//! class and code (see [`status`]), its message waiting for `__string`.
//! Results are left in [`SCRATCH`] (numbers) or returned as strings.
//! `layout.decode(bigint)`, the hot path, is one call with no pushed
//! arguments: [`raw_decode`].
//!
//! Conventions of the JavaScript API:
//! - IDs are `bigint` out, and `bigint`, decimal `string` or safe-integer
//!   `number` in, range-checked by the core (`Id::from_bigint`,
//!   `Id::from_f64`, `Id::parse`), never wrapped or rounded.
//! - A core error becomes an `Error` whose `code` is the core's code
//!   (`Error::code`, the cross-language contract). An argument of the wrong
//!   type becomes a `TypeError`, a number out of its range a `RangeError`;
//!   both carry a `code` too (see [`fail`]).
//! - Nothing here may panic on input: on `wasm32-unknown-unknown` a panic
//!   aborts the module (an `unreachable` trap), which would leave it unusable.
//!
//! std's clock panics on `wasm32-unknown-unknown`, so the generator runs on
//! [`DateClock`] (`Date.now()`) through `SyncGenerator::with_clock`.

use snowmint::{Clock, Format, Generator as SyncGenerator, Id, Next, Nodes, Options};
use std::cell::UnsafeCell;
use std::collections::TryReserveError;
use wasm_bindgen::prelude::*;

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

#[wasm_bindgen]
extern "C" {
    /// `String(n)`: a number as JavaScript prints it. Rust's float
    /// formatting would add about 20 KB to the module for a few error
    /// messages.
    #[wasm_bindgen(js_name = String)]
    fn number_to_string(n: f64) -> String;
    /// `Date.now()`.
    #[wasm_bindgen(js_namespace = Date, js_name = now)]
    fn date_now() -> f64;
}

// ---- module state -------------------------------------------------------------

/// A static of this module. The module is built without the atomics feature,
/// so it never runs on two threads (see ALLOCATOR); on the host (tests,
/// clippy) only the exports touch these, each call to completion, and no
/// reference to their contents outlives a call.
struct Global<T>(UnsafeCell<T>);
// SAFETY: see above.
unsafe impl<T> Sync for Global<T> {}

impl<T> Global<T> {
    #[allow(clippy::mut_from_ref)]
    fn get(&self) -> &mut T {
        // SAFETY: see `Global`; callers never hold two references to one
        // global at once.
        unsafe { &mut *self.0.get() }
    }
}

/// The most node fields a layout has (the core's limit).
const MAX_NODES: usize = snowmint::MAX_NODES;

/// Where calls leave their numeric results, read by js/api.js through
/// typed-array views: slots 0 and 1 as `u64` (IDs), and as `f64` slot 1 the
/// time (Unix ms), slot 2 the sequence, slots 3.. the node values (a
/// decode), or other numbers.
static SCRATCH: Global<[f64; 3 + MAX_NODES]> = Global(UnsafeCell::new([0.0; 3 + MAX_NODES]));
/// Layouts by handle (equal layouts share one; a small entry per distinct
/// layout, never removed).
static LAYOUTS: Global<Vec<&'static snowmint::Layout>> = Global(UnsafeCell::new(Vec::new()));
/// Generators by handle (freed by `__genFree` when js/api.js's objects are
/// collected).
static GENERATORS: Global<Vec<Option<Gen>>> = Global(UnsafeCell::new(Vec::new()));
/// The pushed arguments of the next operation.
static ARGS: Global<Vec<Arg>> = Global(UnsafeCell::new(Vec::new()));
/// The last failure, for [`status`] and `__string`: its status and message.
static FAILURE: Global<(u32, String)> = Global(UnsafeCell::new((0, String::new())));
/// The last string result, for `__string`.
static TEXT: Global<String> = Global(UnsafeCell::new(String::new()));
/// `decodeMany`'s buffers: the IDs (written by js/api.js) and the columns.
static BATCH: Global<(Vec<u64>, Vec<f64>)> = Global(UnsafeCell::new((Vec::new(), Vec::new())));

enum Gen {
    Sync(SyncGenerator<DateClock>),
    Pure(snowmint::PureGenerator),
}

// ---- errors -----------------------------------------------------------------

/// A failed operation. What failed (the JavaScript error's class, its code
/// and message) was recorded in [`FAILURE`] when it happened ([`fail`]), so
/// the error moves through every `?` as nothing at all: carrying it (a core
/// error, a message) up the calls cost several KB of the module.
struct Failed;

type Res<T> = Result<T, Failed>;

/// The class of a JavaScript error (the status's high part, see [`status`]):
/// `Error` for core errors, `TypeError` for an argument of the wrong type,
/// `RangeError` for a number out of its range (negative, fractional, not a
/// safe integer, a bigint outside 0..2^64). Each carries a `code`.
const ERROR: u32 = 0;
const TYPE_ERROR: u32 = 1;
const RANGE_ERROR: u32 = 2;

/// The index of the core code `name` in `snowmint::Error::ALL_CODES`,
/// found when compiling (a name that is not a code fails the build): the
/// binding's failures carry that index, as the status does (see [`status`]).
const fn code(name: &str) -> usize {
    let codes = snowmint::Error::ALL_CODES;
    let mut i = 0;
    while i < codes.len() {
        let (a, b) = (codes[i].as_bytes(), name.as_bytes());
        let mut same = a.len() == b.len();
        let mut j = 0;
        while same && j < a.len() {
            same = a[j] == b[j];
            j += 1;
        }
        if same {
            return i;
        }
        i += 1;
    }
    panic!("not a code of snowmint::Error::ALL_CODES")
}

const INVALID_ID: usize = code("invalid_id");
const INVALID_LAYOUT: usize = code("invalid_layout");
const INVALID_OPTION: usize = code("invalid_option");
const NODE_OUT_OF_RANGE: usize = code("node_out_of_range");
const TIME_BEFORE_EPOCH: usize = code("time_before_epoch");
const TIME_OVERFLOW: usize = code("time_overflow");
const UNKNOWN_FIELD: usize = code("unknown_field");
const UNKNOWN_PRESET: usize = code("unknown_preset");

/// Records a failure: an error of `class` with `code` (an index in the
/// core's `Error::ALL_CODES`, see [`code`]) and the message made of
/// `message`.
fn fail(class: u32, code: usize, message: &[&str]) -> Failed {
    let (status, m) = FAILURE.get();
    *status = 1 + class * 16 + code as u32;
    m.clear();
    for piece in message {
        m.push_str(piece);
    }
    Failed
}

/// Records a core error as an error of `class`, with the core's code and
/// message (`Error::code`, the cross-language contract, and
/// `Error::write_message`, which stays clear of `core::fmt`'s machinery).
///
/// The core's `Error` is `#[non_exhaustive]`, so no match can list every
/// variant; none is needed, because JavaScript has one error form for all of
/// them and the code comes from the core itself. The shared suite
/// (`tests/js/`) provokes every code of `vectors/codes.json` through this
/// path, so a new core variant is covered the day it gets a vector.
fn fail_core(class: u32, e: snowmint::Error) -> Failed {
    let failed = fail(class, e.code_index(), &[]);
    // Writing into a String cannot fail.
    let _ = e.write_message(&mut FAILURE.get().1);
    failed
}

impl From<snowmint::Error> for Failed {
    fn from(e: snowmint::Error) -> Failed {
        fail_core(ERROR, e)
    }
}

/// A core error about a number's range (from `Id::from_f64` or
/// `Id::from_bigint`): a `RangeError` with the core's code and message.
fn range(e: snowmint::Error) -> Failed {
    fail_core(RANGE_ERROR, e)
}

/// An operation's status for js/api.js: 0 on success; on failure
/// `1 + class * 16 + code`, where class is [`ERROR`], [`TYPE_ERROR`] or
/// [`RANGE_ERROR`] and code the index of the error's code in
/// `snowmint::Error::ALL_CODES` (whose names js/api.js gets from `__string`),
/// the message kept for `__string`. Also clears the pushed arguments.
fn status(r: Res<()>) -> u32 {
    ARGS.get().clear();
    match r {
        Ok(()) => 0,
        Err(Failed) => FAILURE.get().0,
    }
}

/// The operations of js/api.js, each with its pushed arguments (see
/// [`Arg`]) and `h`: a layout or generator handle, or which variant of the
/// operation (see each function). One export for all of them: each export
/// cost the module its own copy of taking and dropping the arguments and of
/// the status, and wasm-bindgen's JavaScript glue a function.
#[wasm_bindgen(js_name = __op, skip_typescript)]
pub fn op(op: u32, h: u32, x: u32) -> u32 {
    let mut args = Args::take();
    let args = &mut args;
    status(match op {
        0 => decode_any(h, args),
        1 => batch(h, args),
        2 => decode_many(h),
        3 => layout(h, args),
        4 => layout_numbers(h),
        5 => compose(h, args),
        6 => bounds(h, args),
        7 => plausible(h, args),
        8 => format(h, args),
        9 => parse(h, args),
        10 => gen_new(h, args),
        11 => gen_next(h, x),
        12 => gen_next_ids(h, args),
        13 => gen_layout(h),
        _ => pure_next(h, args),
    })
}

/// The strings of js/api.js: 0 the core's error code of index `h` (in
/// `ALL_CODES`), 1 the message of the last failed operation, 2 the last
/// string result (`toBase32`, `nextIdString`...), 3 to 6 layout strings
/// (see [`layout_text`]). One export for all: each export returning a
/// string cost wasm-bindgen's JavaScript glue a function of its own.
#[wasm_bindgen(js_name = __string, skip_typescript)]
pub fn string(what: u32, h: u32) -> String {
    match what {
        0 => item(&snowmint::Error::ALL_CODES, h),
        1 => std::mem::take(&mut FAILURE.get().1),
        2 => std::mem::take(TEXT.get()),
        _ => layout_text(h, what - 3),
    }
}

/// Item `i` of a list, or an empty string past its end (lists are read
/// item by item: joining them cost the module more than the calls cost).
fn item(list: &[&str], i: u32) -> String {
    String::from(list.get(i as usize).copied().unwrap_or_default())
}

/// The address of [`SCRATCH`] in the module's memory. js/api.js reads that
/// memory as the instance's `memory` export, which each package's index.js
/// hands it: an export returning the `WebAssembly.Memory` (a `JsValue`)
/// cost the module 0.6 KB of wasm-bindgen's externref support.
#[wasm_bindgen(js_name = __scratch, skip_typescript)]
pub fn scratch() -> u32 {
    SCRATCH.0.get() as usize as u32
}

/// `n` in decimal, written into `buf` (the core's decimal ID encoding: Rust's
/// integer formatting would bring `core::fmt` into the module).
fn decimal(n: usize, buf: &mut [u8; snowmint::MAX_STR_LEN]) -> &str {
    Id::new(n as u64).encode(Format::Decimal, buf)
}

// ---- arguments ----------------------------------------------------------------

/// One pushed argument: a JavaScript value as js/api.js describes it.
enum Arg {
    Number(f64),
    /// A bigint: its sign, its low 64 bits, and whether they are all of it.
    BigInt {
        negative: bool,
        low: u64,
        lossless: bool,
    },
    String(String),
    Undefined,
    Null,
    /// An object: `len` key/value pairs follow (its own enumerable string
    /// keys, each a `String` then the value), when js/api.js spreads it.
    Object(u32),
    /// A `Layout` of js/api.js: its handle.
    Layout(u32),
    /// A `BigUint64Array` of this length.
    U64Array(u32),
    /// A `Float64Array` of this length.
    F64Array(u32),
    /// A boolean, function or symbol.
    Other,
}

/// Pushes a number.
#[wasm_bindgen(js_name = __argNumber, skip_typescript)]
pub fn arg_number(n: f64) {
    ARGS.get().push(Arg::Number(n));
}

/// Pushes a bigint (`low` = `BigInt.asUintN(64, v)`, `lossless` = `low === v`).
#[wasm_bindgen(js_name = __argBigInt, skip_typescript)]
pub fn arg_bigint(low: u64, negative: bool, lossless: bool) {
    ARGS.get().push(Arg::BigInt {
        negative,
        low,
        lossless,
    });
}

/// Pushes a string.
#[wasm_bindgen(js_name = __argString, skip_typescript)]
pub fn arg_string(s: String) {
    ARGS.get().push(Arg::String(s));
}

/// Pushes any other value: 0 `undefined`, 1 `null`, 2 an object with `n`
/// pairs following, 3 a `Layout` (handle `n`), 4 a `BigUint64Array` and 5 a
/// `Float64Array` (length `n`), 6 another value; 7 drops the arguments
/// pushed so far (js/api.js, when reading an argument threw).
#[wasm_bindgen(js_name = __argOther, skip_typescript)]
pub fn arg_other(kind: u32, n: u32) {
    if kind == 7 {
        return ARGS.get().clear();
    }
    ARGS.get().push(match kind {
        0 => Arg::Undefined,
        1 => Arg::Null,
        2 => Arg::Object(n),
        3 => Arg::Layout(n),
        4 => Arg::U64Array(n),
        5 => Arg::F64Array(n),
        _ => Arg::Other,
    });
}

/// The pushed arguments, read in order; a missing one reads as `undefined`.
struct Args {
    all: std::vec::IntoIter<Arg>,
}

impl Args {
    fn take() -> Args {
        Args {
            all: std::mem::take(ARGS.get()).into_iter(),
        }
    }
    fn next(&mut self) -> Arg {
        self.all.next().unwrap_or(Arg::Undefined)
    }
}

/// The largest integer a JavaScript number holds exactly (2^53 - 1).
const MAX_SAFE: f64 = 9007199254740991.0;

/// An ID argument: `bigint`, decimal `string` or safe-integer `number`.
fn id_arg(v: Arg) -> Res<u64> {
    match v {
        Arg::BigInt {
            negative,
            low,
            lossless,
        } => Id::from_bigint(negative, low, lossless)
            .map(Id::get)
            .map_err(range),
        Arg::Number(n) => Id::from_f64(n).map(Id::get).map_err(range),
        Arg::String(s) => Ok(Id::parse(&s, Format::Decimal)?.get()),
        _ => Err(fail(
            TYPE_ERROR,
            INVALID_ID,
            &["an ID must be a bigint, a decimal string or a safe integer number"],
        )),
    }
}

/// A `number` argument that must be a non-negative safe integer (a time, a
/// sequence or node value, a count). `code` is the core code whose meaning
/// fits the argument; `negative_code` is used for negative numbers.
fn uint_arg(v: Arg, what: &str, code: usize, negative_code: usize) -> Res<u64> {
    let Arg::Number(n) = v else {
        return Err(fail(TYPE_ERROR, code, &[what, " must be a number"]));
    };
    if n < 0.0 {
        let got = number_to_string(n);
        let message = [what, " must not be negative (got ", &got, ")"];
        return Err(fail(RANGE_ERROR, negative_code, &message));
    }
    // `n as u64` saturates and truncates; the round trip shows whether `n`
    // was an integer (f64::trunc needs a libm on this target).
    if n.is_nan() || n > MAX_SAFE || (n as u64) as f64 != n {
        let got = number_to_string(n);
        let message = [what, " must be a safe integer (got ", &got, ")"];
        return Err(fail(RANGE_ERROR, code, &message));
    }
    Ok(n as u64)
}

/// A time in Unix milliseconds.
fn time_arg(v: Arg) -> Res<u64> {
    uint_arg(v, "a time in Unix ms", TIME_OVERFLOW, TIME_BEFORE_EPOCH)
}

fn string_arg(v: Arg, what: &str, code: usize) -> Res<String> {
    match v {
        Arg::String(s) => Ok(s),
        _ => Err(fail(TYPE_ERROR, code, &[what, " must be a string"])),
    }
}

fn format_arg(v: Arg) -> Res<Format> {
    Ok(Format::from_name(&string_arg(
        v,
        "the format",
        INVALID_ID,
    )?)?)
}

/// A registered layout by handle.
fn layout_of(h: u32) -> Res<&'static snowmint::Layout> {
    LAYOUTS
        .get()
        .get(h as usize)
        .copied()
        .ok_or_else(|| fail(TYPE_ERROR, INVALID_LAYOUT, &["not a live Layout"]))
}

/// A `Layout` or a string for `Layout.parse` (preset name or JSON),
/// registered as `Layout.parse` does (js/api.js's functions taking a layout
/// string do the same).
fn layout_arg(v: Arg) -> Res<&'static snowmint::Layout> {
    match v {
        Arg::String(s) => layout_of(register(snowmint::Layout::parse(&s)?)),
        Arg::Layout(h) => layout_of(h),
        _ => Err(fail(
            TYPE_ERROR,
            INVALID_LAYOUT,
            &["a layout must be a Layout or a string (a preset name or a JSON descriptor)"],
        )),
    }
}

/// The handle of `layout` (equal layouts share one). Layouts are never
/// removed, so each is kept for good (`Box::leak`): the functions then pass
/// a reference, where copying the layout (about 360 bytes) cost the module
/// a copy at each step.
fn register(layout: snowmint::Layout) -> u32 {
    let all = LAYOUTS.get();
    let at = all.iter().position(|l| **l == layout).unwrap_or_else(|| {
        all.push(Box::leak(Box::new(layout)));
        all.len() - 1
    });
    at as u32
}

/// The next key/value pair of an object argument that js/api.js spread
/// (read one at a time: collecting them cost the module a `Vec` of its own).
fn pair(args: &mut Args) -> (String, Arg) {
    let key = match args.next() {
        Arg::String(s) => s,
        _ => String::new(),
    };
    (key, args.next())
}

/// Node values from `{ fieldName: value }`; absent (`undefined`/`null`)
/// means none, which the core accepts only for layouts without node fields.
fn nodes_arg(layout: &snowmint::Layout, args: &mut Args) -> Res<Nodes> {
    let len = match args.next() {
        Arg::Undefined | Arg::Null => 0,
        Arg::Object(len) => len,
        _ => {
            return Err(fail(
                TYPE_ERROR,
                UNKNOWN_FIELD,
                &["nodes must be an object of field name -> number"],
            ))
        }
    };
    let mut values: Vec<(String, u64)> = Vec::new();
    for _ in 0..len {
        let (name, value) = pair(args);
        let mut what = String::from("node field '");
        what.push_str(&name);
        what.push('\'');
        let value = uint_arg(value, &what, NODE_OUT_OF_RANGE, NODE_OUT_OF_RANGE)?;
        values.push((name, value));
    }
    Ok(layout.nodes_from_pairs(values.iter().map(|(n, v)| (n.as_str(), *v)))?)
}

/// `GeneratorOptions`: policy strings pass through unchanged to the core.
fn options_arg(args: &mut Args) -> Res<Options> {
    let mut policies: [Option<String>; 3] = [None, None, None];
    let mut seed = None;
    let mut resume_after = None;
    let len = match args.next() {
        Arg::Undefined => 0,
        Arg::Object(len) => len,
        _ => {
            return Err(fail(
                TYPE_ERROR,
                INVALID_OPTION,
                &["options must be an object"],
            ))
        }
    };
    for _ in 0..len {
        let (key, value) = pair(args);
        if let Arg::Undefined = value {
            continue; // `{ seed: undefined }` is the same as no seed.
        }
        let slot = match key.as_str() {
            "clockBackwards" => Some(0),
            "sequenceExhausted" => Some(1),
            "sequenceStart" => Some(2),
            _ => None,
        };
        if let Some(i) = slot {
            policies[i] = Some(string_arg(value, &key, INVALID_OPTION)?);
            continue;
        }
        match key.as_str() {
            "seed" => {
                // The seed reads like an ID, but a bad one is a bad option.
                seed = Some(id_arg(value).map_err(|Failed| {
                    // A TypeError stays one; any other failure becomes a
                    // RangeError. Both with the option's code.
                    let (status, m) = FAILURE.get();
                    let class = if (*status - 1) / 16 == TYPE_ERROR {
                        TYPE_ERROR
                    } else {
                        RANGE_ERROR
                    };
                    let m = std::mem::take(m);
                    fail(class, INVALID_OPTION, &["seed: ", &m])
                })?)
            }
            "resumeAfter" => resume_after = Some(id_arg(value)?),
            _ => {
                return Err(fail(
                    TYPE_ERROR,
                    INVALID_OPTION,
                    &[
                        "unknown option '",
                        &key,
                        "' (known: clockBackwards, sequenceExhausted, sequenceStart, seed, \
                         resumeAfter)",
                    ],
                ))
            }
        }
    }
    let [clock, exhausted, start] = &policies;
    let mut options =
        Options::from_policies(clock.as_deref(), exhausted.as_deref(), start.as_deref())?;
    options.seed = seed.unwrap_or(0);
    options.resume_after = resume_after;
    Ok(options)
}

/// Puts an ID into slot 0 of [`SCRATCH`] (read as a `u64`).
fn put_id(id: u64) {
    SCRATCH.get()[0] = f64::from_bits(id);
}

fn encode(id: u64, format: Format) {
    let mut buf = [0u8; snowmint::MAX_STR_LEN];
    let text = TEXT.get();
    text.clear();
    text.push_str(Id::new(id).encode(format, &mut buf));
}

// ---- decoding -------------------------------------------------------------------

/// Decodes `id` into [`SCRATCH`] (the core's `decompose_f64`). Always inlined:
/// `__decode` calls it on the hot path, where the `s` optimisation level would
/// otherwise leave a call (about 1 ns per decode here).
#[inline(always)]
fn decode_into(layout: &snowmint::Layout, id: u64) -> Res<()> {
    let out = SCRATCH.get();
    out[0] = f64::from_bits(id);
    layout.decompose_f64(id, &mut out[1..])?;
    Ok(())
}

/// `layout.decode(id)` (layout handle `h`) for an ID already known to be a
/// `bigint` in 0..2^64 (js/api.js checked `BigInt.asUintN(64, id) === id`).
/// The hot path: no pushed arguments, no `Result` until a failure.
#[wasm_bindgen(js_name = __decode, skip_typescript)]
pub fn raw_decode(h: u32, id: u64) -> u32 {
    let Some(layout) = LAYOUTS.get().get(h as usize) else {
        return status(layout_of(h).map(|_| ()));
    };
    match decode_into(layout, id) {
        Ok(()) => 0,
        failed => status(failed),
    }
}

/// `decode`: pushed the layout (handle `h` when `h` is not `u32::MAX`) and
/// the ID.
fn decode_any(h: u32, args: &mut Args) -> Res<()> {
    let layout = if h == u32::MAX {
        layout_arg(args.next())?
    } else {
        layout_of(h)?
    };
    decode_into(layout, id_arg(args.next())?)
}

/// `Layout.decodeMany(ids, into?)`, first half: pushed `ids` and `into`;
/// checks them and makes room for `n` IDs, whose address is left in slot 1
/// of [`SCRATCH`] (js/api.js copies the IDs there), and the columns'
/// address and length in slots 2 and 3.
fn batch(h: u32, args: &mut Args) -> Res<()> {
    let layout = layout_of(h)?;
    let Arg::U64Array(n) = args.next() else {
        return Err(fail(
            TYPE_ERROR,
            INVALID_ID,
            &["ids must be a BigUint64Array"],
        ));
    };
    let n = n as usize;
    let width = 2 + layout.node_count();
    let too_many = || fail(RANGE_ERROR, INVALID_ID, &["too many IDs for memory"]);
    let total = n.checked_mul(width).ok_or_else(too_many)?;
    match args.next() {
        Arg::Undefined | Arg::Null => {}
        Arg::F64Array(len) if len as usize >= total => {}
        Arg::F64Array(_) => {
            let mut buf = [0u8; snowmint::MAX_STR_LEN];
            let msg = [
                "into must hold at least ",
                decimal(total, &mut buf),
                " values",
            ];
            return Err(fail(RANGE_ERROR, INVALID_OPTION, &msg));
        }
        _ => {
            let msg = "into must be a Float64Array";
            return Err(fail(TYPE_ERROR, INVALID_OPTION, &[msg]));
        }
    }
    let (ids, out) = BATCH.get();
    zeroed(ids, n, 0).map_err(|_| too_many())?;
    zeroed(out, total, 0.0).map_err(|_| too_many())?;
    let s = SCRATCH.get();
    s[1] = ids.as_ptr() as usize as f64;
    s[2] = out.as_ptr() as usize as f64;
    s[3] = total as f64;
    Ok(())
}

/// Makes `v` hold `n` copies of `zero`, reusing its allocation. A size too
/// large for this module's memory is an error (for an exception), not an
/// aborted module.
fn zeroed<T: Clone>(v: &mut Vec<T>, n: usize, zero: T) -> Result<(), TryReserveError> {
    v.clear();
    v.try_reserve_exact(n)?;
    v.resize(n, zero);
    Ok(())
}

/// `Layout.decodeMany`, second half: decodes the IDs js/api.js copied in
/// into columns (timestamps, sequences, then each node field: the core's
/// `decompose_columns`). An ID that does not fit the layout is an
/// `invalid_id` error naming its index.
fn decode_many(h: u32) -> Res<()> {
    let layout = layout_of(h)?;
    let (ids, out) = BATCH.get();
    layout.decompose_columns(ids, out).map_err(|(i, e)| {
        let mut buf = [0u8; snowmint::MAX_STR_LEN];
        let failed = fail(
            ERROR,
            e.code_index(),
            &["ids[", decimal(i, &mut buf), "]: "],
        );
        // Writing into a String cannot fail.
        let _ = e.write_message(&mut FAILURE.get().1);
        failed
    })
}

// ---- layouts ----------------------------------------------------------------------

/// `Layout.preset` (0), `Layout.fromJson` (1), `Layout.parse` (2), or any
/// layout argument (3: a `Layout` or a string): pushed the argument; the
/// layout's handle in slot 1 of [`SCRATCH`].
fn layout(how: u32, args: &mut Args) -> Res<()> {
    let v = args.next();
    let layout = match how {
        0 => snowmint::Layout::preset(&string_arg(v, "the preset name", UNKNOWN_PRESET)?)?,
        1 => snowmint::Layout::from_json(&string_arg(v, "the JSON descriptor", INVALID_LAYOUT)?)?,
        2 => snowmint::Layout::parse(&string_arg(v, "the layout", INVALID_LAYOUT)?)?,
        _ => *layout_arg(v)?,
    };
    SCRATCH.get()[1] = register(layout) as f64;
    Ok(())
}

/// Layout `h`'s numbers: slot 0 `maxId` (`u64`), slots 1.. `epochMs`,
/// `timeUnitMs`, `totalBits`, `timeEndMs`, `i64EndMs`, `jsSafeEndMs`.
fn layout_numbers(h: u32) -> Res<()> {
    let l = layout_of(h)?;
    let s = SCRATCH.get();
    s[0] = f64::from_bits(l.max_id());
    s[1] = l.epoch_ms() as f64;
    s[2] = l.time_unit_ms() as f64;
    s[3] = l.total_bits() as f64;
    s[4] = l.time_end_ms() as f64;
    s[5] = l.i64_end_ms() as f64;
    s[6] = l.js_safe_end_ms() as f64;
    Ok(())
}

/// Layout `h`'s strings: 0 its canonical JSON, 1 its preset name (empty for
/// none), 2 its fields (`name bits shift kind`, comma-separated); 3 the
/// preset name of index `h` (empty past the last).
fn layout_text(h: u32, what: u32) -> String {
    if what == 3 {
        return item(&snowmint::Layout::PRESETS, h);
    }
    let Ok(l) = layout_of(h) else {
        return String::new();
    };
    match what {
        0 => l.to_json(),
        1 => String::from(l.preset_name().unwrap_or_default()),
        _ => {
            let mut out = String::new();
            for (i, f) in l.fields().iter().enumerate() {
                let (mut bits, mut shift) =
                    ([0u8; snowmint::MAX_STR_LEN], [0u8; snowmint::MAX_STR_LEN]);
                let bits = decimal(f.bits() as usize, &mut bits);
                let shift = decimal(f.shift() as usize, &mut shift);
                let sep = if i > 0 { "," } else { "" };
                for piece in [sep, f.name(), " ", bits, " ", shift, " ", f.kind().as_str()] {
                    out.push_str(piece);
                }
            }
            out
        }
    }
}

/// `compose` (layout handle `h`, or pushed when `h` is `u32::MAX`): pushed
/// the time, the sequence and the nodes; the ID in slot 0.
fn compose(h: u32, args: &mut Args) -> Res<()> {
    let layout = if h == u32::MAX {
        layout_arg(args.next())?
    } else {
        layout_of(h)?
    };
    let ms = time_arg(args.next())?;
    let seq = uint_arg(
        args.next(),
        "the sequence",
        NODE_OUT_OF_RANGE,
        NODE_OUT_OF_RANGE,
    )?;
    let nodes = nodes_arg(layout, args)?;
    put_id(layout.compose(ms, seq, &nodes)?);
    Ok(())
}

/// `idBounds` (layout as for [`compose`]): pushed the time; the bounds in
/// slots 0 and 1.
fn bounds(h: u32, args: &mut Args) -> Res<()> {
    let layout = if h == u32::MAX {
        layout_arg(args.next())?
    } else {
        layout_of(h)?
    };
    let (lo, hi) = layout.id_bounds(time_arg(args.next())?)?;
    let s = SCRATCH.get();
    s[0] = f64::from_bits(lo);
    s[1] = f64::from_bits(hi);
    Ok(())
}

/// `layout.isPlausible(id, nowMs)`: pushed both; 1 or 0 in slot 1.
fn plausible(h: u32, args: &mut Args) -> Res<()> {
    let layout = layout_of(h)?;
    let id = id_arg(args.next())?;
    let now = time_arg(args.next())?;
    SCRATCH.get()[1] = layout.is_plausible(id, now) as u32 as f64;
    Ok(())
}

// ---- ID strings ---------------------------------------------------------------------

/// `toBase32` (0), `toBase62` (1), `formatId` (2: pushed the format after the
/// ID): pushed the ID; the string for `__string`.
fn format(how: u32, args: &mut Args) -> Res<()> {
    let id = id_arg(args.next())?;
    let format = match how {
        0 => Format::Base32,
        1 => Format::Base62,
        _ => format_arg(args.next())?,
    };
    encode(id, format);
    Ok(())
}

/// `fromBase32` (0), `fromBase62` (1), `parseId` (2: pushed the format after
/// the string): pushed the string; the ID in slot 0.
fn parse(how: u32, args: &mut Args) -> Res<()> {
    let s = args.next();
    let format = match how {
        0 => Format::Base32,
        1 => Format::Base62,
        _ => format_arg(args.next())?,
    };
    let s = string_arg(s, "the ID string", INVALID_ID)?;
    put_id(Id::parse(&s, format)?.get());
    Ok(())
}

// ---- generators -----------------------------------------------------------------

/// The clock of `Generator`: `Date.now()`. std's `SystemTime` and `Instant`
/// panic on `wasm32-unknown-unknown`, so the core's `SystemClock` is never
/// used here. Waiting spins (the core's default): there is no way to sleep
/// in a synchronous call, and waits last at most a few time units.
#[derive(Clone, Copy, Debug, Default)]
pub struct DateClock;

impl Clock for DateClock {
    fn now_ms(&self) -> u64 {
        // A clock before 1970 reads as 0: every real layout then refuses to
        // generate with `time_before_epoch`. `as` saturates and truncates.
        date_now().max(0.0) as u64
    }
}

/// `new Generator(layout, nodes?, options?)` (`pure` 0) or `new
/// PureGenerator(...)` (`pure` 1): pushed the three arguments. `random` is
/// the seed of `random:N` sequence starts when the options give none (or
/// 0), for `Generator` only: js/api.js takes it from
/// `crypto.getRandomValues` (or `Math.random` where there is no Web Crypto);
/// the core would fall back to std's hash keys, which are fixed on
/// `wasm32-unknown-unknown`. `PureGenerator` uses the seed as given. The
/// generator's handle in slot 1.
fn gen_new(pure: u32, args: &mut Args) -> Res<()> {
    let layout = layout_arg(args.next())?;
    let nodes = nodes_arg(layout, args)?;
    let mut options = options_arg(args)?;
    let random = match args.next() {
        Arg::BigInt { low, .. } => low,
        _ => 0,
    };
    let generator = if pure == 1 {
        Gen::Pure(snowmint::PureGenerator::new(*layout, nodes, options)?)
    } else {
        if options.seed == 0 {
            options.seed = random.max(1);
        }
        Gen::Sync(SyncGenerator::with_clock(
            *layout, nodes, options, DateClock,
        )?)
    };
    let all = GENERATORS.get();
    let at = all.iter().position(Option::is_none).unwrap_or_else(|| {
        all.push(None);
        all.len() - 1
    });
    all[at] = Some(generator);
    SCRATCH.get()[1] = at as f64;
    Ok(())
}

/// Frees generator `g` (js/api.js's object was collected).
#[wasm_bindgen(js_name = __genFree, skip_typescript)]
pub fn gen_free(g: u32) {
    if let Some(slot) = GENERATORS.get().get_mut(g as usize) {
        *slot = None;
    }
}

fn generator(g: u32) -> Res<&'static mut Gen> {
    GENERATORS
        .get()
        .get_mut(g as usize)
        .and_then(Option::as_mut)
        .ok_or_else(|| fail(TYPE_ERROR, INVALID_OPTION, &["not a live generator"]))
}

fn sync_generator(g: u32) -> Res<&'static SyncGenerator<DateClock>> {
    match generator(g)? {
        Gen::Sync(s) => Ok(s),
        Gen::Pure(_) => Err(fail(TYPE_ERROR, INVALID_OPTION, &["not a Generator"])),
    }
}

/// `generator.nextId()` (`as_string` 0: the ID in slot 0) or
/// `nextIdString()` (1: the decimal string for `__string`). Waits (spinning on
/// `Date.now()`) when a policy says to wait, at most for the few time units
/// the policy allows.
fn gen_next(g: u32, as_string: u32) -> Res<()> {
    let id = sync_generator(g)?.next_id()?.get();
    if as_string == 1 {
        encode(id, Format::Decimal);
    } else {
        put_id(id);
    }
    Ok(())
}

/// `generator.nextIds(n)`: pushed `n`; the IDs in the batch buffer, its
/// address in slot 1 and the count in slot 2.
fn gen_next_ids(g: u32, args: &mut Args) -> Res<()> {
    let generator = sync_generator(g)?;
    let n = uint_arg(args.next(), "the count", INVALID_OPTION, INVALID_OPTION)?;
    // The core refuses counts above its maximum, or that do not fit
    // this target's usize.
    let n = SyncGenerator::<DateClock>::check_batch(n)?;
    let (ids, _) = BATCH.get();
    zeroed(ids, n, 0).map_err(|_| {
        let mut buf = [0u8; snowmint::MAX_STR_LEN];
        let message = ["cannot allocate ", decimal(n, &mut buf), " IDs"];
        fail(RANGE_ERROR, INVALID_OPTION, &message)
    })?;
    generator.next_ids(ids)?;
    let s = SCRATCH.get();
    s[1] = ids.as_ptr() as usize as f64;
    s[2] = n as f64;
    Ok(())
}

/// The layout handle of generator `g` in slot 1.
fn gen_layout(g: u32) -> Res<()> {
    let layout = *sync_generator(g)?.config().layout();
    SCRATCH.get()[1] = register(layout) as f64;
    Ok(())
}

/// `pureGenerator.next(nowMs)`: pushed the time. Status 0 with the ID in
/// slot 0, or status 0 with the time to retry at in slot 1 and 1 in slot 2.
fn pure_next(g: u32, args: &mut Args) -> Res<()> {
    let Gen::Pure(p) = generator(g)? else {
        return Err(fail(TYPE_ERROR, INVALID_OPTION, &["not a PureGenerator"]));
    };
    let now = time_arg(args.next())?;
    let s = SCRATCH.get();
    match p.next(now)? {
        Next::Id(id) => {
            s[0] = f64::from_bits(id.get());
            s[2] = 0.0;
        }
        Next::RetryAt(at) => {
            s[1] = at as f64;
            s[2] = 1.0;
        }
    }
    Ok(())
}

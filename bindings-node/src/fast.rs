//! The one bypass of napi-rs: raw N-API for `Generator.nextId()` and for
//! decoding, the two calls made millions of times.
//!
//! What it buys (Node 20, napi-rs 3.16, 2M calls per round on the shared
//! 2-vCPU machine, best of 3 rounds): `nextId()` 97 ns as the bound function
//! below, 145 ns as a napi-rs closure (`Env::create_function_from_closure`),
//! 678 ns as napi-rs's class method (bench/node has that row); a decode 65 ns
//! through the bound decoder below, 237 ns through a napi-rs closure, 1,036 ns
//! through a `#[napi]` function `(layout: &Layout, id, out: Float64ArraySlice)`.
//! napi-rs's glue tracks the receiver's borrow, allocates the argument list
//! and reads a bigint as a vector of words; here a call is one
//! `napi_get_cb_info`, one read of the argument and one new bigint.
//!
//! Each `Generator` gets its own `nextId`, with the generator bound as the
//! function's data (no `this` to unwrap or confuse), and `main.js` one decoder
//! per layout, bound to the layout and a `Float64Array` it writes into.
//! Arguments go through [`value`] and errors through [`throw`], as elsewhere.

use std::ffi::{c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::null_mut;
use std::sync::Arc;

use napi::bindgen_prelude::{Env, Float64ArraySlice, This, Unknown};
use napi::{check_status, sys, JsValue, Status};
use napi_derive::napi;
use snowmint_lease::AnyGenerator;

use crate::{throw, value, Layout};

/// A raw callback's failure: a core error, or `None` for a failed N-API call
/// (which left its own exception pending, if any).
type Res<T> = Result<T, Option<snowmint::Error>>;

fn ok(status: sys::napi_status) -> Res<()> {
    (status == sys::Status::napi_ok).then_some(()).ok_or(None)
}

/// Runs a raw callback: its data and first argument to `body`; a core error
/// thrown by [`throw`], a panic as an `Error` (no panic crosses into the
/// engine), and then null, which N-API reads as "exception pending".
fn guard<F>(env: sys::napi_env, info: sys::napi_callback_info, body: F) -> sys::napi_value
where
    F: FnOnce(*const c_void, sys::napi_value) -> Res<sys::napi_value>,
{
    let (mut argc, mut argv, mut data) = (1, [null_mut(); 1], null_mut());
    let run = || {
        // SAFETY: this callback's `env` and `info`, room for `argc` values.
        let info = unsafe {
            sys::napi_get_cb_info(
                env,
                info,
                &mut argc,
                argv.as_mut_ptr(),
                null_mut(),
                &mut data,
            )
        };
        ok(info).and_then(|()| body(data, argv[0]))
    };
    match catch_unwind(AssertUnwindSafe(run)) {
        Ok(Ok(v)) => return v,
        Ok(Err(Some(e))) => drop(throw(&Env::from_raw(env), e)),
        Ok(Err(None)) => {}
        // SAFETY: `env` is the live environment of the current call.
        Err(_) => unsafe {
            let e = napi::Error::new("internal_error", "snowmint-node panicked (a bug)");
            napi::JsError::from(e).throw_into(env)
        },
    }
    null_mut()
}

fn bigint(env: sys::napi_env, v: u64) -> Res<sys::napi_value> {
    let mut out = null_mut();
    // SAFETY: `env` is the live environment of the current call.
    ok(unsafe { sys::napi_create_bigint_uint64(env, v, &mut out) })?;
    Ok(out)
}

/// A function `name` calling `cb` with `data`, which `release` frees once:
/// when the function is garbage, or at once if it cannot be made.
///
/// # Safety
/// `env` is live, and `release(env, data, _)` frees `data`.
unsafe fn function(
    env: &Env,
    name: &CStr,
    cb: sys::napi_callback,
    data: *mut c_void,
    release: unsafe extern "C" fn(sys::napi_env, *mut c_void, *mut c_void),
) -> napi::Result<sys::napi_value> {
    let (env, len, mut f) = (env.raw(), name.count_bytes() as isize, null_mut());
    // SAFETY: as the caller promised.
    unsafe {
        if sys::napi_create_function(env, name.as_ptr(), len, cb, data, &mut f) != 0
            || sys::napi_add_finalizer(env, f, data, Some(release), null_mut(), null_mut()) != 0
        {
            release(env, data, null_mut());
            return Err(napi::Error::new(
                Status::GenericFailure,
                "cannot make a function",
            ));
        }
    }
    Ok(f)
}

// ---- nextId ---------------------------------------------------------------------------

unsafe extern "C" fn next_id(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    guard(env, info, |data, _| {
        // SAFETY: the generator `bind_next_id` bound to this function, freed
        // by its finalizer, which cannot run while the function is called.
        let g = unsafe { &*(data as *const AnyGenerator) };
        bigint(env, g.next_id()?.get())
    })
}

unsafe extern "C" fn release_generator(_: sys::napi_env, data: *mut c_void, _: *mut c_void) {
    // SAFETY: the `Arc::into_raw` pointer of `bind_next_id`, released once.
    drop(unsafe { Arc::from_raw(data as *const AnyGenerator) });
}

/// Gives `this` (a new `Generator`) its own `nextId`, bound to `g`:
/// writable, configurable and not enumerable, like a method.
pub(crate) fn bind_next_id(env: &Env, this: &This<'_>, g: &Arc<AnyGenerator>) -> napi::Result<()> {
    let data = Arc::into_raw(Arc::clone(g)) as *mut c_void;
    // SAFETY: `env` is live; `release_generator` frees `data`.
    let f = unsafe { function(env, c"nextId", Some(next_id), data, release_generator) }?;
    let desc = sys::napi_property_descriptor {
        utf8name: c"nextId".as_ptr(),
        value: f,
        attributes: sys::PropertyAttributes::writable | sys::PropertyAttributes::configurable,
        // SAFETY: the rest are null pointers and `None`s: zero bits.
        ..unsafe { std::mem::zeroed() }
    };
    // SAFETY: `this` and `f` are live values of `env`; one descriptor.
    check_status!(unsafe { sys::napi_define_properties(env.raw(), this.object.raw(), 1, &desc) })
}

// ---- decoding ---------------------------------------------------------------------------

/// What a decoder function is bound to: the layout, and the scratch array's
/// first element (of [`SCRATCH_LEN`]), kept alive by the reference.
struct Decoder(snowmint::Layout, *mut f64, sys::napi_ref);

/// The timestamp, the sequence, and up to `MAX_NODES` node values.
pub(crate) const SCRATCH_LEN: usize = 2 + snowmint::MAX_NODES;

unsafe extern "C" fn decode(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    guard(env, info, |data, id| {
        // SAFETY: the `Decoder` that `decoder` bound to this function.
        let Decoder(layout, out, _) = unsafe { &*(data as *const Decoder) };
        // The common case in one N-API call: a bigint in 0..2^64, returned as
        // it is. Anything else takes the binding's one conversion.
        let (mut v, mut lossless) = (0, false);
        // SAFETY: `id` is a live value of `env`.
        let read = unsafe { sys::napi_get_value_bigint_uint64(env, id, &mut v, &mut lossless) };
        let (v, id) = if read == sys::Status::napi_ok && lossless {
            (v, id)
        } else {
            // SAFETY: as above.
            let arg = value(&unsafe { Unknown::from_raw_unchecked(env, id) }).map_err(|_| None)?;
            let v = arg.to_id()?.get();
            (v, bigint(env, v)?)
        };
        // SAFETY: SCRATCH_LEN values of an array kept alive by the
        // reference; no JavaScript runs during this call.
        layout.decompose_f64(v, unsafe {
            std::slice::from_raw_parts_mut(*out, SCRATCH_LEN)
        })?;
        Ok(id)
    })
}

unsafe extern "C" fn release_decoder(env: sys::napi_env, data: *mut c_void, _: *mut c_void) {
    // SAFETY: the `Box<Decoder>` of `decoder`, released once, with its reference.
    let d = unsafe { Box::from_raw(data as *mut Decoder) };
    // SAFETY: `d.2` is the reference `decoder` made in this environment,
    // deleted only here.
    unsafe { sys::napi_delete_reference(env, d.2) };
}

/// Internal, for `main.js`: a function `(id) => the ID as a bigint` that splits
/// IDs of `layout` into `scratch` (at least 8 elements): the timestamp in
/// Unix ms, the sequence, then the node values.
#[napi(js_name = "__decoder", skip_typescript)]
pub fn decoder<'e>(
    env: &'e Env,
    layout: &Layout,
    mut scratch: Float64ArraySlice<'_>,
) -> napi::Result<Unknown<'e>> {
    if scratch.len() < SCRATCH_LEN {
        return Err(napi::Error::new(
            Status::InvalidArg,
            "the scratch array is too short",
        ));
    }
    let mut reference = null_mut();
    // SAFETY: `scratch` is a live value of `env`; the reference keeps its
    // memory where `out` points.
    check_status!(unsafe {
        sys::napi_create_reference(env.raw(), scratch.raw(), 1, &mut reference)
    })?;
    // SAFETY: JavaScript runs on this thread and not during this call, so
    // nothing writes the array while the slice lives; only its pointer is
    // kept, and the reference above keeps that memory alive for `decode`.
    let out = unsafe { scratch.as_mut() }.as_mut_ptr();
    let data = Box::into_raw(Box::new(Decoder(layout.inner, out, reference))).cast();
    // SAFETY: `env` is live; `release_decoder` frees `data`.
    let f = unsafe { function(env, c"decode", Some(decode), data, release_decoder) }?;
    // SAFETY: `f` was just made in this environment.
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), f) })
}

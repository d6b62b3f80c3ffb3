//! The one bypass of napi-rs: raw N-API for `Generator.nextId()` and for
//! decoding, the two calls made millions of times.
//!
//! What it buys, measured (Node 20, napi-rs 3.16, 2 vCPUs shared with other
//! builds, 2M calls after a warm-up, best of 3 rounds; /tmp script in the
//! commit message): `nextId()` as napi-rs's class method 644 ns, as the
//! bound function below 94 ns (6.8x); a decode through an ordinary `#[napi]`
//! function (`(layout: &Layout, id, out: Float64ArraySlice)`) 1,036 ns, through
//! the bound decoder below 52 ns (20x). napi-rs's glue tracks the receiver's
//! borrow and converts each argument with several N-API calls; here each call
//! is one `napi_get_cb_info`, one N-API read of the argument and one bigint.
//!
//! How: each `Generator` gets its own `nextId`, a function with the generator
//! bound as its data (no `this` to unwrap, so no receiver of another class can
//! be confused with it), and `main.js` gets one decoder function per layout,
//! bound to the layout and to a `Float64Array` it writes the numbers into.
//! Everything else, errors included, is the rest of the binding's: argument
//! conversion by [`value`], errors thrown by [`throw`].

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;

use napi::bindgen_prelude::{Env, Float64ArraySlice, This, Unknown};
use napi::{check_status, sys, JsValue, Status};
use napi_derive::napi;

use crate::{throw, value, Layout};

/// Why a raw callback failed: a core error, or an N-API call (which leaves
/// its own exception pending, or none).
enum Fail {
    Core(snowmint::Error),
    Napi,
}

impl From<snowmint::Error> for Fail {
    fn from(e: snowmint::Error) -> Fail {
        Fail::Core(e)
    }
}

impl From<napi::Error> for Fail {
    fn from(_: napi::Error) -> Fail {
        Fail::Napi
    }
}

fn ok(status: sys::napi_status) -> Result<(), Fail> {
    match status {
        sys::Status::napi_ok => Ok(()),
        _ => Err(Fail::Napi),
    }
}

/// Runs a raw callback's body: a core error is thrown by [`throw`], a panic
/// as an `Error` (no panic crosses into the engine); the callback then
/// returns null, which N-API reads as "exception pending".
fn guard(
    env: sys::napi_env,
    body: impl FnOnce() -> Result<sys::napi_value, Fail>,
) -> sys::napi_value {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => return v,
        Ok(Err(Fail::Core(e))) => drop(throw(&Env::from_raw(env), e)),
        Ok(Err(Fail::Napi)) => {}
        // SAFETY: `env` is the live environment of the current call.
        Err(_) => unsafe {
            let err = napi::Error::new("internal_error", "snowmint-node panicked (a bug)");
            napi::JsError::from(err).throw_into(env)
        },
    }
    ptr::null_mut()
}

/// The data bound to a raw callback's function, and its first argument.
///
/// # Safety
/// `env` and `info` are the callback's own.
unsafe fn args(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> Result<(*mut c_void, sys::napi_value), Fail> {
    let (mut argc, mut argv, mut data) = (1usize, [ptr::null_mut(); 1], ptr::null_mut());
    // SAFETY: room for `argc` values (N-API fills a missing one with `undefined`).
    ok(unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            ptr::null_mut(),
            &mut data,
        )
    })?;
    Ok((data, argv[0]))
}

fn bigint(env: sys::napi_env, v: u64) -> Result<sys::napi_value, Fail> {
    let mut out = ptr::null_mut();
    // SAFETY: `env` is the live environment of the current call.
    ok(unsafe { sys::napi_create_bigint_uint64(env, v, &mut out) })?;
    Ok(out)
}

/// A function named `name` calling `cb` with `data`, which `release`
/// frees when the function is garbage (or at once if it cannot be made).
///
/// # Safety
/// `env` is live; `release(env, data, _)` frees `data` exactly once.
unsafe fn function(
    env: sys::napi_env,
    name: &std::ffi::CStr,
    cb: sys::napi_callback,
    data: *mut c_void,
    release: sys::napi_finalize,
) -> napi::Result<sys::napi_value> {
    let mut f = ptr::null_mut();
    let len = name.count_bytes() as isize;
    // SAFETY: as the caller promised.
    unsafe {
        if sys::napi_create_function(env, name.as_ptr(), len, cb, data, &mut f)
            != sys::Status::napi_ok
            || sys::napi_add_finalizer(env, f, data, release, ptr::null_mut(), ptr::null_mut())
                != sys::Status::napi_ok
        {
            release.unwrap()(env, data, ptr::null_mut());
            return Err(napi::Error::new(
                Status::GenericFailure,
                "cannot create a function",
            ));
        }
    }
    Ok(f)
}

// ---- nextId -------------------------------------------------------------------------

unsafe extern "C" fn next_id(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    guard(env, || {
        // SAFETY: this callback's `env` and `info`. The data is the generator
        // `bind_next_id` bound to this function, released by its finalizer,
        // which cannot run while the function is being called.
        let (data, _) = unsafe { args(env, info) }?;
        let g = unsafe { &*(data as *const snowmint::Generator) };
        bigint(env, g.next_id()?.get())
    })
}

unsafe extern "C" fn release_generator(_: sys::napi_env, data: *mut c_void, _: *mut c_void) {
    // SAFETY: the `Arc::into_raw` pointer of `bind_next_id`, released once.
    drop(unsafe { Arc::from_raw(data as *const snowmint::Generator) });
}

/// Gives `this` (a new `Generator`) its own `nextId`, bound to `g`:
/// writable, configurable and not enumerable, like a method.
pub(crate) fn bind_next_id(
    env: &Env,
    this: &This,
    g: &Arc<snowmint::Generator>,
) -> napi::Result<()> {
    let data = Arc::into_raw(Arc::clone(g)) as *mut c_void;
    // SAFETY: `env` is live; `release_generator` frees `data` once.
    let f = unsafe {
        function(
            env.raw(),
            c"nextId",
            Some(next_id),
            data,
            Some(release_generator),
        )
    }?;
    let attributes = sys::PropertyAttributes::writable | sys::PropertyAttributes::configurable;
    let desc = sys::napi_property_descriptor {
        utf8name: c"nextId".as_ptr(),
        value: f,
        attributes,
        // SAFETY: the rest are null pointers and `None`s, all zero bits.
        ..unsafe { std::mem::zeroed() }
    };
    // SAFETY: `this` and `f` are live values of `env`; one descriptor.
    check_status!(unsafe { sys::napi_define_properties(env.raw(), this.object.raw(), 1, &desc) })
}

// ---- decoding -------------------------------------------------------------------------

/// What a decoder function is bound to.
struct Decoder {
    layout: snowmint::Layout,
    /// The scratch array's first element; it holds at least [`SCRATCH_LEN`].
    out: *mut f64,
    /// Keeps the scratch array (and so `out`) alive while the function is.
    scratch: sys::napi_ref,
}

/// The timestamp, the sequence, and up to `MAX_NODES` node values.
const SCRATCH_LEN: usize = 2 + snowmint::MAX_NODES;

unsafe extern "C" fn decode(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    guard(env, || {
        // SAFETY: this callback's `env` and `info`; the data is the `Decoder`
        // that `decoder` bound to this function.
        let (data, id) = unsafe { args(env, info) }?;
        let d = unsafe { &*(data as *const Decoder) };
        // The common case in one N-API call: a bigint in 0..2^64, returned as
        // it is. Anything else takes the binding's one conversion.
        let (mut v, mut lossless) = (0u64, false);
        // SAFETY: `id` is a live value of `env`.
        let status = unsafe { sys::napi_get_value_bigint_uint64(env, id, &mut v, &mut lossless) };
        let (v, id) = if status == sys::Status::napi_ok && lossless {
            (v, id)
        } else {
            // SAFETY: as above.
            let v = value(&unsafe { Unknown::from_raw_unchecked(env, id) })?
                .to_id()?
                .get();
            (v, bigint(env, v)?)
        };
        // SAFETY: `out` points to SCRATCH_LEN values of an array kept alive by
        // `d.scratch`; no JavaScript runs during this call.
        let out = unsafe { std::slice::from_raw_parts_mut(d.out, SCRATCH_LEN) };
        d.layout.decompose_f64(v, out)?;
        Ok(id)
    })
}

unsafe extern "C" fn release_decoder(env: sys::napi_env, data: *mut c_void, _: *mut c_void) {
    // SAFETY: the `Box<Decoder>` of `decoder`, released once, with its reference.
    let d = unsafe { Box::from_raw(data as *mut Decoder) };
    unsafe { sys::napi_delete_reference(env, d.scratch) };
}

/// Internal, for `main.js`: a function `(id) => id as a bigint` that splits
/// IDs of `layout` into `scratch` (at least 8 elements): the timestamp in
/// Unix ms, the sequence, then the node values.
#[napi(js_name = "__decoder", skip_typescript)]
pub fn decoder<'e>(
    env: &'e Env,
    layout: &Layout,
    mut scratch: Float64ArraySlice,
) -> napi::Result<Unknown<'e>> {
    if scratch.len() < SCRATCH_LEN {
        return Err(napi::Error::new(
            Status::InvalidArg,
            "the scratch array is too short",
        ));
    }
    let mut reference = ptr::null_mut();
    // SAFETY: `env` is live and `scratch` one of its values; the reference
    // keeps the array's memory where `out` points.
    check_status!(unsafe {
        sys::napi_create_reference(env.raw(), scratch.raw(), 1, &mut reference)
    })?;
    let out = unsafe { scratch.as_mut() }.as_mut_ptr();
    let d = Box::new(Decoder {
        layout: layout.inner,
        out,
        scratch: reference,
    });
    let data = Box::into_raw(d).cast();
    // SAFETY: `release_decoder` frees `data` once.
    let f = unsafe {
        function(
            env.raw(),
            c"decode",
            Some(decode),
            data,
            Some(release_decoder),
        )
    }?;
    // SAFETY: `f` was just made in this environment.
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), f) })
}

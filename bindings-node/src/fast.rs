//! Raw N-API for the calls that run millions of times: `Generator.nextId()`,
//! `nextIdString()`, `nextIds(n)` and decoding.
//!
//! Measured on Node 20 here (bench/node): napi-rs's generated glue costs about
//! 300 ns per class-method call (receiver borrow tracking) and ~70 ns per
//! function call with arguments, and every N-API property write on a new
//! object ~300 ns, while a snowmint `nextId()` is ~25 ns of Rust. So:
//! - each `Generator` gets its own `nextId`, `nextIdString` and `nextIds`
//!   functions, created in its constructor with the generator bound as the
//!   function's data. A call needs no `this` unwrapping and no borrow tracking, and the data
//!   pointer is fixed at creation, so no receiver can be confused with
//!   another class's object;
//! - decoding writes numbers into a `Float64Array` owned by `index.js`, which
//!   builds the `Parts` object in JavaScript (a few ns instead of ~3 us).
//!   `index.js` comes here for the IDs that `decoder.wasm` (the same core
//!   decoder in WebAssembly, cheaper to call) does not take, and for errors.
//!
//! The conversions are the same functions the rest of the binding uses
//! (`crate::id_arg`, `crate::uint_arg`, `crate::Fail`), so behaviour and
//! errors are identical.

use std::ffi::{c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;

use napi::bindgen_prelude::{Env, Unknown};
use napi::{sys, JsValue, Status};
use snowmint::Generator as SyncGenerator;

use crate::{Fail, Res};

/// Turns an N-API status into a [`Res`]. A pending JavaScript exception (a
/// setter on `Object.prototype` that threw, say) is left pending and
/// propagates as it is.
fn check(status: sys::napi_status) -> Res<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Fail::Napi(napi::Error::new(
            Status::from(status),
            "N-API call failed".to_string(),
        )))
    }
}

// ---- values -------------------------------------------------------------------

pub(crate) fn bigint(env: sys::napi_env, v: u64) -> Res<sys::napi_value> {
    let mut out = ptr::null_mut();
    // SAFETY: `env` is the live environment of the current call.
    check(unsafe { sys::napi_create_bigint_uint64(env, v, &mut out) })?;
    Ok(out)
}

// ---- decoding into a scratch array ----------------------------------------------

/// What a decoder function is bound to.
struct Decoder {
    layout: snowmint::Layout,
    /// The scratch array's first element; it holds at least [`SCRATCH_LEN`].
    out: *mut f64,
    /// Keeps the scratch array (and so `out`) alive while the function is.
    scratch: sys::napi_ref,
}

/// Scratch slots: the timestamp, the sequence, and up to `MAX_NODES` node values.
const SCRATCH_LEN: usize = 2 + snowmint::MAX_NODES;

unsafe extern "C" fn decode_cb(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    guard(env, || {
        // SAFETY: called by N-API with this callback's `env` and `info`; the
        // data is the `Decoder` that `decoder` bound to this function.
        let (data, id) = unsafe { callback_data(env, info, true) }?;
        let d = unsafe { &*(data as *const Decoder) };
        // The common case first, in one N-API call: a bigint in 0..2^64 (no
        // type query; a non-bigint only makes this call report
        // `napi_bigint_expected`). It is returned as it is: it was read to be
        // exactly this value, so no new bigint is made.
        let mut value = 0u64;
        let mut lossless = false;
        // SAFETY: `id` is a live value of `env`.
        let status =
            unsafe { sys::napi_get_value_bigint_uint64(env, id, &mut value, &mut lossless) };
        if status == sys::Status::napi_ok && lossless {
            d.write(value)?;
            return Ok(id);
        }
        // Anything else (a string, a number, a bigint out of range, another
        // type) takes the binding's general conversion and its errors; a
        // string or number becomes a new bigint.
        // SAFETY: `id` is a live value of `env`.
        let arg = unsafe { Unknown::from_raw_unchecked(env, id) };
        let value = crate::id_arg(&arg)?;
        d.write(value)?;
        bigint(env, value)
    })
}

impl Decoder {
    /// Decodes `id` into the scratch array: [timestampMs, sequence, ...nodes]
    /// (the core's `decompose_f64`).
    fn write(&self, id: u64) -> Res<()> {
        // SAFETY: `out` points to at least SCRATCH_LEN f64 values of an array
        // kept alive by `self.scratch`; no JavaScript runs during a callback.
        let out = unsafe { std::slice::from_raw_parts_mut(self.out, SCRATCH_LEN) };
        self.layout.decompose_f64(id, out).map_err(Fail::Core)?;
        Ok(())
    }
}

unsafe extern "C" fn release_decoder(env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the `Box<Decoder>` pointer `decoder` gave the function,
    // released exactly once, here.
    let d = unsafe { Box::from_raw(data as *mut Decoder) };
    // SAFETY: the reference was made in this environment.
    unsafe { sys::napi_delete_reference(env, d.scratch) };
}

/// A function decoding IDs of `layout` into `scratch` (a `Float64Array` of at
/// least 8 elements): used by `index.js` to build `Parts` in JavaScript.
pub(crate) fn decoder(
    env: sys::napi_env,
    layout: snowmint::Layout,
    scratch: &Unknown,
) -> Res<sys::napi_value> {
    let raw = scratch.raw();
    let mut is_typedarray = false;
    // SAFETY (whole function): `env` is the live environment of the current
    // call and every handle used was made in it.
    check(unsafe { sys::napi_is_typedarray(env, raw, &mut is_typedarray) })?;
    let mut kind = 0;
    let mut len = 0usize;
    let mut data: *mut c_void = ptr::null_mut();
    if is_typedarray {
        check(unsafe {
            sys::napi_get_typedarray_info(
                env,
                raw,
                &mut kind,
                &mut len,
                &mut data,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        })?;
    }
    if !is_typedarray || kind != sys::TypedarrayType::float64_array || len < SCRATCH_LEN {
        return Err(Fail::Type(
            "invalid_option",
            format!("the scratch must be a Float64Array of at least {SCRATCH_LEN} elements"),
        ));
    }
    let mut reference = ptr::null_mut();
    check(unsafe { sys::napi_create_reference(env, raw, 1, &mut reference) })?;
    let bound = Box::into_raw(Box::new(Decoder {
        layout,
        out: data.cast(),
        scratch: reference,
    }))
    .cast::<c_void>();
    let mut f = ptr::null_mut();
    let made = check(unsafe {
        sys::napi_create_function(env, c"decode".as_ptr(), 6, Some(decode_cb), bound, &mut f)
    })
    .and_then(|()| {
        check(unsafe {
            sys::napi_add_finalizer(
                env,
                f,
                bound,
                Some(release_decoder),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        })
    });
    if let Err(e) = made {
        // SAFETY: no finalizer owns `bound`, so it is released here once.
        unsafe { release_decoder(env, bound, ptr::null_mut()) };
        return Err(e);
    }
    Ok(f)
}

// ---- Generator methods bound to one generator ---------------------------------

/// Runs a raw callback body: a [`Fail`] or a panic becomes a JavaScript
/// exception (no panic crosses into the engine), and the callback returns
/// null, which N-API reads as "exception pending".
fn guard(env: sys::napi_env, body: impl FnOnce() -> Res<sys::napi_value>) -> sys::napi_value {
    let env_ref = Env::from_raw(env);
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => v,
        Ok(Err(fail)) => {
            // A `Fail::Napi` is thrown as napi-rs would throw it.
            let err = fail.throw(&env_ref);
            if err.status != Status::PendingException {
                // SAFETY: `env` is the live environment of the current call.
                unsafe { napi::JsError::from(err).throw_into(env) };
            }
            ptr::null_mut()
        }
        Err(_) => {
            let err = napi::Error::new("internal_error", "snowmint-node panicked (a bug)");
            // SAFETY: `env` is the live environment of the current call.
            unsafe { napi::JsError::from(err).throw_into(env) };
            ptr::null_mut()
        }
    }
}

/// The data bound to a raw callback's function, and its first argument
/// (`undefined` when none was given) if `with_arg`.
unsafe fn callback_data(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    with_arg: bool,
) -> Res<(*mut c_void, sys::napi_value)> {
    let mut argc = 1usize;
    let mut argv = [ptr::null_mut(); 1];
    let mut data: *mut c_void = ptr::null_mut();
    let (argc_ptr, argv_ptr) = if with_arg {
        (&mut argc as *mut usize, argv.as_mut_ptr())
    } else {
        (ptr::null_mut(), ptr::null_mut())
    };
    // SAFETY: `env` and `info` are this callback's; `argv` has room for
    // `argc` values (N-API fills missing arguments with `undefined`).
    check(unsafe {
        sys::napi_get_cb_info(env, info, argc_ptr, argv_ptr, ptr::null_mut(), &mut data)
    })?;
    Ok((data, argv[0]))
}

/// The bound generator of a raw callback, and its first argument if `with_arg`.
unsafe fn bound(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    with_arg: bool,
) -> Res<(&'static SyncGenerator, sys::napi_value)> {
    // SAFETY: called with this callback's `env` and `info`.
    let (data, arg) = unsafe { callback_data(env, info, with_arg) }?;
    // SAFETY: `data` is the `Arc<SyncGenerator>` pointer `bind` gave this
    // function; the function's finalizer releases it only when the function
    // itself is garbage, which it is not while being called.
    Ok((unsafe { &*(data as *const SyncGenerator) }, arg))
}

unsafe extern "C" fn next_id_cb(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    guard(env, || {
        // SAFETY: called by N-API with this callback's `env` and `info`.
        let (g, _) = unsafe { bound(env, info, false) }?;
        bigint(env, g.next_id()?.get())
    })
}

unsafe extern "C" fn next_id_string_cb(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    guard(env, || {
        // SAFETY: called by N-API with this callback's `env` and `info`.
        let (g, _) = unsafe { bound(env, info, false) }?;
        let mut buf = [0u8; snowmint::MAX_STR_LEN];
        let s = g.next_id()?.encode(snowmint::Format::Decimal, &mut buf);
        let mut out = ptr::null_mut();
        // SAFETY: `s` is ASCII of the given length.
        check(unsafe {
            sys::napi_create_string_latin1(env, s.as_ptr().cast(), s.len() as isize, &mut out)
        })?;
        Ok(out)
    })
}

unsafe extern "C" fn next_ids_cb(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    guard(env, || {
        // SAFETY: called by N-API with this callback's `env` and `info`.
        let (g, n) = unsafe { bound(env, info, true) }?;
        // SAFETY: `n` is a live value of `env`.
        let n = unsafe { Unknown::from_raw_unchecked(env, n) };
        next_ids(env, g, &n)
    })
}

/// `nextIds(n)`: a `BigUint64Array` filled in place by the core.
pub(crate) fn next_ids(env: sys::napi_env, g: &SyncGenerator, n: &Unknown) -> Res<sys::napi_value> {
    let n = crate::uint_arg(n, "the count", "invalid_option", "invalid_option")?;
    let n = SyncGenerator::<snowmint::SystemClock>::check_batch(n)?;
    let mut data: *mut c_void = ptr::null_mut();
    let mut buffer = ptr::null_mut();
    // SAFETY: `env` is the live environment of the current call.
    let status = unsafe { sys::napi_create_arraybuffer(env, n * 8, &mut data, &mut buffer) };
    if status != sys::Status::napi_ok {
        // The engine could not allocate: report it as a RangeError, not as
        // whatever the engine left pending.
        let mut pending = false;
        // SAFETY: `env` is the live environment of the current call.
        unsafe { sys::napi_is_exception_pending(env, &mut pending) };
        if pending {
            let mut e = ptr::null_mut();
            // SAFETY: as above; clears the engine's exception.
            unsafe { sys::napi_get_and_clear_last_exception(env, &mut e) };
        }
        return Err(Fail::Range(
            "invalid_option",
            format!("cannot allocate {n} IDs"),
        ));
    }
    if n > 0 {
        // SAFETY: the engine just allocated `n * 8` bytes at `data`, aligned
        // for any primitive (V8 backing stores are at least 8-byte aligned),
        // and nothing else refers to the buffer yet.
        let out = unsafe { std::slice::from_raw_parts_mut(data.cast::<u64>(), n) };
        g.next_ids(out)?;
    }
    let mut array = ptr::null_mut();
    // SAFETY: `buffer` holds exactly `n` u64 values.
    check(unsafe {
        sys::napi_create_typedarray(
            env,
            sys::TypedarrayType::biguint64_array,
            n,
            buffer,
            0,
            &mut array,
        )
    })?;
    Ok(array)
}

unsafe extern "C" fn release(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the `Arc::into_raw` pointer `bind` gave this function,
    // released exactly once, here.
    drop(unsafe { Arc::from_raw(data as *const SyncGenerator) });
}

/// Gives `this` (a new `Generator` object) its own `nextId`, `nextIdString`
/// and `nextIds`, bound to `generator`. Non-enumerable, like methods.
pub(crate) fn bind(
    env: sys::napi_env,
    this: sys::napi_value,
    generator: &Arc<SyncGenerator>,
) -> Res<()> {
    let methods: [(&CStr, sys::napi_callback); 3] = [
        (c"nextId", Some(next_id_cb)),
        (c"nextIdString", Some(next_id_string_cb)),
        (c"nextIds", Some(next_ids_cb)),
    ];
    for (name, cb) in methods {
        let data = Arc::into_raw(Arc::clone(generator)) as *mut c_void;
        let mut f = ptr::null_mut();
        // SAFETY: `env` is live; `name` is NUL-terminated; `data` stays valid
        // until `release` runs (the finalizer added next, or right here on
        // failure).
        let made = check(unsafe {
            sys::napi_create_function(
                env,
                name.as_ptr(),
                name.count_bytes() as isize,
                cb,
                data,
                &mut f,
            )
        })
        .and_then(|()| {
            check(unsafe {
                sys::napi_add_finalizer(
                    env,
                    f,
                    data,
                    Some(release),
                    ptr::null_mut(),
                    ptr::null_mut(),
                )
            })
        });
        if let Err(e) = made {
            // SAFETY: no finalizer owns `data`, so it is released here once.
            unsafe { release(env, data, ptr::null_mut()) };
            return Err(e);
        }
        let desc = sys::napi_property_descriptor {
            utf8name: name.as_ptr(),
            name: ptr::null_mut(),
            method: None,
            getter: None,
            setter: None,
            value: f,
            // Writable and configurable, not enumerable: like a class method.
            attributes: sys::PropertyAttributes::writable | sys::PropertyAttributes::configurable,
            data: ptr::null_mut(),
        };
        // SAFETY: `this` and `f` are live values of `env`; one descriptor.
        check(unsafe { sys::napi_define_properties(env, this, 1, &desc) })?;
    }
    Ok(())
}

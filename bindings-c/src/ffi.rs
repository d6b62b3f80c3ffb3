//! The C boundary: the panic guard, and C arguments (pointers, strings,
//! arrays, buffers) turned into Rust ones with the C-only statuses.

use core::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::snowmint_status;

pub(crate) type R<T> = Result<T, snowmint_status>;

/// Runs a fallible body inside the panic boundary.
pub(crate) fn boundary(f: impl FnOnce() -> R<()>) -> snowmint_status {
    let status = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => return snowmint_status::Ok,
        Ok(Err(s)) => s,
        Err(_) => snowmint_status::Panic,
    };
    crate::status::failed(status);
    status
}

/// Runs an infallible body inside the panic boundary; `default` on panic.
pub(crate) fn boundary_value<T>(default: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(default)
}

/// A shared reference from a pointer the caller promises is NULL or valid.
pub(crate) unsafe fn arg<'a, T>(p: *const T) -> R<&'a T> {
    // SAFETY: the caller passes NULL or a valid pointer (the API's contract).
    unsafe { p.as_ref() }.ok_or(snowmint_status::NullArgument)
}

/// An output location; NULL is refused before any work is done.
pub(crate) unsafe fn out_mut<'a, T>(p: *mut T) -> R<&'a mut T> {
    // SAFETY: the caller passes NULL or a valid, writable pointer.
    unsafe { p.as_mut() }.ok_or(snowmint_status::NullArgument)
}

/// A NUL-terminated UTF-8 string.
pub(crate) unsafe fn cstr<'a>(p: *const c_char) -> R<&'a str> {
    if p.is_null() {
        return Err(snowmint_status::NullArgument);
    }
    // SAFETY: non-NULL, and the caller promises a NUL-terminated string.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| snowmint_status::InvalidUtf8)
}

/// `len` bytes of UTF-8 (no NUL needed). NULL is refused even when `len` is
/// 0: a NULL string is more likely a bug than an empty string.
pub(crate) unsafe fn str_len<'a>(p: *const c_char, len: usize) -> R<&'a str> {
    if p.is_null() {
        return Err(snowmint_status::NullArgument);
    }
    // SAFETY: non-NULL, and the caller promises `len` readable bytes at `p`.
    let bytes = unsafe { slice(p.cast::<u8>(), len) }?;
    core::str::from_utf8(bytes).map_err(|_| snowmint_status::InvalidUtf8)
}

/// `n` elements; NULL is accepted only when `n` is 0.
pub(crate) unsafe fn slice<'a, T>(p: *const T, n: usize) -> R<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(snowmint_status::NullArgument);
    }
    // SAFETY: non-NULL, and the caller promises `n` readable elements.
    Ok(unsafe { core::slice::from_raw_parts(p, n) })
}

/// Copies `text` and a NUL into the caller's `buf` of `len` bytes, and the
/// length without the NUL into `*written`, only if all of it fits.
pub(crate) unsafe fn write_text(
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
    text: &str,
) -> R<()> {
    if buf.is_null() {
        return Err(snowmint_status::NullArgument);
    }
    // SAFETY: NULL or a valid pointer.
    let written = unsafe { out_mut(written) }?;
    let n = text.len();
    if n >= len {
        return Err(snowmint_status::BufferTooSmall);
    }
    // SAFETY: `buf` is non-NULL and the caller promises `len` > n writable bytes.
    let dst = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), n + 1) };
    dst[..n].copy_from_slice(text.as_bytes());
    dst[n] = 0;
    *written = n;
    Ok(())
}

/// Drops a handle made by `into_handle`.
pub(crate) unsafe fn free_handle<H>(p: *const H) {
    if !p.is_null() {
        // SAFETY: the caller passes a pointer this library returned and
        // has not freed yet.
        drop(unsafe { Box::from_raw(p.cast_mut()) });
    }
}

/// NUL-terminated copies of the core's name tables (codes, presets), made
/// at compile time; a name of `N` bytes or more fails the build.
pub(crate) const fn c_strings<const K: usize, const N: usize>(names: [&str; K]) -> [[u8; N]; K] {
    let mut out = [[0; N]; K];
    let mut i = 0;
    while i < K {
        let b = names[i].as_bytes();
        assert!(b.len() < N, "a name is too long for its C table");
        let mut j = 0;
        while j < b.len() {
            out[i][j] = b[j];
            j += 1;
        }
        i += 1;
    }
    out
}

/// The `i`-th string of a table made by `c_strings`, or NULL past its end.
pub(crate) fn c_string_at<const N: usize>(table: &'static [[u8; N]], i: usize) -> *const c_char {
    table
        .get(i)
        .map_or(core::ptr::null(), |s| s.as_ptr().cast())
}

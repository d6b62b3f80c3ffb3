//! The checks every call shares: statuses against the core's codes, and
//! text outputs against the core's text.

use std::ffi::{c_char, c_int, CStr};
use std::ptr::null_mut;

use snowmint_c::*;

pub(crate) const FILL: u8 = 0xA5;
pub(crate) const SENTINEL_U64: u64 = 0xDEAD_BEEF_DEAD_BEEF;
pub(crate) const SENTINEL_USIZE: usize = 0x5EED_5EED;

/// Whether `n` is one of the header's status values (the C binding's own
/// table, so a status added there is known here too).
pub(crate) fn known(n: c_int) -> bool {
    all_statuses().iter().any(|&s| s as c_int == n)
}

pub(crate) fn code(s: snowmint_status) -> &'static str {
    let n = s as c_int;
    assert!(known(n), "unknown status {n}");
    assert_ne!(
        s,
        snowmint_status::Panic,
        "a panic was caught at the C boundary"
    );
    let p = snowmint_status_code(n);
    assert!(!p.is_null());
    assert!(!snowmint_status_str(n).is_null());
    // SAFETY: a static NUL-terminated string from the library.
    unsafe { CStr::from_ptr(p) }.to_str().unwrap()
}

/// The status the core's result maps to, as a code.
pub(crate) fn want<T>(r: &Result<T, snowmint::Error>) -> &'static str {
    match r {
        Ok(_) => "ok",
        Err(e) => e.code(),
    }
}

/// When a call has several bad arguments, which one it reports first is
/// not part of the contract: the status must be one of theirs. Returns
/// whether any argument was bad.
pub(crate) fn one_of(c: &str, problems: &[Option<&'static str>]) -> bool {
    let p: Vec<&str> = problems.iter().flatten().copied().collect();
    if !p.is_empty() {
        assert!(p.contains(&c), "status {c}, expected one of {p:?}");
    }
    !p.is_empty()
}

/// The status a string argument gives before its text is used.
pub(crate) fn str_problem(t: Option<Result<&str, ()>>) -> Option<&'static str> {
    match t {
        None => Some("null_argument"),
        Some(Err(())) => Some("invalid_utf8"),
        Some(Ok(_)) => None,
    }
}

pub(crate) fn null_if(b: bool) -> Option<&'static str> {
    b.then_some("null_argument")
}

pub(crate) fn check_text(status: snowmint_status, buf: &[u8], written: usize, expect: &str) {
    if status == snowmint_status::Ok {
        assert_eq!(written, expect.len());
        assert!(written < buf.len());
        assert_eq!(&buf[..written], expect.as_bytes());
        assert_eq!(buf[written], 0);
        assert!(
            buf[written + 1..].iter().all(|&b| b == FILL),
            "wrote past the NUL"
        );
    } else {
        assert_eq!(written, SENTINEL_USIZE, "`written` set on failure");
        assert!(buf.iter().all(|&b| b == FILL), "buffer written on failure");
    }
}

/// Calls a text writer with a buffer of `len` bytes (or NULL) and checks it.
pub(crate) fn text_call(
    len: usize,
    null_buf: bool,
    null_written: bool,
    expect: &str,
    f: impl FnOnce(*mut c_char, usize, *mut usize) -> snowmint_status,
) {
    let mut buf = vec![FILL; len];
    let mut written = SENTINEL_USIZE;
    let bp = if null_buf {
        null_mut()
    } else {
        buf.as_mut_ptr().cast()
    };
    let wp = if null_written {
        null_mut()
    } else {
        &mut written as *mut usize
    };
    let s = f(bp, len, wp);
    let c = code(s);
    if null_buf || null_written {
        assert_eq!(c, "null_argument");
    } else if expect.len() + 1 > len {
        assert_eq!(c, "buffer_too_small");
    } else {
        assert_eq!(c, "ok");
    }
    check_text(s, &buf, written, expect);
}

//! The status every fallible function returns, and the one place core errors
//! are mapped to it: status `code_index() + 1`, by a table built against the
//! core's `Error::ALL_CODES`.

use core::ffi::{c_char, c_int, CStr};
use std::cell::{Cell, RefCell};

use snowmint::Error;
use snowmint_lease::LeaseError;

use crate::ffi::{boundary_value, c_string_at, c_strings, write_text};

/// What a fallible function did. `SNOWMINT_STATUS_OK` (0) is success; every
/// other value is an error and the function wrote none of its outputs.
///
/// Values 1 to 99 are the core's error codes, in the core's order (the
/// cross-language contract: `snowmint_status_code()` gives the same string as
/// Python's `.code` and a JavaScript error's `code`); values from 100 are
/// errors of the C interface itself. Values are never reused or renumbered.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum snowmint_status {
    /// Success.
    Ok = 0,
    /// The layout or its JSON descriptor is not acceptable.
    InvalidLayout = 1,
    /// No preset has this name.
    UnknownPreset = 2,
    /// The layout has no node field of this name.
    UnknownField = 3,
    /// No value was given for a node field.
    MissingNode = 4,
    /// A value does not fit its field.
    NodeOutOfRange = 5,
    /// A policy string, count or resume_after is not acceptable.
    InvalidOption = 6,
    /// A time is before the layout's epoch.
    TimeBeforeEpoch = 7,
    /// A time is past the end of the layout's time field.
    TimeOverflow = 8,
    /// The clock is behind the last ID by more than the policy allows.
    ClockMovedBackwards = 9,
    /// Not a valid ID (for this layout, or in this format).
    InvalidId = 10,
    /// The generator was created before fork() and used in the child.
    ProcessForked = 11,
    /// No lease could be had (store unreachable, every slot held, clocks too far apart).
    LeaseUnavailable = 12,
    /// The lease ran out: no ID past the confirmed reservation.
    LeaseExpired = 13,
    /// The lease's slot is fenced until a time the clock has not reached (the
    /// store may have forgotten, or a previous holder reserved it): wait.
    LeaseFenced = 14,
    /// The clock did not advance while the generator waited for the next time
    /// unit (the sequence of this one is used up): a clock that stands still.
    ClockStalled = 15,
    /// A required pointer argument was NULL.
    NullArgument = 100,
    /// The caller's buffer cannot hold the output and its NUL.
    BufferTooSmall = 101,
    /// A string argument is not UTF-8.
    InvalidUtf8 = 102,
    /// A field or node index is not below the count.
    IndexOutOfRange = 103,
    /// A bug inside the library was caught at the C boundary.
    Panic = 104,
    /// Reserved: an error this version of the C library does not know.
    UnknownError = 105,
}

use snowmint_status as S;

/// The status of each core code, indexed by `Error::code_index()`. Its length
/// is the core's number of codes, so a code added to the core fails the build
/// here until it has its status (value `code_index() + 1`, checked below; the
/// unit test checks that the names agree).
pub(crate) const CORE: [S; Error::ALL_CODES.len()] = [
    S::InvalidLayout,
    S::UnknownPreset,
    S::UnknownField,
    S::MissingNode,
    S::NodeOutOfRange,
    S::InvalidOption,
    S::TimeBeforeEpoch,
    S::TimeOverflow,
    S::ClockMovedBackwards,
    S::InvalidId,
    S::ProcessForked,
    S::LeaseUnavailable,
    S::LeaseExpired,
    S::LeaseFenced,
    S::ClockStalled,
];
const _: () = {
    let mut i = 0;
    while i < CORE.len() {
        assert!(
            CORE[i] as usize == i + 1,
            "a core status is code_index() + 1"
        );
        i += 1;
    }
    assert!(CORE.len() < S::NullArgument as usize);
};

/// The core's codes as C strings.
static CORE_CODES: [[u8; 32]; Error::ALL_CODES.len()] = c_strings(Error::ALL_CODES);

/// The messages of the core's statuses, in the order of `Error::ALL_CODES`.
/// (A failing call's own message, with its values, is the core's; these
/// describe the status as a whole.)
const CORE_MESSAGES: [&CStr; Error::ALL_CODES.len()] = [
    c"the layout or its JSON descriptor is not acceptable",
    c"no preset has this name (snowmint_preset_name() lists them)",
    c"the layout has no node field of this name",
    c"no value was given for a node field",
    c"a value does not fit its field",
    c"a generator option (policy string, count, resume_after) is not acceptable",
    c"a time is before the layout's epoch",
    c"a time is past the end of the layout's time field",
    c"the clock moved backwards by more than the clock policy tolerates",
    c"not a valid ID (for this layout, or in this format)",
    c"this generator was created before fork(); create a new one in the child with a node value no other process uses",
    c"no lease could be had: the store is unreachable, every slot is held, or the clocks differ too much",
    c"the lease ran out: no ID may be issued past the reservation the store confirmed",
    c"the lease's slot is fenced: no ID before the fence ends (the store may have forgotten, or a previous holder reserved it); the clock is fine, wait",
    c"the clock did not advance while the sequence of its time unit was used up: issue fewer IDs at once, or use sequence_exhausted borrow:N",
];

/// The statuses of the C interface itself, with their codes and messages.
#[rustfmt::skip]
pub(crate) const OWN: [(S, &CStr, &CStr); 7] = [
    (S::Ok, c"ok", c"success"),
    (S::NullArgument, c"null_argument", c"a required pointer argument was NULL"),
    (S::BufferTooSmall, c"buffer_too_small", c"the buffer is too small for the output and its terminating NUL"),
    (S::InvalidUtf8, c"invalid_utf8", c"a string argument is not valid UTF-8"),
    (S::IndexOutOfRange, c"index_out_of_range", c"the index is not below the number of fields or node fields"),
    (S::Panic, c"panic", c"a bug in snowmint was caught at the C boundary (please report it)"),
    (S::UnknownError, c"unknown_error", c"an error this version of the C library does not know"),
];

/// Every status value, in ascending order: `Ok`, the core's, then the C
/// interface's own. Built from the two tables above, so a status added to
/// either is here too.
const ALL: [S; CORE.len() + OWN.len()] = {
    let mut all = [S::Ok; CORE.len() + OWN.len()];
    let mut i = 0;
    while i < CORE.len() {
        all[i + 1] = CORE[i];
        i += 1;
    }
    let mut j = 1;
    while j < OWN.len() {
        all[CORE.len() + j] = OWN[j].0;
        j += 1;
    }
    assert!(OWN[0].0 as usize == S::Ok as usize, "OWN starts with Ok");
    let mut k = 1;
    while k < all.len() {
        assert!(
            (all[k - 1] as usize) < all[k] as usize,
            "ascending, no repeats"
        );
        k += 1;
    }
    all
};

/// Every status this version of the library can return, in ascending order.
/// For Rust code that drives the C interface (the fuzz target checks each
/// status against it); not part of the C header.
pub fn all_statuses() -> &'static [snowmint_status] {
    &ALL
}

impl From<Error> for snowmint_status {
    /// The one mapping from core errors to statuses (the message, with its
    /// values, is kept for `snowmint_last_error_message`).
    fn from(e: Error) -> Self {
        set_last_message(e.to_string());
        CORE[e.code_index()]
    }
}

impl From<LeaseError> for snowmint_status {
    /// A lease error is its core error's status; its message names the store
    /// and the cause.
    fn from(e: LeaseError) -> Self {
        set_last_message(e.to_string());
        CORE[e.kind.code_index()]
    }
}

thread_local! {
    /// The message of this thread's last failed call.
    static LAST_MESSAGE: RefCell<String> = const { RefCell::new(String::new()) };
    /// True when a conversion above wrote `LAST_MESSAGE` for the failing
    /// call now returning (else the boundary writes the status's message).
    static MESSAGE_SET: Cell<bool> = const { Cell::new(false) };
}

fn set_last_message(message: String) {
    LAST_MESSAGE.with(|m| *m.borrow_mut() = message);
    MESSAGE_SET.with(|f| f.set(true));
}

/// Called by the boundary when a call fails with `status`: keeps the
/// message a conversion wrote for it, else records the status's own.
pub(crate) fn failed(status: snowmint_status) {
    if !MESSAGE_SET.with(|f| f.replace(false)) {
        // As the core's messages: the text, then the code in brackets.
        let message = describe(status as c_int).map_or(
            "unknown status [unknown_status]".into(),
            |(code, m)| {
                // SAFETY: `describe` gives NUL-terminated static strings.
                let code = unsafe { CStr::from_ptr(code) };
                format!("{} [{}]", m.to_string_lossy(), code.to_string_lossy())
            },
        );
        LAST_MESSAGE.with(|m| *m.borrow_mut() = message);
    }
}

/// The message of the last call that failed on this thread, with its values
/// (which ID, which store and why), NUL-terminated into `buf` of `len`
/// bytes, its length without the NUL into `*written`; empty before any
/// failure. Only failures change it; calling this does not.
#[no_mangle]
pub unsafe extern "C" fn snowmint_last_error_message(
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> snowmint_status {
    boundary_value(snowmint_status::Panic, || {
        let message = LAST_MESSAGE.with(|m| m.borrow().clone());
        // SAFETY: the caller promises `len` writable bytes at `buf`.
        match unsafe { write_text(buf, len, written, &message) } {
            Ok(()) => snowmint_status::Ok,
            Err(s) => s,
        }
    })
}

/// The code and message of a status value, if it is one.
fn describe(status: c_int) -> Option<(*const c_char, &'static CStr)> {
    match usize::try_from(status) {
        Ok(i @ 1..) if i <= CORE.len() => {
            Some((c_string_at(&CORE_CODES, i - 1), CORE_MESSAGES[i - 1]))
        }
        _ => OWN
            .iter()
            .find(|(s, _, _)| *s as c_int == status)
            .map(|(_, code, msg)| (code.as_ptr(), *msg)),
    }
}

/// A static, NUL-terminated English message for a status. Unknown values
/// give "unknown status". Never NULL; the text may change between versions.
#[no_mangle]
pub extern "C" fn snowmint_status_str(status: c_int) -> *const c_char {
    boundary_value(c"unknown status".as_ptr(), || {
        describe(status).map_or(c"unknown status".as_ptr(), |(_, msg)| msg.as_ptr())
    })
}

/// The stable, cross-language code of a status (`"ok"`, `"invalid_layout"`,
/// ..., `"null_argument"`, `"buffer_too_small"`, `"panic"`): the same strings
/// as the core's `Error::code()`. Unknown values give "unknown_status".
/// Never NULL.
#[no_mangle]
pub extern "C" fn snowmint_status_code(status: c_int) -> *const c_char {
    boundary_value(c"unknown_status".as_ptr(), || {
        describe(status).map_or(c"unknown_status".as_ptr(), |(code, _)| code)
    })
}

//! The status every fallible function returns, and the one place core errors
//! are mapped to it.

use core::ffi::{c_char, c_int, CStr};

use snowmint::Error;

/// What a fallible function did. `SNOWMINT_STATUS_OK` (0) is success; every
/// other value is an error and the function wrote none of its outputs.
///
/// Values 1 to 99 are the core's error codes (the cross-language contract:
/// `snowmint_status_code()` gives the same string as Python's `.code` and a
/// JavaScript error's `code`); values from 100 are errors of the C interface
/// itself. Values are never reused or renumbered.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum snowmint_status {
    /// Success.
    Ok = 0,
    /// `invalid_layout`: the layout or its JSON descriptor is not acceptable.
    InvalidLayout = 1,
    /// `unknown_preset`: no preset has this name.
    UnknownPreset = 2,
    /// `unknown_field`: the layout has no node field of this name.
    UnknownField = 3,
    /// `missing_node`: no value was given for a node field.
    MissingNode = 4,
    /// `node_out_of_range`: a value does not fit its field.
    NodeOutOfRange = 5,
    /// `invalid_option`: a policy string, count or resume_after is not acceptable.
    InvalidOption = 6,
    /// `time_before_epoch`: a time is before the layout's epoch.
    TimeBeforeEpoch = 7,
    /// `time_overflow`: a time is past the end of the layout's time field.
    TimeOverflow = 8,
    /// `clock_moved_backwards`: the clock is behind the last ID by more than the policy allows.
    ClockMovedBackwards = 9,
    /// `invalid_id`: not a valid ID (for this layout, or in this format).
    InvalidId = 10,
    /// `process_forked`: the generator was created before fork() and used in the child.
    ProcessForked = 11,
    /// `null_argument`: a required pointer argument was NULL.
    NullArgument = 100,
    /// `buffer_too_small`: the caller's buffer cannot hold the output and its NUL.
    BufferTooSmall = 101,
    /// `invalid_utf8`: a string argument is not UTF-8.
    InvalidUtf8 = 102,
    /// `index_out_of_range`: a field or node index is not below the count.
    IndexOutOfRange = 103,
    /// `panic`: a bug inside the library was caught at the C boundary.
    Panic = 104,
    /// `unknown_error`: an error of a newer core that this build does not know.
    UnknownError = 105,
}

use snowmint_status as S;

/// Every status with its code and message, in one table.
const TABLE: [(S, &CStr, &CStr); 18] = [
    (S::Ok, c"ok", c"success"),
    (S::InvalidLayout, c"invalid_layout", c"the layout or its JSON descriptor is not acceptable"),
    (S::UnknownPreset, c"unknown_preset", c"no preset has this name (known: twitter, discord, instagram, sonyflake, sonyflake-v2, shardingsphere, leaf, baidu, tsid, mastodon)"),
    (S::UnknownField, c"unknown_field", c"the layout has no node field of this name"),
    (S::MissingNode, c"missing_node", c"no value was given for a node field"),
    (S::NodeOutOfRange, c"node_out_of_range", c"a value does not fit its field"),
    (S::InvalidOption, c"invalid_option", c"a generator option (policy string, count, resume_after) is not acceptable"),
    (S::TimeBeforeEpoch, c"time_before_epoch", c"a time is before the layout's epoch"),
    (S::TimeOverflow, c"time_overflow", c"a time is past the end of the layout's time field"),
    (S::ClockMovedBackwards, c"clock_moved_backwards", c"the clock moved backwards by more than the clock policy tolerates"),
    (S::InvalidId, c"invalid_id", c"not a valid ID (for this layout, or in this format)"),
    (S::ProcessForked, c"process_forked", c"this generator was created before fork(); create a new one in the child with a node value no other process uses"),
    (S::NullArgument, c"null_argument", c"a required pointer argument was NULL"),
    (S::BufferTooSmall, c"buffer_too_small", c"the buffer is too small for the output and its terminating NUL"),
    (S::InvalidUtf8, c"invalid_utf8", c"a string argument is not valid UTF-8"),
    (S::IndexOutOfRange, c"index_out_of_range", c"the index is not below the number of fields or node fields"),
    (S::Panic, c"panic", c"a bug in snowmint was caught at the C boundary (please report it)"),
    (S::UnknownError, c"unknown_error", c"an error this version of the C library does not know"),
];

fn lookup(status: c_int) -> Option<&'static (S, &'static CStr, &'static CStr)> {
    TABLE.iter().find(|(s, _, _)| *s as c_int == status)
}

impl From<Error> for snowmint_status {
    /// The one mapping from core errors to statuses.
    fn from(e: Error) -> Self {
        match e {
            Error::InvalidLayout(_) => S::InvalidLayout,
            Error::UnknownPreset => S::UnknownPreset,
            Error::UnknownField { .. } => S::UnknownField,
            Error::MissingNode { .. } => S::MissingNode,
            Error::NodeOutOfRange { .. } => S::NodeOutOfRange,
            Error::InvalidOption(_) => S::InvalidOption,
            Error::TimeBeforeEpoch { .. } => S::TimeBeforeEpoch,
            Error::TimeOverflow { .. } => S::TimeOverflow,
            Error::ClockMovedBackwards { .. } => S::ClockMovedBackwards,
            Error::InvalidId(_) => S::InvalidId,
            Error::ProcessForked => S::ProcessForked,
            // `Error` is #[non_exhaustive], so a wildcard arm is required. A
            // variant added to the core lands here; the tests catch it: the
            // unit test below and the C harness check that every code of
            // `Error::ALL_CODES` / vectors/codes.json has its own status.
            _ => S::UnknownError,
        }
    }
}

/// A static, NUL-terminated English message for a status. Unknown values
/// give "unknown status". Never NULL; the text may change between versions.
#[no_mangle]
pub extern "C" fn snowmint_status_str(status: c_int) -> *const c_char {
    crate::boundary_value(c"unknown status".as_ptr(), || match lookup(status) {
        Some((_, _, msg)) => msg.as_ptr(),
        None => c"unknown status".as_ptr(),
    })
}

/// The stable, cross-language code of a status (`"ok"`, `"invalid_layout"`,
/// ..., `"null_argument"`, `"buffer_too_small"`, `"panic"`): the same strings
/// as the core's `Error::code()`. Unknown values give "unknown_status".
/// Never NULL.
#[no_mangle]
pub extern "C" fn snowmint_status_code(status: c_int) -> *const c_char {
    crate::boundary_value(c"unknown_status".as_ptr(), || match lookup(status) {
        Some((_, code, _)) => code.as_ptr(),
        None => c"unknown_status".as_ptr(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use snowmint::{IdProblem, Layout};

    #[test]
    fn every_core_code_has_its_own_status() {
        for code in Error::ALL_CODES {
            let hits: Vec<_> = TABLE
                .iter()
                .filter(|(_, c, _)| c.to_str() == Ok(code))
                .collect();
            assert_eq!(hits.len(), 1, "{code}");
            let s = hits[0].0 as c_int;
            assert!((1..100).contains(&s), "{code} = {s}");
        }
        // Real errors map to the status of their code.
        let errors = [
            Layout::preset("nope").unwrap_err(),
            Error::InvalidId(IdProblem::Empty),
            Error::ProcessForked,
        ];
        for e in errors {
            let s = snowmint_status::from(e) as c_int;
            assert_eq!(lookup(s).unwrap().1.to_str().unwrap(), e.code());
        }
    }

    #[test]
    fn values_are_distinct_and_listed() {
        for (i, (a, _, _)) in TABLE.iter().enumerate() {
            for (b, _, _) in &TABLE[i + 1..] {
                assert_ne!(*a as c_int, *b as c_int);
            }
        }
        assert!(lookup(99).is_none() && lookup(-1).is_none());
    }
}

//! The error of this crate: a core `snowmint::Error` (whose code is the
//! cross-language contract) with the details only the lease layer knows.

use std::fmt;

use snowmint::{Error, LeaseProblem, OptionProblem};

/// A [`snowmint::Error`] (`kind`: its code and class are what bindings map)
/// plus a detail that names the store, the cause or the bad part of a URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseError {
    /// The core error: `invalid_option`, `lease_unavailable`, `lease_expired`,
    /// or any error of building the generator (`unknown_field`, ...).
    pub kind: Error,
    /// What the core message cannot say (empty when it says it all).
    pub detail: String,
}

impl LeaseError {
    /// The stable code (`kind.code()`).
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// `invalid_option` about the lease URL or one of its options.
    pub(crate) fn url(detail: impl Into<String>) -> LeaseError {
        LeaseError {
            // The code (`invalid_option`) and class (`Value`) of a bad option
            // value; `Display` below adds the detail.
            kind: Error::InvalidOption(OptionProblem::LeaseUrl),
            detail: detail.into(),
        }
    }

    /// `lease_unavailable` for `problem`, with `detail`.
    pub(crate) fn unavailable(problem: LeaseProblem, detail: impl Into<String>) -> LeaseError {
        LeaseError {
            kind: Error::LeaseUnavailable(problem),
            detail: detail.into(),
        }
    }
}

impl From<Error> for LeaseError {
    fn from(kind: Error) -> LeaseError {
        LeaseError {
            kind,
            detail: String::new(),
        }
    }
}

impl fmt::Display for LeaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            Error::InvalidOption(_) if !self.detail.is_empty() => {
                write!(
                    f,
                    "invalid option 'lease': {} [{}]",
                    self.detail,
                    self.code()
                )
            }
            _ if self.detail.is_empty() => write!(f, "{}", self.kind),
            _ => write!(f, "{}: {}", self.detail, self.kind),
        }
    }
}

impl std::error::Error for LeaseError {}

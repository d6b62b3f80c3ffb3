//! The `lease` part: the lease crate's formatting, docs, unit tests (URL
//! parser, slot-space key), doctests, and the multi-process tests on a real
//! directory (40 claimers, SIGKILL and replacement, a lost slot, an
//! unwritable store, clock skew). Its store tests are the `stores` part's.

use crate::step::Part;

pub fn run(p: &Part) -> Result<(), String> {
    p.run(
        "cargo fmt --check (lease)",
        "cargo",
        &["fmt", "-p", "snowmint-lease", "--check"],
        &[],
    )?;
    p.run(
        "cargo doc -D warnings (lease)",
        "cargo",
        &[
            "doc",
            "--quiet",
            "--profile",
            "ci",
            "-p",
            "snowmint-lease",
            "--no-deps",
        ],
        &[("RUSTDOCFLAGS", "-D warnings")],
    )?;
    // The unwritable-store test runs its probe as nobody (setpriv) when run
    // as root, who ignores directory permissions.
    p.run(
        "lease tests, optimised (--profile ci: real processes, a real directory, TTLs of seconds), clippy -D warnings as they build",
        "cargo",
        &["test", "--profile", "ci", "-p", "snowmint-lease"],
        &[],
    )
}

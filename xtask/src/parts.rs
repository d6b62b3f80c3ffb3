//! The parts the runner knows, each with the script that runs it today and
//! (for the test command) its time budget.

/// A part of `cargo xtask test`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestPart {
    pub name: &'static str,
    /// What it checks, for `--help` and CONTRIBUTING.md's table.
    pub what: &'static str,
    /// Seconds it may take on a 2-core machine that has run the tests once
    /// (a fresh clone): past it the runner says so. CONTRIBUTING.md lists
    /// these beside the last run's times (`cargo xtask times --write`).
    pub budget_s: u64,
}

/// Every part of the test command, in the order they run: first those that
/// only compile and run tests without timing checks ([`BUILDS_ONLY`]), with
/// the prefetch and the second lane beside them; then those whose tests
/// have timeouts, each alone.
pub const TEST_PARTS: [TestPart; 13] = [
    TestPart { name: "lint", what: "ESLint over the JavaScript, ruff over the Python", budget_s: 20 },
    TestPart {
        name: "core",
        what: "fmt, clippy, docs, no_std and wasm builds, the core's tests, loom, the vectors' freshness, the CLI, the runner's tests",
        budget_s: 120,
    },
    TestPart { name: "python", what: "the Python package's suite, stubs, the wheel's contents", budget_s: 60 },
    TestPart { name: "node", what: "the Node package (addon and WebAssembly fallback), the shared JS suite", budget_s: 90 },
    TestPart { name: "c", what: "the C and C++ suite, the header's freshness, the installed prefix", budget_s: 40 },
    TestPart { name: "wasm", what: "the WebAssembly packages, the decoder page's committed module", budget_s: 60 },
    TestPart {
        name: "js",
        what: "both npm packages' tarballs: attw, publint, TypeScript consumers; the vectors on Node 18-26, Bun and Deno, native and WebAssembly",
        budget_s: 90,
    },
    TestPart { name: "fuzz", what: "every fuzz target for 4 s (the release check's fuzz part: 30 s)", budget_s: 60 },
    TestPart { name: "lease", what: "the lease crate on a real directory: processes, the driver, the simulation", budget_s: 60 },
    TestPart { name: "stores", what: "PostgreSQL, MariaDB, Redis, etcd and ZooKeeper stores against real servers, and their fault tests", budget_s: 200 },
    TestPart { name: "server", what: "the ID service: its API, four languages' clients, gRPC, Thrift, its fault tests, schemathesis", budget_s: 240 },
    TestPart {
        name: "postgres",
        what: "the PostgreSQL extension: cargo-pgrx install, then SQL on a throwaway cluster (vectors, 16 connections, bad input, convert_sequence)",
        budget_s: 150,
    },
    TestPart { name: "interop", what: "40 Python, Node and CLI processes leasing from each store; the README's store examples", budget_s: 40 },
];

/// The parts that only compile and run tests without timing checks (no
/// timeout of theirs is shorter than a second's delay could reach): the
/// prefetch and the second lane run beside them (see `run::test`). The
/// other parts' tests have timeouts and run alone: measured, the store
/// tests missed their 1 s timeouts beside a build.
pub const BUILDS_ONLY: [&str; 8] = ["lint", "core", "python", "node", "c", "wasm", "js", "fuzz"];

/// The second lane: what runs beside the [`BUILDS_ONLY`] parts, one after
/// another under `nice -n 19`, as `run-part NAME`; once those parts are
/// done, the runner runs the items the lane has not started, beside it.
/// Each builds in a cargo workspace and build folder of its own, so it
/// never waits for the workspace's build lock. For a part of the test command (here the fuzz
/// part) the lane is where it runs; `postgres-build` is the build half of
/// the postgres part (its tools, its SQL tests' build, the extension's
/// `cargo pgrx install`), which the part then finds done.
pub const LANE: [(&str, &str); 2] = [("postgres", "postgres-build"), ("fuzz", "fuzz")];

/// The release check's parts, in order: everything about artifacts for other
/// platforms, which the test command (the behaviour on this host) leaves out.
///
/// - `shell`: shellcheck over every shell script (xtask/src/part_release_lint.rs)
/// - `workflows`: actionlint over .github/workflows (xtask/src/part_release_lint.rs)
/// - `deny`: licences, bans and sources of every locked crate (cargo-deny, deny.toml)
/// - `msrv`: each crate with its declared rust-version
/// - `platforms`: `cargo check` of what the release workflow builds for Windows
///   (MSVC, x86_64) and macOS (arm64) (every target of the workflow with
///   `SNOWMINT_PLATFORMS="TRIPLE..."`)
/// - `crate`: the packaged crate `snowmint`, its own tests from the .crate alone
///   (these four: xtask/src/part_release_rust.rs)
/// - `c`: the C library for x86_64 and aarch64 Linux, built as the wheels
///   of those targets are (their dependencies then built once for both), its
///   suite natively and under valgrind, the aarch64 library's suite under
///   qemu (xtask/src/part_release_c.rs)
/// - `python`: the four Linux wheels with auditwheel and abi3audit, the suite
///   on the x86_64 wheel and on the aarch64 one under qemu, the sdist
/// - `node`: the four Linux addons (zig), their ABI, the six npm packages
///   installed as users would, the suite on x64 and on arm64 under qemu
/// - `fuzz`: every fuzz target for 30 s (the test command's fuzz part gives
///   each 4 s; xtask/src/part_fuzz.rs)
///
/// The C libraries, wheels and addons are built with the release profile
/// less its fat LTO and single codegen unit ([`FAST_RELEASE`]): ten builds of
/// the lease stack for four targets were most of a new machine's CI time, and
/// what the suites check does not depend on LTO; the C library, wheel and
/// addon of a target then share one. `SNOWMINT_RELEASE_LTO=1` builds them as
/// they ship. (`cargo install --path cli` is the
/// test command's, with the `ci` profile.)
///
/// `harness` (the fault harness's short schedule, two stores at a time; needs
/// root; docs/HARNESS.md) runs only when named: CI runs it after the rest
/// when its time allows (.ci/run).
pub const RELEASE_PARTS: [&str; 10] = [
    "shell",
    "workflows",
    "deny",
    "msrv",
    "platforms",
    "crate",
    "c",
    "python",
    "node",
    "fuzz",
];

/// The release parts whose builds take [`FAST_RELEASE`] (unless
/// `SNOWMINT_RELEASE_LTO=1`).
pub const FAST_RELEASE_PARTS: [&str; 3] = ["c", "python", "node"];

/// Cargo's overrides of the release profile for [`FAST_RELEASE_PARTS`]: no
/// fat LTO, 16 codegen units (optimisation level, panic strategy and the rest
/// as they ship).
pub const FAST_RELEASE: [(&str, &str); 2] = [
    ("CARGO_PROFILE_RELEASE_LTO", "false"),
    ("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16"),
];

/// Whether this process runs a release part with [`FAST_RELEASE`] (the
/// release check sets it for [`FAST_RELEASE_PARTS`]).
pub fn fast_release() -> bool {
    FAST_RELEASE
        .iter()
        .all(|(k, v)| std::env::var(k).is_ok_and(|x| x == *v))
}

/// The targets whose wheels and addons the release check builds and
/// inspects but cannot run (no musl CPython or Node here): their checks read
/// the tag, the machine, the libc and the ABI, which do not depend on the
/// optimisation level. With [`FAST_RELEASE`] they are built without
/// optimisation ([`unrun_profile`]): their two builds of the lease stack
/// took 266 s on a new machine, 166 s unoptimised (each addon reuses its
/// wheel's build).
pub const UNRUN_TARGETS: [&str; 2] = ["x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl"];

/// Cargo's overrides for a release part's build for `target` (napi's
/// `.2.17` suffix allowed): `opt-level = 0` for [`UNRUN_TARGETS`] with
/// [`FAST_RELEASE`], else none. Wheel and addon of a target take the same,
/// so the addon still reuses the wheel's build.
pub fn unrun_profile(target: &str) -> &'static [(&'static str, &'static str)] {
    let triple = target.split('.').next().unwrap_or(target);
    if fast_release() && UNRUN_TARGETS.contains(&triple) {
        &[("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")]
    } else {
        &[]
    }
}

/// What a build step's heading adds for [`unrun_profile`]'s builds.
pub fn unrun_note(target: &str) -> &'static str {
    if unrun_profile(target).is_empty() {
        ""
    } else {
        ", opt-level 0: checked, not run"
    }
}

/// The lease stores `stores up` and the stores part can start
/// (xtask/src/stores/NAME.rs).
pub const STORES: [&str; 5] = ["postgres", "mysql", "redis", "etcd", "zookeeper"];

/// A release-check part's budget, seconds, on a 2-core machine as it came
/// (the tools, toolchains, targets and Debian packages install first, and
/// every build is cold): a part over it has grown. Their sum is about an
/// hour, so CI on a new machine is over its 60 minutes (CONTRIBUTING.md).
pub fn release_budget(name: &str) -> u64 {
    match name {
        "shell" | "workflows" => 30,
        "deny" => 120,
        "msrv" => 300,
        "platforms" => 240,
        "crate" => 60,
        // The `c` part builds the lease stack for x86_64 and aarch64 Linux,
        // which the wheels and addons of the `python` and `node` parts reuse.
        "c" => 540,
        "python" => 600,
        "node" => 900,
        "fuzz" => 420,
        "harness" => 1200,
        _ => 0,
    }
}

/// A release-check part's name: one of [`RELEASE_PARTS`] or `harness`
/// (each runs as `cargo xtask run-part release-NAME`).
pub fn is_release_part(name: &str) -> bool {
    name == "harness" || RELEASE_PARTS.contains(&name)
}

pub fn test_part(name: &str) -> Option<&'static TestPart> {
    TEST_PARTS.iter().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_release_part_has_a_budget() {
        for name in RELEASE_PARTS.iter().chain(&["harness"]) {
            assert!(
                release_budget(name) > 0,
                "the release part {name} has no budget"
            );
        }
    }
}

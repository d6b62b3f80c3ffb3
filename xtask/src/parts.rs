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

/// Every part of the test command, in the order they run.
pub const TEST_PARTS: [TestPart; 12] = [
    TestPart { name: "lint", what: "ESLint over the JavaScript, ruff over the Python", budget_s: 20 },
    TestPart {
        name: "core",
        what: "fmt, clippy, docs, no_std and wasm builds, the core's tests, loom, the vectors' freshness, the CLI",
        budget_s: 120,
    },
    TestPart { name: "lease", what: "the lease crate on a real directory: processes, the driver, the simulation", budget_s: 60 },
    TestPart { name: "stores", what: "PostgreSQL, MariaDB, Redis, etcd and ZooKeeper stores against real servers, and their fault tests", budget_s: 200 },
    TestPart { name: "server", what: "the ID service: its API, four languages' clients, gRPC, Thrift, its fault tests, schemathesis", budget_s: 240 },
    TestPart { name: "python", what: "the Python package's suite, stubs, the wheel's contents", budget_s: 60 },
    TestPart { name: "node", what: "the Node package (addon and WebAssembly fallback), the shared JS suite", budget_s: 90 },
    TestPart { name: "c", what: "the C and C++ suite, the header's freshness, the installed prefix", budget_s: 40 },
    TestPart { name: "interop", what: "40 Python, Node and CLI processes leasing from each store; the README's store examples", budget_s: 40 },
    TestPart { name: "wasm", what: "the WebAssembly packages, the decoder page's committed module", budget_s: 60 },
    TestPart {
        name: "js",
        what: "both npm packages' tarballs: attw, publint, TypeScript consumers; the vectors on Node 18-26, Bun and Deno, native and WebAssembly",
        budget_s: 90,
    },
    TestPart { name: "fuzz", what: "a bounded run of every fuzz target", budget_s: 180 },
];

/// The parts that only compile and run tests without timing checks: the
/// prefetch may run beside them (see `run::test`).
pub const PREFETCH_BESIDE: [&str; 2] = ["lint", "core"];

/// The release check's parts, in order: everything about artifacts for other
/// platforms, which the test command (the behaviour on this host) leaves out.
///
/// - `shell`: shellcheck over every shell script (scripts/check-shell)
/// - `workflows`: actionlint over .github/workflows (scripts/check-workflows)
/// - `deny`: licences, bans and sources of every locked crate (cargo-deny, deny.toml)
/// - `msrv`: each crate with its declared rust-version (scripts/check-msrv)
/// - `platforms`: `cargo check` of what the release workflow builds for Windows
///   (MSVC) and macOS (x86_64, arm64) (scripts/check-platforms)
/// - `crate`: the packaged crate `snowmint`, its own tests from the .crate alone
/// - `cli`: `cargo install --path cli` with the release profile
/// - `c`: the release C library, its suite natively and under valgrind, the
///   aarch64 library's suite under qemu (scripts/release-c)
/// - `python`: the four Linux wheels with auditwheel and abi3audit, the suite
///   on the x86_64 wheel and on the aarch64 one under qemu, the sdist
/// - `node`: the four Linux addons (zig), their ABI, the six npm packages
///   installed as users would, the suite on x64 and on arm64 under qemu
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
    "cli",
    "c",
    "python",
    "node",
];

/// The lease stores `stores up` can start (scripts/stores/NAME.sh).
pub const STORES: [&str; 5] = ["postgres", "mysql", "redis", "etcd", "zookeeper"];

/// The parts written in Rust (xtask/src/part_NAME.rs); the others are still
/// their script, `scripts/test-NAME`.
pub const IN_RUST: [&str; 2] = ["lease", "js"];

pub fn test_part(name: &str) -> Option<&'static TestPart> {
    TEST_PARTS.iter().find(|p| p.name == name)
}

/// The script of a release-check part, and its arguments.
pub fn release_script(name: &str) -> Option<(String, &'static [&'static str])> {
    match name {
        "python" | "node" | "c" | "cli" | "crate" => Some((format!("scripts/release-{name}"), &[])),
        "platforms" | "msrv" | "deny" | "shell" | "workflows" => {
            Some((format!("scripts/check-{name}"), &[]))
        }
        "harness" => Some(("scripts/harness".to_string(), &["--short", "--jobs", "2"])),
        _ => None,
    }
}

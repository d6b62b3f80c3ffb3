//! The `core` part: the core, the vectors and the CLI. One version
//! everywhere, formatting, lints, the no_std and wasm builds, every Rust test
//! (vectors, properties, threads, fork, serde, doctests), the examples, the
//! packaged crate's contents, `cargo install --path cli`, loom, and the
//! runner's own tests. The packaged crate's own tests: the release check's
//! crate part.

pub(crate) mod consistency;

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::step::{read, remove_dir, Part};
use crate::tools::{host_triple, rust_target};

pub fn run(p: &Part) -> Result<(), String> {
    let root = &p.root;
    let cargo = |args: &[&str]| {
        let mut c = p.cmd("cargo");
        c.args(args);
        c
    };

    p.say("one version everywhere (Cargo.toml, pyproject.toml, package.json, the C header)");
    consistency::versions(p)?;

    p.say("one build of each dependency the crates with lease stores share (tools/workspace-hack)");
    consistency::unified(p)?;

    p.say("cargo fmt --check");
    p.check(&mut cargo(&["fmt", "--all", "--check"]))?;

    // Clippy -D warnings: every build below lints what it compiles of the
    // workspace (scripts/lint-rustc, RUSTC_WORKSPACE_WRAPPER): the core
    // without std (the bare-metal builds) and with it, each test, example and
    // binary of the core, the CLI and the vector builder, the loom package
    // under --cfg loom.

    p.say("cargo doc -D warnings, with and without the std feature");
    let doc = [
        "doc",
        "--quiet",
        "--profile",
        "ci",
        "-p",
        "snowmint",
        "--no-deps",
    ];
    for extra in [
        &[][..],
        &["--no-default-features"],
        &["--features", "mask,serde"],
    ] {
        p.check(cargo(&doc).args(extra).env("RUSTDOCFLAGS", "-D warnings"))?;
    }

    p.say("no_std build for a bare-metal target (thumbv7em-none-eabihf) and a wasm32 build");
    rust_target(p, "thumbv7em-none-eabihf")?;
    rust_target(p, "wasm32-unknown-unknown")?;
    let build = ["build", "--quiet", "--profile", "ci", "-p", "snowmint"];
    p.check(cargo(&build).args(["--no-default-features", "--target", "thumbv7em-none-eabihf"]))?;
    // The public-ID mask needs an allocator, not std.
    p.check(cargo(&build).args([
        "--no-default-features",
        "--features",
        "mask,serde",
        "--target",
        "thumbv7em-none-eabihf",
    ]))?;
    p.check(cargo(&build).args(["--target", "wasm32-unknown-unknown"]))?;

    p.say("core tests (vectors, properties, threads, fork, public-ID mask, doctests), optimised (--profile ci)");
    // Optimised (the `ci` profile: release without LTO): the thread tests
    // mint millions of IDs. With `mask`: core/tests/mask*.rs; with `serde`:
    // core/tests/serde.rs. `cargo test` also builds core/examples/, run below.
    p.check(&mut cargo(&[
        "test",
        "--profile",
        "ci",
        "-p",
        "snowmint",
        "--features",
        "mask,serde",
    ]))?;
    p.check(&mut cargo(&[
        "build",
        "--quiet",
        "--profile",
        "ci",
        "-p",
        "snowmint",
        "--features",
        "mask,serde",
        "--examples",
    ]))?;
    for example in [
        "generate",
        "decode",
        "custom_layout",
        "no_std_state_machine",
        "mask",
    ] {
        let ok = Command::new(root.join("target/ci/examples").join(example))
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return Err(format!("example {example} failed"));
        }
    }

    p.say("the published crate: cargo package -p snowmint and what the .crate carries");
    // Its own tests from the .crate alone: the release check's crate part.
    let (crate_file, _) = package_core_crate(p)?;
    let size = fs::metadata(&crate_file)
        .map_err(|e| format!("{}: {e}", crate_file.display()))?
        .len();
    println!(
        "{}: {size} bytes",
        crate_file.file_name().unwrap_or_default().to_string_lossy()
    );

    p.say("the runner's own tests (cargo test -p xtask), built as `cargo xtask` built the runner");
    // The dev profile in the checkout's target/, where `cargo xtask` put the
    // runner and its dependencies: only the test executable is compiled.
    p.check(cargo(&["test", "--quiet", "-p", "xtask"]).env_remove("CARGO_BUILD_BUILD_DIR"))?;

    p.say("vectors are fresh, CLI tests, the docs and README checks (tools/vectors/tests/docs.rs)");
    p.check(&mut cargo(&[
        "test",
        "--profile",
        "ci",
        "-p",
        "snowmint-vectors",
        "-p",
        "snowmint-cli",
    ]))?;
    // (cli/tests/readme.rs, run by the line above: the README's CLI examples
    // run and print what the README shows.) The binary that command built:
    p.check(p.cmd(root.join("target/ci/snowmint")).args([
        "generate",
        "--preset",
        "twitter",
        "--node",
        "datacenter=1",
        "--node",
        "worker=3",
        "-n",
        "5",
    ]))?;

    p.say("cargo install --path cli (--root a temporary folder): the installed binary runs");
    let install_root =
        std::env::temp_dir().join(format!("snowmint-install-{}", std::process::id()));
    remove_dir(&install_root)?;
    let installed = (|| {
        // The workspace's target folder and the `ci` profile: the build above
        // is reused (a release build, with LTO, is what the release check
        // installs).
        p.check(
            cargo(&[
                "install",
                "--quiet",
                "--locked",
                "--profile",
                "ci",
                "--path",
                "cli",
                "--root",
            ])
            .arg(&install_root)
            .env("CARGO_TARGET_DIR", root.join("target")),
        )?;
        let bin = install_root.join("bin/snowmint");
        let out = p.output(Command::new(&bin).args([
            "decode",
            "--preset",
            "discord",
            "175928847299117063",
        ]))?;
        if !out.contains("2016-04-30T11:18:25.796Z  sequence=7 worker=1 process=0") {
            return Err(format!("installed CLI printed: {out}"));
        }
        let size = fs::metadata(&bin)
            .map_err(|e| format!("{}: {e}", bin.display()))?
            .len();
        println!("installed snowmint: {size} bytes");
        Ok(())
    })();
    let _ = fs::remove_dir_all(&install_root);
    installed?;

    p.say("loom: next_id and next_ids against a reservation raised, stopped or lost concurrently, every interleaving (up to 3 preemptions)");
    // --target (the host's): RUSTFLAGS then reach only the code under test
    // and its dependencies, which --cfg loom changes, built into
    // target/<host>/ci, apart from target/ci; the build scripts and proc
    // macros are target/ci's, already built by the tests above. The tests are
    // the package core/loom's: in the core's own package, cargo would build
    // every dev-dependency of the core again under --cfg loom.
    let host = host_triple(p)?;
    p.check(
        cargo(&[
            "test",
            "--quiet",
            "--profile",
            "ci",
            "--target",
            &host,
            "-p",
            "snowmint-loom",
        ])
        .args(["--test", "loom", "--test", "loom_lease"])
        .env("LOOM_MAX_PREEMPTIONS", "3")
        .env("RUSTFLAGS", "--cfg loom"),
    )
}

/// `cargo package -p snowmint` (no verify build) into target/package, and
/// checks what the .crate carries (the licences, the README, an example and
/// the test data its tests read); its path and version (also the release
/// check's `crate` part's).
pub fn package_core_crate(p: &Part) -> Result<(PathBuf, String), String> {
    let root = &p.root;
    p.check(p.cmd("cargo").args([
        "package",
        "--quiet",
        "-p",
        "snowmint",
        "--no-verify",
        "--allow-dirty",
    ]))?;
    let version = read(&root.join("Cargo.toml"))?
        .lines()
        .find_map(|l| {
            l.strip_prefix("version = \"")
                .and_then(|r| r.strip_suffix('"'))
        })
        .ok_or("Cargo.toml has no version line")?
        .to_string();
    // Where cargo package wrote it: the target folder (CARGO_TARGET_DIR if
    // set, as for every cargo command of the runner).
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let crate_file = target.join(format!("package/snowmint-{version}.crate"));
    let listing = p.output(Command::new("tar").arg("tzf").arg(&crate_file))?;
    for f in [
        "LICENSE-MIT",
        "LICENSE-APACHE",
        "README.md",
        "examples/mask.rs",
        "tests/data/ids.json",
    ] {
        let want = format!("snowmint-{version}/{f}");
        if !listing.lines().any(|l| l == want) {
            return Err(format!("{} has no {f}", crate_file.display()));
        }
    }
    for f in ["LICENSE-MIT", "LICENSE-APACHE"] {
        let out = Command::new("tar")
            .arg("xzOf")
            .arg(&crate_file)
            .arg(format!("snowmint-{version}/{f}"))
            .output()
            .map_err(|e| format!("cannot run tar: {e}"))?;
        if !out.status.success() || out.stdout != fs::read(root.join(f)).unwrap_or_default() {
            return Err(format!(
                "{f} in {} differs from the repository's",
                crate_file.display()
            ));
        }
    }
    Ok((crate_file, version))
}

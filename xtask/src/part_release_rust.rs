//! The release check's parts about the Rust crates themselves:
//!
//! - `deny`: cargo-deny (pinned) over every locked crate (the workspace's and
//!   bindings-postgres/'s lock files): licences, bans and
//!   sources (deny.toml; advisories are not checked, deny.toml says why);
//! - `msrv`: each crate with its declared rust-version (`cargo +VERSION check
//!   --locked --all-features`, one run per version, the toolchains installed
//!   with rustup's minimal profile); a crate without one fails;
//! - `platforms`: `cargo check` of what the release workflow builds for
//!   Windows (MSVC, x86_64) and macOS (arm64) (`SNOWMINT_PLATFORMS="TRIPLE..."`
//!   checks others);
//! - `crate`: the packaged crate `snowmint`, its own tests from the .crate
//!   alone.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};

use crate::step::Part;
use crate::tools::{cargo_tool, rust_target, Source};

pub fn deny(p: &Part) -> Result<(), String> {
    p.say("tools: cargo-deny 0.20.2");
    cargo_tool(
        p,
        "cargo-deny",
        "0.20.2",
        "cargo-deny",
        Source::Registry,
        &["--locked"],
    )?;
    // The workspace, and the PostgreSQL extension's own workspace (its own
    // lock file), under the same policy: cargo-deny finds the root's
    // deny.toml from a manifest below it.
    for (what, manifest) in [
        ("the workspace", "Cargo.toml"),
        ("bindings-postgres", "bindings-postgres/Cargo.toml"),
    ] {
        p.say(&format!(
            "cargo deny check licenses bans sources (deny.toml): {what}"
        ));
        p.check(p.cmd("cargo").args([
            "deny",
            "--manifest-path",
            manifest,
            "--locked",
            "--all-features",
            "check",
            "--hide-inclusion-graph",
            "licenses",
            "bans",
            "sources",
        ]))?;
    }
    Ok(())
}

pub fn msrv(p: &Part) -> Result<(), String> {
    std::env::set_var("CARGO_TARGET_DIR", p.root.join("target/msrv"));
    let meta = p.output(p.cmd("cargo").args([
        "metadata",
        "--format-version",
        "1",
        "--no-deps",
        "--locked",
    ]))?;
    let meta: serde_json::Value =
        serde_json::from_str(&meta).map_err(|e| format!("cargo metadata's output: {e}"))?;
    // The crates of each declared version, the versions in order.
    let mut crates_of: BTreeMap<Vec<u64>, (String, Vec<String>)> = BTreeMap::new();
    for pkg in meta["packages"].as_array().into_iter().flatten() {
        let name = pkg["name"].as_str().unwrap_or_default();
        let Some(version) = pkg["rust_version"].as_str().filter(|v| !v.is_empty()) else {
            return Err(format!("{name} declares no rust-version"));
        };
        let key = version.split('.').map(|n| n.parse().unwrap_or(0)).collect();
        let entry = crates_of
            .entry(key)
            .or_insert_with(|| (version.to_string(), Vec::new()));
        entry.1.push(name.to_string());
    }
    for (version, crates) in crates_of.values() {
        let have = Command::new("rustup")
            .args(["run", version, "rustc", "--version"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !have {
            p.say(&format!(
                "msrv: rustup toolchain install {version} --profile minimal"
            ));
            p.check(Command::new("rustup").args([
                "toolchain",
                "install",
                version,
                "--profile",
                "minimal",
                "--no-self-update",
            ]))?;
        }
        let packages: Vec<String> = crates
            .iter()
            .flat_map(|c| ["-p".to_string(), c.clone()])
            .collect();
        p.say(&format!(
            "msrv: cargo +{version} check --locked --all-features {}",
            packages.join(" ")
        ));
        p.check(
            p.cmd("cargo")
                .arg(format!("+{version}"))
                .args(["check", "--quiet", "--locked", "--all-features"])
                .args(&packages),
        )?;
    }
    p.say("msrv: every crate builds with its declared rust-version");
    Ok(())
}

pub fn platforms(p: &Part) -> Result<(), String> {
    let chosen = std::env::var("SNOWMINT_PLATFORMS").unwrap_or_default();
    let mut targets: Vec<&str> = chosen.split_whitespace().collect();
    if targets.is_empty() {
        targets = vec!["x86_64-pc-windows-msvc", "aarch64-apple-darwin"];
    }
    let crates = [
        "-p",
        "snowmint-python",
        "-p",
        "snowmint-node",
        "-p",
        "snowmint-c",
    ];
    for t in &targets {
        rust_target(p, t)?;
    }
    p.say(&format!(
        "platforms: cargo check --target {} (snowmint-python, snowmint-node, snowmint-c)",
        targets.join(" ")
    ));
    let all = p.check(
        p.cmd("cargo")
            .args(["check", "--quiet", "--locked", "--keep-going"])
            .args(crates)
            .args(targets.iter().map(|t| format!("--target={t}"))),
    );
    if all.is_ok() {
        p.say(&format!("platforms: {} pass", targets.join(" ")));
        return Ok(());
    }
    let failed: Vec<&str> = targets
        .iter()
        .copied()
        .filter(|t| {
            !p.cmd("cargo")
                .args(["check", "--quiet", "--locked"])
                .args(crates)
                .args(["--target", t])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .collect();
    Err(format!(
        "the crates the release workflow builds do not compile for: {}",
        if failed.is_empty() {
            "(see the errors above)".to_string()
        } else {
            failed.join(" ")
        }
    ))
}

pub fn packaged_crate(p: &Part) -> Result<(), String> {
    p.say("crate: cargo package -p snowmint");
    let (crate_file, version) = crate::part_core::package_core_crate(p)?;
    // Unpacked outside the workspace (cargo would take it for a member),
    // with new times (`unpack_touched`): unpacked as they were, cargo took a
    // test binary of an earlier run for fresh, which still named that run's
    // removed folder as CARGO_MANIFEST_DIR (the suspend test reads its C
    // shim from there: CI failed so), and a changed crate would not have
    // rebuilt its tests.
    let unpacked = std::env::temp_dir().join(format!("snowmint-crate-{}", std::process::id()));
    let result = (|| {
        crate::step::unpack_touched(p, &crate_file, &unpacked)?;
        p.say("crate: its own tests (features mask, serde) from the .crate alone");
        p.check(
            Command::new("cargo")
                .args([
                    "test",
                    "--quiet",
                    "--locked",
                    "--features",
                    "mask,serde",
                    "--profile",
                    "ci",
                ])
                .args(["--config", "profile.ci.inherits=\"release\""])
                .args(["--config", "profile.ci.codegen-units=16"])
                .args(["--config", "profile.ci.incremental=true"])
                .env("CARGO_TARGET_DIR", p.root.join("target"))
                .current_dir(unpacked.join(format!("snowmint-{version}"))),
        )?;
        let size = std::fs::metadata(&crate_file).map(|m| m.len()).unwrap_or(0);
        println!(
            "{}: {size} bytes, its tests pass from the .crate",
            crate_file.file_name().unwrap_or_default().to_string_lossy()
        );
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&unpacked);
    result
}

//! Cargo's JSON output, read with serde_json: `cargo metadata`, and the
//! test executables `cargo test --no-run` builds.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::step::Part;

/// The version of the workspace package `name` (`cargo metadata --no-deps`).
pub fn package_version(p: &Part, name: &str) -> Result<String, String> {
    let out = p.output(
        Command::new("cargo")
            .args(["metadata", "--format-version", "1", "--no-deps"])
            .current_dir(&p.root),
    )?;
    let meta: Value =
        serde_json::from_str(&out).map_err(|e| format!("cargo metadata's output: {e}"))?;
    meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|pkg| pkg["name"] == name)
        .and_then(|pkg| pkg["version"].as_str())
        .map(str::to_string)
        .ok_or_else(|| format!("cargo metadata lists no package {name}"))
}

/// What `cargo test --no-run` built: each test executable by its target's
/// name (the unit tests of a library and of a binary, each integration
/// test), and the package's binaries built for the integration tests.
#[derive(Debug, Default)]
pub struct TestBuild {
    pub tests: BTreeMap<String, PathBuf>,
    pub bins: BTreeMap<String, PathBuf>,
}

/// Builds the tests `cargo test --no-run ARGS` would build (`--profile ci`,
/// the compiler's messages rendered on standard error) and returns their
/// executables (as the shell runner's `test_bins` did). A part whose tests take
/// minutes runs these itself: cargo holds the build directory's lock while
/// `cargo test` runs the tests, and another checkout's build in the shared
/// build directory would wait for them.
pub fn test_build(p: &Part, args: &[&str]) -> Result<TestBuild, String> {
    let out = p.output(
        Command::new("cargo")
            .args([
                "test",
                "--quiet",
                "--profile",
                "ci",
                "--no-run",
                "--message-format=json-render-diagnostics",
            ])
            .args(args)
            .current_dir(&p.root),
    )?;
    let mut built = TestBuild::default();
    for line in out.lines() {
        let Ok(m) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if m["reason"] != "compiler-artifact" {
            continue;
        }
        let (Some(exe), Some(name)) = (m["executable"].as_str(), m["target"]["name"].as_str())
        else {
            continue;
        };
        let is_bin = m["target"]["kind"]
            .as_array()
            .is_some_and(|k| k.iter().any(|k| k == "bin"));
        if m["profile"]["test"] == true {
            built.tests.insert(name.to_string(), PathBuf::from(exe));
        } else if is_bin {
            built.bins.insert(name.to_string(), PathBuf::from(exe));
        }
    }
    Ok(built)
}

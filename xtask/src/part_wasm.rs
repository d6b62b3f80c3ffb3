//! The `wasm` part: the WebAssembly package (bindings-wasm/, crate
//! snowmint-wasm).
//!
//! 1. rustfmt and clippy on the binding crate (host and wasm32);
//! 2. build (`cargo xtask build-wasm`, wasm_build.rs: cargo for
//!    wasm32-unknown-unknown, wasm-bindgen for Node and for browsers, npm
//!    binaryen's wasm-opt, bindings-wasm/assemble.cjs) and fail if the web package committed for the decoder page (www/pkg/) is
//!    stale; both npm tarballs carry the licences;
//! 3. the shared JS suite (tests/js/, also run by the native Node package)
//!    against the nodejs build;
//! 4. the wasm-only tests (bindings-wasm/test/): the size budget, the
//!    package files, the web build under Node, Layout.decodeMany, the README
//!    quickstart, and the decoder page in headless Chromium (playwright-core;
//!    screenshot saved to artifacts/decoder.png).
//!
//! Benchmarks are separate: bench/wasm/run.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::step::{glob, same_file, Part};
use crate::tools::{apt, rust_target, wasm_bindgen};
use crate::venv::WASM_BINDGEN_VERSION;

pub fn run(p: &Part) -> Result<(), String> {
    let root = &p.root;
    // The workspace's target folder: the wasm32 builds have a folder of their
    // own in it.
    std::env::set_var("CARGO_TARGET_DIR", root.join("target"));

    p.say("wasm: rustfmt and clippy (snowmint-wasm)");
    p.check(
        p.cmd("cargo")
            .args(["fmt", "-p", "snowmint-wasm", "--check"]),
    )?;
    p.check(p.cmd("cargo").args([
        "clippy",
        "--quiet",
        "--profile",
        "ci",
        "-p",
        "snowmint-wasm",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;

    p.say(&format!("wasm: tools (wasm32 target, wasm-bindgen {WASM_BINDGEN_VERSION} (tools/wasm-bindgen), npm binaryen and playwright-core, chromium)"));
    rust_target(p, "wasm32-unknown-unknown")?;
    wasm_bindgen(p)?;
    npm_ci(p, &root.join("bindings-wasm"))?;
    if !crate::tools::executable(Path::new("/usr/bin/chromium")) {
        apt(p, &["chromium"])?;
    }

    p.say("wasm: clippy for wasm32-unknown-unknown (the target the package is built for)");
    p.check(p.cmd("cargo").args([
        "clippy",
        "--quiet",
        "--profile",
        "ci",
        "-p",
        "snowmint-wasm",
        "--target",
        "wasm32-unknown-unknown",
        "--",
        "-D",
        "warnings",
    ]))?;

    p.say("wasm: build (cargo xtask build-wasm --check)");
    crate::wasm_build::build(p, true, &root.join("target"))?;
    // Both npm tarballs carry the licences.
    for pkg in ["pkg-node", "pkg-web"] {
        let dir = root.join("bindings-wasm").join(pkg);
        let listing = Command::new("npm")
            .args(["pack", "--dry-run", "--json"])
            .current_dir(&dir)
            .stderr(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run npm pack: {e}"))?;
        let files = packed_files(&String::from_utf8_lossy(&listing.stdout))?;
        for f in ["LICENSE-MIT", "LICENSE-APACHE"] {
            if !files.iter().any(|x| x == f) {
                return Err(format!("the {pkg} tarball has no {f}"));
            }
            same_file(&dir.join(f), &root.join(f))?;
        }
    }

    std::env::set_var("SNOWMINT_JS_PKG", root.join("bindings-wasm/pkg-node"));
    std::env::set_var("SNOWMINT_VECTORS", root.join("vectors"));
    std::env::set_var("SNOWMINT_ARTIFACTS", root.join("artifacts"));

    p.say("wasm: shared JS suite (tests/js) against the nodejs build");
    p.check(
        p.cmd("node")
            .args(["--test", "--test-reporter=dot"])
            .args(glob(&root.join("tests/js"), ".test.mjs")?),
    )?;

    p.say("wasm: wasm-only tests (bindings-wasm/test): size, packages, README, browser");
    p.check(
        p.cmd("node")
            .args(["--test", "--test-reporter=spec"])
            .args(glob(&root.join("bindings-wasm/test"), ".test.mjs")?),
    )?;

    p.say("wasm: all tests passed");
    Ok(())
}

/// `npm ci` in `dir`.
pub fn npm_ci(p: &Part, dir: &Path) -> Result<(), String> {
    p.check(
        Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(dir),
    )
}

/// The paths `npm pack --dry-run --json` lists (its one package's `files`).
fn packed_files(json: &str) -> Result<Vec<String>, String> {
    let v: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("npm pack --json's output: {e}"))?;
    Ok(v.as_array()
        .into_iter()
        .flatten()
        .flat_map(|pkg| pkg["files"].as_array().into_iter().flatten())
        .filter_map(|f| f["path"].as_str().map(str::to_string))
        .collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn packed_files() {
        let json = r#"[{"id":"x@1","files":[{"path":"LICENSE-MIT","size":1},{"path":"a.js"}]}]"#;
        assert_eq!(super::packed_files(json).unwrap(), ["LICENSE-MIT", "a.js"]);
    }
}

//! `cargo xtask build-wasm [--check]`: the WebAssembly packages, built from
//! the crate in bindings-wasm/:
//!
//! ```text
//! pkg-node/  wasm-bindgen --target nodejs (CommonJS): require('./pkg-node')
//! pkg-web/   wasm-bindgen --target web (ESM): import init, {...} from './pkg-web/index.js'
//! ```
//!
//! and the copy of the web package that the decoder page imports (www/pkg/,
//! committed so the page needs no build step) refreshed; with `--check` it
//! is compared instead, and the command fails if it differs from the fresh
//! build. The wasm and node test parts build with `--check`.
//!
//! The environment, for comparisons by hand:
//! - `OPT_LEVEL`: the release profile's opt-level (default `s`; `z` to compare);
//! - `INLINE`: LLVM's inlining threshold (default 25; 50 is opt-level `s`'s own);
//! - `CARGO_TARGET_DIR`: cargo's target folder (default `target/wasm`; the
//!   test parts use `target/`).
//!
//! Needs the wasm32-unknown-unknown target and wasm-bindgen
//! `WASM_BINDGEN_VERSION` built from tools/wasm-bindgen's lock file (the
//! command installs both as the test parts do), and `npm ci` in
//! bindings-wasm (npm's binaryen for wasm-opt: Debian's binaryen 108
//! silently breaks the module; terser), which the command runs when those
//! tools are missing.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::cargo_json::package_version;
use crate::step::{copy, mkdir, remove_dir, Part};

/// The features rustc enables by default for wasm32-unknown-unknown;
/// wasm-opt must know them to read the module, and uses nothing beyond them.
const FEATURES: [&str; 6] = [
    "--enable-bulk-memory",
    "--enable-multivalue",
    "--enable-mutable-globals",
    "--enable-nontrapping-float-to-int",
    "--enable-reference-types",
    "--enable-sign-ext",
];

/// -Oz until nothing changes (--converge). --low-memory-unused: the module
/// never touches the first 1 KB of its memory (Rust places its stack and
/// data from 1 MB up, and no pointer it follows is null), so wasm-opt may
/// fold constant offsets into addresses; together about 0.5 KB. The custom
/// sections no engine reads go: names and debug info, `producers`
/// (toolchain versions) and `target_features` (the list above, for linkers;
/// 151 bytes).
const WASM_OPT: [&str; 3] = ["-Oz", "--converge", "--low-memory-unused"];
const STRIP: [&str; 3] = [
    "--strip-debug",
    "--strip-producers",
    "--strip-target-features",
];

/// The web package's JavaScript, minified for browsers.
const MINIFIED: [&str; 5] = [
    "index.js",
    "api.js",
    "api-common.js",
    "parts.js",
    "snowmint_wasm.js",
];

/// What the decoder page loads: the web package's files that www/pkg/ holds.
const PAGE_FILES: [&str; 6] = [
    "index.js",
    "api.js",
    "api-common.js",
    "parts.js",
    "snowmint_wasm.js",
    "snowmint_wasm_bg.wasm",
];

/// The files both npm packages list.
const FILES: &str = r#"["index.js", "index.d.ts", "api.js", "api-common.js", "parts.js", "snowmint_wasm.js", "snowmint_wasm.d.ts", "snowmint_wasm_bg.wasm", "snowmint_wasm_bg.wasm.d.ts", "LICENSE-MIT", "LICENSE-APACHE"]"#;

/// `cargo xtask build-wasm [--check]`, run by hand (the caller's
/// environment kept, as it sets `OPT_LEVEL`, `INLINE` or `CARGO_TARGET_DIR`).
pub fn command(root: &Path, args: &[String]) -> u8 {
    let check = match args {
        [] => false,
        [a] if a == "--check" => true,
        _ => {
            eprintln!("usage: cargo xtask build-wasm [--check]");
            return 2;
        }
    };
    let p = Part::keeping_env(root);
    let target_dir = match var("CARGO_TARGET_DIR") {
        Some(dir) => std::env::current_dir()
            .map(|d| d.join(dir))
            .map_err(|e| format!("the current folder: {e}")),
        None => Ok(root.join("target/wasm")),
    };
    match target_dir.and_then(|t| tools(&p).and_then(|()| build(&p, check, &t))) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("build-wasm: {e}");
            1
        }
    }
}

/// The tools the build needs, installed when missing: the wasm32 target,
/// the pinned wasm-bindgen (put first on PATH) and bindings-wasm's npm
/// packages. The test parts install them themselves.
fn tools(p: &Part) -> Result<(), String> {
    crate::tools::rust_target(p, "wasm32-unknown-unknown")?;
    crate::tools::wasm_bindgen(p)?;
    let bin = p.root.join("bindings-wasm/node_modules/.bin");
    if !["wasm-opt", "terser"]
        .iter()
        .all(|t| crate::tools::executable(&bin.join(t)))
    {
        crate::part_wasm::npm_ci(p, &p.root.join("bindings-wasm"))?;
    }
    Ok(())
}

/// Builds pkg-node/ and pkg-web/ with cargo's target folder `target_dir`,
/// then refreshes www/pkg/ or (`check`) fails if it differs from the fresh
/// build. The tools must be installed, wasm-bindgen on PATH.
pub fn build(p: &Part, check: bool, target_dir: &Path) -> Result<(), String> {
    let root = &p.root;
    let here = root.join("bindings-wasm");
    cargo_build(p, target_dir)?;
    let wasm = target_dir.join("wasm32-unknown-unknown/release/snowmint_wasm.wasm");

    for (target, pkg) in [("nodejs", "pkg-node"), ("web", "pkg-web")] {
        let out = here.join(pkg);
        remove_dir(&out)?;
        p.check(
            p.cmd("wasm-bindgen")
                .args(["--target", target, "--out-dir"])
                .arg(&out)
                .args(["--out-name", "snowmint_wasm"])
                .arg(&wasm),
        )?;
        let module = out.join("snowmint_wasm_bg.wasm");
        p.check(
            p.cmd(here.join("node_modules/.bin/wasm-opt"))
                .args(WASM_OPT)
                .args(FEATURES)
                .args(STRIP)
                .arg("-o")
                .arg(&module)
                .arg(&module),
        )?;
    }

    // The JavaScript layer, each package's entry point and declarations
    // (bindings-wasm/assemble.cjs says how).
    p.check(p.cmd("node").arg(here.join("assemble.cjs")))?;

    // Browsers download the web package: its JavaScript is minified (terser,
    // three compression passes; class names and the Parts constructor's name
    // kept, as consoles show them). The Node package stays readable.
    for f in MINIFIED {
        let file = here.join("pkg-web").join(f);
        p.check(
            p.cmd(here.join("node_modules/.bin/terser"))
                .arg(&file)
                .args(["--module", "--compress", "passes=3"])
                .args(["--mangle", "reserved=[Parts]", "--keep-classnames", "-o"])
                .arg(&file),
        )?;
    }

    let version = package_version(p, "snowmint-wasm")?;
    for (pkg, text) in [
        ("pkg-node", node_package_json(&version)),
        ("pkg-web", web_package_json(&version)),
    ] {
        let path = here.join(pkg).join("package.json");
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        // The licences, in both packages.
        for licence in ["LICENSE-MIT", "LICENSE-APACHE"] {
            copy(&root.join(licence), &here.join(pkg).join(licence))?;
        }
    }

    let fresh = here.join("pkg-web");
    let page = here.join("www/pkg");
    if check {
        let found = differences(&fresh, &page);
        if !found.is_empty() {
            for line in &found {
                eprintln!("{line}");
            }
            return Err(
                "bindings-wasm/www/pkg/ is stale: run cargo xtask build-wasm and commit www/pkg/"
                    .into(),
            );
        }
        Ok(())
    } else {
        refresh(&fresh, &page)
    }
}

/// `cargo build` of snowmint-wasm for wasm32-unknown-unknown, as it ships.
fn cargo_build(p: &Part, target_dir: &Path) -> Result<(), String> {
    // Optimised for size (the module is downloaded by every page that uses
    // it), on the stable toolchain as it is. The root Cargo.toml's release
    // profile (lto, one codegen unit) stays; only the optimisation level is
    // overridden, here, for this build (OPT_LEVEL=z to compare).
    let opt_level = var("OPT_LEVEL").unwrap_or_else(|| "s".into());
    // Panic messages name source files; the registry's folder (a path of
    // this machine, 0.2 KB gzipped) is shortened to `crates`.
    let mut cargo_home = var("CARGO_HOME").unwrap_or_else(|| {
        let mut home = std::env::var_os("HOME").unwrap_or_default();
        home.push("/.cargo");
        home
    });
    cargo_home.push("/registry/src");
    // LLVM's inlining threshold is lowered from the 50 of opt-level `s` to
    // 25 (a stable codegen flag): the browser package was 36,957 against
    // 37,418 bytes gzipped with 50 (20 and 30 were larger than 25 too);
    // `layout.decode(bigint)` stayed at 0.6x of sapphire's deconstruct.
    // INLINE=50 to compare.
    let inline = var("INLINE").unwrap_or_else(|| "25".into());
    let mut rustflags = OsString::from("--remap-path-prefix=");
    rustflags.push(&cargo_home);
    rustflags.push("=crates -Cllvm-args=-inline-threshold=");
    rustflags.push(&inline);
    p.check(
        p.cmd("cargo")
            .args(["build", "--quiet", "-p", "snowmint-wasm"])
            .args(["--target", "wasm32-unknown-unknown", "--release"])
            .env("CARGO_TARGET_DIR", target_dir)
            .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", opt_level)
            // Always as it ships, whoever calls: the release check builds
            // the wheels and addons without fat LTO, and the module built
            // here is compared byte for byte with the committed www/pkg/.
            .env_remove("CARGO_PROFILE_RELEASE_LTO")
            .env_remove("CARGO_PROFILE_RELEASE_CODEGEN_UNITS")
            .env("RUSTFLAGS", rustflags)
            // rustc itself, not the test command's clippy wrapper
            // (scripts/lint-rustc), for the same reason.
            .env("RUSTC_WORKSPACE_WRAPPER", ""),
    )
}

/// The environment variable `name`, unless unset or empty (the shell's
/// `${NAME:-default}`).
fn var(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// pkg-node's package.json: CommonJS ("type": "commonjs", said rather than
/// left to Node's detection; no "type": "module" in any package.json above
/// it), with the Node versions snowmint needs.
fn node_package_json(version: &str) -> String {
    format!(
        r#"{{
  "name": "snowmint-wasm",
  "version": "{version}",
  "description": "snowmint (Snowflake-style 64-bit IDs) as WebAssembly, for Node (CommonJS)",
  "license": "MIT OR Apache-2.0",
  "type": "commonjs",
  "main": "index.js",
  "types": "index.d.ts",
  "files": {FILES},
  "engines": {{ "node": ">= 18" }}
}}
"#
    )
}

/// pkg-web's package.json: an ES module for browsers.
fn web_package_json(version: &str) -> String {
    format!(
        r#"{{
  "name": "snowmint-wasm-web",
  "version": "{version}",
  "description": "snowmint (Snowflake-style 64-bit IDs) as WebAssembly, for browsers (ES module; call the default export init() first)",
  "license": "MIT OR Apache-2.0",
  "type": "module",
  "main": "index.js",
  "types": "index.d.ts",
  "files": {FILES}
}}
"#
    )
}

/// How the folder `page` differs from the `PAGE_FILES` of the web package
/// `pkg`, one line each as `diff -rq` says it: a file of either missing
/// from the other, a file whose bytes differ, anything else in `page`.
fn differences(pkg: &Path, page: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for f in PAGE_FILES {
        match (std::fs::read(pkg.join(f)), std::fs::read(page.join(f))) {
            (Ok(a), Ok(b)) if a == b => {}
            (Ok(_), Ok(_)) => found.push(format!(
                "Files {} and {} differ",
                pkg.join(f).display(),
                page.join(f).display()
            )),
            (Err(_), Ok(_)) => found.push(format!("Only in {}: {f}", page.display())),
            (Ok(_), Err(_)) => found.push(format!("Only in {}: {f}", pkg.display())),
            (Err(_), Err(_)) => {}
        }
    }
    let mut extra: Vec<String> = std::fs::read_dir(page)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| !PAGE_FILES.contains(&name.as_str()))
                .collect()
        })
        .unwrap_or_default();
    extra.sort();
    found.extend(
        extra
            .iter()
            .map(|name| format!("Only in {}: {name}", page.display())),
    );
    found
}

/// Replaces the folder `page` with a copy of the `PAGE_FILES` of `pkg`.
fn refresh(pkg: &Path, page: &Path) -> Result<(), String> {
    remove_dir(page)?;
    mkdir(page)?;
    std::fs::set_permissions(page, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("{}: {e}", page.display()))?;
    for f in PAGE_FILES {
        copy(&pkg.join(f), &page.join(f))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    /// The folder of a test's files (removed when dropped).
    struct Scratch(PathBuf);

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A web package with every page file, and its copy refreshed.
    fn package(name: &str) -> (Scratch, PathBuf, PathBuf) {
        let dir = std::env::temp_dir().join(format!("xtask-wasm-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (pkg, page) = (dir.join("pkg-web"), dir.join("www/pkg"));
        std::fs::create_dir_all(&pkg).unwrap();
        for f in PAGE_FILES {
            std::fs::write(pkg.join(f), format!("contents of {f}")).unwrap();
        }
        std::fs::write(pkg.join("index.d.ts"), "not for the page").unwrap();
        refresh(&pkg, &page).unwrap();
        (Scratch(dir), pkg, page)
    }

    #[test]
    fn a_fresh_copy_has_no_difference() {
        let (_dir, pkg, page) = package("fresh");
        assert_eq!(differences(&pkg, &page), Vec::<String>::new());
        let mode = std::fs::metadata(&page).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
    }

    #[test]
    fn a_stale_copy_is_named() {
        let (_dir, pkg, page) = package("stale");
        std::fs::write(page.join("snowmint_wasm_bg.wasm"), "an older module").unwrap();
        std::fs::remove_file(page.join("parts.js")).unwrap();
        std::fs::write(page.join("old.js"), "left behind").unwrap();
        std::fs::remove_file(pkg.join("api.js")).unwrap();
        assert_eq!(
            differences(&pkg, &page),
            [
                format!("Only in {}: api.js", page.display()),
                format!("Only in {}: parts.js", pkg.display()),
                format!(
                    "Files {} and {} differ",
                    pkg.join("snowmint_wasm_bg.wasm").display(),
                    page.join("snowmint_wasm_bg.wasm").display()
                ),
                format!("Only in {}: old.js", page.display()),
            ]
        );
    }

    #[test]
    fn package_json_is_json_with_the_version() {
        for text in [node_package_json("1.2.3"), web_package_json("1.2.3")] {
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(v["version"], "1.2.3");
            assert_eq!(v["files"].as_array().map(Vec::len), Some(11));
        }
    }
}

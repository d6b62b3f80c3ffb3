//! `cargo xtask run-part prefetch PART...`: downloads and installs, ahead of
//! time, what the test command's parts PART... would install themselves. The
//! test command starts it under `nice -n 19` beside its first parts (which
//! only compile), so that on a fresh machine the network and the package
//! manager work while the compiler does:
//!
//! 1. the workspace's crates (cargo fetch, for the host and the two targets
//!    the core builds for);
//! 2. the Debian packages the parts install (on a thread of its own: apt
//!    unpacks while the steps below download);
//! 3. on another thread: the npm packages of the lockfiles the parts install
//!    from, into npm's cache only (the parts' own `npm ci` then reads them
//!    from there: nothing here writes into a node_modules a running part
//!    uses); the Python tools the parts install into .venv, installed there
//!    (under the lock the parts take too);
//! 4. the pinned cargo tools (cargo install: compiling, the one step that
//!    costs CPU, which `nice` gives only what the parts' builds leave idle).
//!
//! Nothing here is needed: a step that fails is reported and skipped, and
//! the part installs what it needs as before. apt and cargo install take
//! locks: a part that needs a package or a tool while this installs it waits
//! for it and then finds it installed.

use std::path::Path;
use std::process::Command;

use crate::step::{read, Part};
use crate::tools::{apt, cargo_tool, wasm_bindgen, which, Source};
use crate::venv::{
    venv_pip, GRPC_PY_PACKAGES, MATURIN_VERSION, PROMETHEUS_CLIENT_VERSION, PYTEST_VERSION,
    RUFF_VERSION, SCHEMATHESIS_VERSION, TYPESCRIPT_VERSION,
};

pub fn run(p: &Part, parts: &[String]) -> Result<(), String> {
    let has = |name: &str| parts.iter().any(|x| x == name);
    let mut failed: Vec<String> = Vec::new();
    let mut step = |name: &str, r: Result<(), String>| {
        if let Err(e) = r {
            eprintln!("prefetch: {name} failed (the part that needs it installs it itself): {e}");
            failed.push(name.to_string());
        }
    };

    // Cargo's parallel downloads take seconds; first, since most parts start
    // by building. (Not the fuzz crate's own workspace: its lockfile is
    // rewritten by cargo fuzz build, and its crates are nearly all the
    // workspace's.)
    p.say("prefetch: cargo fetch (host, wasm32-unknown-unknown, thumbv7em-none-eabihf)");
    let fetch = crate::tools::host_triple(p).and_then(|host| {
        p.check(p.cmd("cargo").args([
            "fetch",
            "--quiet",
            "--locked",
            "--target",
            &host,
            "--target",
            "wasm32-unknown-unknown",
            "--target",
            "thumbv7em-none-eabihf",
        ]))
    });
    step("cargo fetch", fetch);

    let debs = debian_packages(&has);
    let npm_locks: Vec<&str> = [
        (has("lint"), "tools/lint/package-lock.json"),
        (
            has("node") || has("wasm"),
            "bindings-wasm/package-lock.json",
        ),
        (has("node"), "bindings-node/package-lock.json"),
    ]
    .into_iter()
    .filter_map(|(on, lock)| on.then_some(lock))
    .collect();
    let mut wheels: Vec<String> = Vec::new();
    if has("lint") {
        wheels.push(format!("ruff=={RUFF_VERSION}"));
    }
    if has("python") {
        wheels.push(format!("maturin=={MATURIN_VERSION}"));
        wheels.push(format!("pytest=={PYTEST_VERSION}"));
    }
    if has("server") {
        wheels.extend(GRPC_PY_PACKAGES.iter().map(|s| s.to_string()));
        wheels.push(format!("schemathesis=={SCHEMATHESIS_VERSION}"));
        wheels.push(format!("prometheus-client=={PROMETHEUS_CLIENT_VERSION}"));
    }

    std::thread::scope(|s| {
        let apt_job = (!debs.is_empty()).then(|| {
            p.say(&format!(
                "prefetch: Debian packages (in the background): {}",
                debs.join(" ")
            ));
            // apt-get runs in a process group of its own (tools::apt): a
            // stopped test run does not interrupt dpkg midway.
            s.spawn(|| apt(p, &debs))
        });
        let caches = s.spawn(|| caches(p, &npm_locks, &wheels, has("node")));

        // The pinned cargo tools, in the order the parts need them.
        if has("node") || has("wasm") {
            step("wasm-bindgen", wasm_bindgen(p).map(drop));
        }
        if has("c") {
            step(
                "cbindgen",
                cargo_tool(
                    p,
                    "cbindgen",
                    "0.29.4",
                    "cbindgen",
                    Source::Registry,
                    &["--locked"],
                )
                .map(drop),
            );
        }
        if has("fuzz") {
            step(
                "cargo-fuzz",
                cargo_tool(
                    p,
                    "cargo-fuzz",
                    "0.13.2",
                    "cargo-fuzz",
                    Source::Registry,
                    &["--locked"],
                )
                .map(drop),
            );
        }
        let joined = |r: std::thread::Result<Result<(), String>>| {
            r.unwrap_or_else(|_| Err("panicked".to_string()))
        };
        step("npm, pip", joined(caches.join()));
        if let Some(job) = apt_job {
            step("apt-get install", joined(job.join()));
        }
    });
    if failed.is_empty() {
        p.say("prefetch: done");
        Ok(())
    } else {
        Err(format!("{} failed", failed.join(", ")))
    }
}

/// The Debian packages each part installs, on the same conditions as the
/// part.
fn debian_packages(has: &dyn Fn(&str) -> bool) -> Vec<&'static str> {
    let mut debs = Vec::new();
    if has("c") {
        debs.extend(["cmake", "libcjson-dev", "pkg-config", "gcc", "g++", "make"]);
    }
    if has("server") {
        debs.extend([
            "libfaketime",
            "thrift-compiler",
            "python3-thrift",
            "libthrift-java",
            "openjdk-17-jdk-headless",
        ]);
    }
    if has("stores") {
        // The stores part's dedicated servers (restart tests, the clock
        // step) are always throwaway ones: PostgreSQL, MariaDB, Redis under
        // a shifted clock.
        debs.extend(["postgresql", "mariadb-server", "libfaketime"]);
        if which("redis-server").is_none() {
            debs.push("redis-server");
        }
    }
    if has("stores") || has("server") || has("interop") {
        // etcd's and ZooKeeper's throwaway members need their binaries even
        // when a server answers.
        if which("curl").is_none() {
            debs.push("curl");
        }
        if which("etcd").is_none() {
            debs.push("etcd-server");
        }
        if !Path::new("/usr/share/java/zookeeper.jar").exists() {
            debs.push("zookeeper");
        }
    }
    if has("wasm") && !Path::new("/usr/bin/chromium").exists() {
        debs.push("chromium");
    }
    debs
}

/// The npm downloads into npm's cache, then the pip installs into .venv.
fn caches(p: &Part, locks: &[&str], wheels: &[String], typescript: bool) -> Result<(), String> {
    let mut failed = Vec::new();
    if !locks.is_empty() {
        p.say(&format!(
            "prefetch: npm packages into npm's cache ({})",
            locks.join(" ")
        ));
        let mut specs = Vec::new();
        for lock in locks {
            specs.extend(lock_specs(&read(&p.root.join(lock))?)?);
        }
        if typescript {
            specs.push(format!("typescript@{TYPESCRIPT_VERSION}"));
        }
        if !specs.is_empty() {
            let added = p.check(
                Command::new("npm")
                    .args(["cache", "add", "--loglevel=error"])
                    .args(&specs),
            );
            if let Err(e) = added {
                failed.push(format!("npm cache add: {e}"));
            }
        }
    }
    if !wheels.is_empty() {
        p.say(&format!(
            "prefetch: Python tools into .venv ({})",
            wheels.join(" ")
        ));
        if let Err(e) = venv_pip(p, &p.root.join(".venv"), wheels) {
            failed.push(format!("pip install: {e}"));
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join("; "))
    }
}

/// Every package a lockfile installs, as NAME@VERSION from the configured
/// registry (as npm ci does; the lockfiles are written without `resolved`
/// URLs: .npmrc's omit-lockfile-registry-resolved). Not the workspace's own
/// folders (`link`) or local files.
fn lock_specs(text: &str) -> Result<Vec<String>, String> {
    let lock: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("a package-lock.json: {e}"))?;
    let mut specs = Vec::new();
    if let Some(packages) = lock["packages"].as_object() {
        for (key, pkg) in packages {
            let local = pkg["link"].as_bool().unwrap_or(false)
                || pkg["resolved"]
                    .as_str()
                    .is_some_and(|r| r.starts_with("file:"));
            if let (false, Some(version), false) = (key.is_empty(), pkg["version"].as_str(), local)
            {
                let name = key.rsplit("node_modules/").next().unwrap_or(key);
                specs.push(format!("{name}@{version}"));
            }
        }
    }
    Ok(specs)
}

#[cfg(test)]
mod tests {
    use super::lock_specs;

    #[test]
    fn lock_specs_skip_the_root_links_and_local_files() {
        let lock = r#"{"packages": {
            "": {"name": "x", "version": "1.0.0"},
            "node_modules/a": {"version": "1.2.3"},
            "node_modules/a/node_modules/@s/b": {"version": "4.5.6"},
            "node_modules/c": {"link": true, "resolved": "../c"},
            "node_modules/d": {"version": "0.1.0", "resolved": "file:../d"}
        }}"#;
        assert_eq!(lock_specs(lock).unwrap(), ["a@1.2.3", "@s/b@4.5.6"]);
    }
}

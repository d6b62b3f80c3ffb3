//! The core part's checks of the repository as a whole: one version
//! everywhere, and one build of each dependency the crates with lease
//! stores share.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value as Json;
use toml::{Table, Value};

use crate::step::{read, Part};

/// One version everywhere: the workspace's (Cargo.toml
/// `[workspace.package]`). Checks every Cargo.toml of the repository
/// (`version.workspace = true`, or the same version; path dependencies on
/// the workspace's crates ask for it), pyproject.toml (dynamic: maturin
/// reads Cargo's), every package.json and package-lock.json that carries a
/// version (the Node package, its per-platform packages under
/// bindings-node/npm/, the WebAssembly packages once built), the C header's
/// `SNOWMINT_VERSION_*` macros, and the dependency line in core/README.md.
/// The error names every file that disagrees.
pub fn versions(p: &Part) -> Result<(), String> {
    let root = &p.root;
    let toml_of = |path: &Path| -> Result<Table, String> {
        read(path)?
            .parse::<Table>()
            .map_err(|e| format!("{}: {e}", path.display()))
    };
    let json_of = |path: &Path| -> Result<Json, String> {
        serde_json::from_str(&read(path)?).map_err(|e| format!("{}: {e}", path.display()))
    };
    let ws = toml_of(&root.join("Cargo.toml"))?;
    let version = ws
        .get("workspace")
        .and_then(|w| w.get("package"))
        .and_then(|p| p.get("version"))
        .and_then(Value::as_str)
        .ok_or("Cargo.toml has no [workspace.package] version")?
        .to_string();
    let mut parts = version.split('.');
    let (major, minor, patch) = (
        parts.next().unwrap_or_default().to_string(),
        parts.next().unwrap_or_default().to_string(),
        parts.next().unwrap_or_default().to_string(),
    );
    let mut bad = Vec::new();
    let deps = ws
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(Value::as_table);
    for (name, dep) in deps.into_iter().flatten() {
        if dep.get("path").is_some() {
            let found = dep.get("version").and_then(Value::as_str);
            check(
                &mut bad,
                "Cargo.toml",
                found,
                &version,
                &format!("[workspace.dependencies] {name}"),
            );
        }
    }

    // Every tracked (or new, not ignored) file, so generated folders are skipped.
    let listed =
        p.output(
            p.cmd("git")
                .args(["ls-files", "--cached", "--others", "--exclude-standard"]),
        )?;
    let files: BTreeSet<&str> = listed.lines().collect();
    let mut seen = BTreeSet::new();
    for &f in &files {
        let path = root.join(f);
        if !path.is_file() {
            continue;
        }
        let base = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if base == "Cargo.toml" && f != "Cargo.toml" {
            let t = toml_of(&path)?;
            if t.contains_key("workspace") {
                continue; // a workspace of its own (fuzz/: cargo-fuzz's, never published)
            }
            let v = t.get("package").and_then(|p| p.get("version"));
            let inherited =
                v.and_then(|v| v.get("workspace")).and_then(Value::as_bool) == Some(true);
            if !inherited {
                check(&mut bad, f, v.and_then(Value::as_str), &version, "version");
            }
            seen.insert(f.to_string());
        } else if base == "pyproject.toml" {
            let t = toml_of(&path)?;
            let project = t.get("project");
            if let Some(v) = project.and_then(|p| p.get("version")) {
                check(&mut bad, f, v.as_str(), &version, "version");
            } else {
                let dynamic = project
                    .and_then(|p| p.get("dynamic"))
                    .and_then(Value::as_array)
                    .is_some_and(|d| d.iter().any(|x| x.as_str() == Some("version")));
                if !dynamic {
                    bad.push(format!("{f}: no version and not dynamic"));
                }
            }
            seen.insert(f.to_string());
        } else if base == "package.json" || base == "package-lock.json" {
            let data = json_of(&path)?;
            let has_version = data.get("version").is_some();
            if base == "package.json" && data["private"].as_bool() == Some(true) && !has_version {
                continue; // a folder of build or benchmark tools, never published
            }
            if has_version {
                check(&mut bad, f, data["version"].as_str(), &version, "version");
            } else if base == "package.json" {
                bad.push(format!("{f}: a published package.json without a version"));
            }
            if base == "package-lock.json" {
                if let Some(own) = data["packages"][""].get("version") {
                    check(
                        &mut bad,
                        f,
                        own.as_str(),
                        &version,
                        "packages[\"\"].version",
                    );
                }
            }
            // The per-platform packages the main one depends on carry the same version.
            if let Some(optional) = data["optionalDependencies"].as_object() {
                for (dep, want) in optional {
                    if dep.starts_with("snowmint-") || dep.starts_with("@snowmint/") {
                        let what = format!("optionalDependencies {dep}");
                        check(&mut bad, f, want.as_str(), &version, &what);
                    }
                }
            }
            seen.insert(f.to_string());
        }
    }

    // The WebAssembly packages are generated (cargo xtask build-wasm) and ignored.
    let wasm = root.join("bindings-wasm");
    let mut pkgs: Vec<_> = std::fs::read_dir(&wasm)
        .map_err(|e| format!("{}: {e}", wasm.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|d| {
            d.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("pkg-"))
        })
        .map(|d| d.join("package.json"))
        .filter(|f| f.is_file())
        .collect();
    pkgs.sort();
    for pkg in pkgs {
        let rel = p.rel(&pkg).into_owned();
        let data = json_of(&pkg)?;
        check(
            &mut bad,
            &rel,
            data["version"].as_str(),
            &version,
            "version",
        );
        seen.insert(rel);
    }

    let header_file = "bindings-c/include/snowmint.h";
    let header = read(&root.join(header_file))?;
    let quoted = format!("\"{version}\"");
    for (macro_name, want) in [
        ("STRING", quoted.as_str()),
        ("MAJOR", major.as_str()),
        ("MINOR", minor.as_str()),
        ("PATCH", patch.as_str()),
    ] {
        let prefix = format!("#define SNOWMINT_VERSION_{macro_name} ");
        let found = header.lines().find_map(|l| {
            let value = l.strip_prefix(&prefix)?;
            (!value.is_empty() && !value.contains(char::is_whitespace)).then_some(value)
        });
        check(
            &mut bad,
            header_file,
            found,
            want,
            &format!("SNOWMINT_VERSION_{macro_name}"),
        );
    }
    seen.insert(header_file.to_string());

    let readme = read(&root.join("core/README.md"))?;
    let line = readme.lines().find_map(|l| {
        let v = l.strip_prefix("snowmint = \"")?.strip_suffix('"')?;
        (!v.is_empty() && !v.contains('"')).then_some(v)
    });
    check(
        &mut bad,
        "core/README.md",
        line,
        &format!("{major}.{minor}"),
        "the dependency line",
    );

    if !bad.is_empty() {
        return Err(format!("versions disagree:\n  {}", bad.join("\n  ")));
    }
    println!("version {version} in {} files agree", seen.len() + 1);
    Ok(())
}

/// Notes in `bad` a `found` version that is not `want`.
fn check(bad: &mut Vec<String>, file: &str, found: Option<&str>, want: &str, what: &str) {
    if found != Some(want) {
        let found = found.map_or_else(|| "missing".to_string(), |f| format!("{f:?}"));
        bad.push(format!(
            "{file}: {what} is {found}, the workspace's is {want:?}"
        ));
    }
}

/// A package and the arguments `cargo tree` resolves it with.
pub type World = (&'static str, &'static [&'static str]);

/// Each package as its part of the test command builds it (its default
/// features; the lease crate with every store, as the stores part).
const WORLDS: [World; 6] = [
    ("snowmint-cli", &[]),
    ("snowmint-server", &[]),
    ("snowmint-python", &[]),
    ("snowmint-node", &[]),
    ("snowmint-c", &[]),
    ("snowmint-lease", &["--features", "stores"]),
];

/// One build of each shared dependency: the crates that link the lease
/// stores (the CLI, the ID service, the Python, Node and C bindings, the
/// store tests) ask for the same features of every package they share.
///
/// Cargo compiles a package once per feature set, and every package above it
/// once per build of it: one crate asking tokio for `signal` made a second
/// build of tokio, tokio-postgres, redis, mysql, zookeeper-client and the
/// lease crate for the ID service's tests alone. tools/workspace-hack asks
/// for the union; this check (`cargo tree`, resolved as `cargo test`
/// resolves each package) fails, naming the package and the features each
/// crate gets, when the union is no longer complete: add what it names to
/// tools/workspace-hack/Cargo.toml.
pub fn unified(p: &Part) -> Result<(), String> {
    let seen = unified_in(
        p,
        &p.root,
        &WORLDS,
        "tools/workspace-hack/Cargo.toml (its comment says why)",
    )?;
    let names: Vec<&str> = WORLDS.iter().map(|(w, _)| *w).collect();
    println!(
        "one feature set for each of the {seen} packages that {} link",
        names.join(", ")
    );
    Ok(())
}

/// [`unified`] for the `worlds` of the workspace in `dir`: an error naming
/// each package that two worlds would build with different features (and
/// `fix`, where to add them); else how many packages they share.
pub fn unified_in(p: &Part, dir: &Path, worlds: &[World], fix: &str) -> Result<usize, String> {
    // package -> world -> the feature sets `cargo tree` shows for it there
    // (one: build dependencies and proc macros, whose features resolve
    // apart, are left out by `-e normal,no-proc-macro`).
    let mut seen: BTreeMap<String, BTreeMap<&str, BTreeSet<String>>> = BTreeMap::new();
    for &(package, args) in worlds {
        let out = p.output(
            p.cmd("cargo")
                .current_dir(dir)
                .args(["tree", "--quiet", "--locked", "-p", package])
                .args(args)
                .args(["-e", "normal,no-proc-macro", "--prefix", "none"])
                .args(["-f", "{p}|{f}"]),
        )?;
        for line in out.lines().filter(|l| !l.trim().is_empty()) {
            let line = line.strip_suffix(" (*)").unwrap_or(line);
            let Some((name_version, features)) = line.split_once('|') else {
                return Err(format!("cargo tree printed {line:?}"));
            };
            // "name vX.Y.Z" or, for a path package, "name vX.Y.Z (/path)".
            let key: Vec<&str> = name_version.split_whitespace().take(2).collect();
            seen.entry(key.join(" "))
                .or_default()
                .entry(package)
                .or_default()
                .insert(features.to_string());
        }
    }
    let mut bad = Vec::new();
    for (key, worlds) in &seen {
        // The package's own crate is built once per world anyway.
        let name = key.split(' ').next().unwrap_or_default();
        let distinct: BTreeSet<&BTreeSet<String>> = worlds.values().collect();
        if worlds.iter().any(|(w, _)| *w == name) || distinct.len() <= 1 {
            continue;
        }
        bad.push(key.clone());
        for (package, features) in worlds {
            let shown: Vec<&str> = features
                .iter()
                .map(|f| if f.is_empty() { "(none)" } else { f.as_str() })
                .collect();
            bad.push(format!("    {package}: {}", shown.join(" | ")));
        }
    }
    if !bad.is_empty() {
        return Err(format!(
            "packages built twice, with different features:\n{}\nadd the missing features to {fix}",
            bad.join("\n")
        ));
    }
    Ok(seen.len())
}

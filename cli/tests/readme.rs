//! Every command of docs/CLI.md's "Every command, with its output" section
//! runs, and prints what the page shows under it.
//!
//! In the section's `sh` block: a line starting with `snowmint ` (or
//! `echo WORDS | snowmint ...`) is a command; the comment lines right under it
//! are its output (`snowmint: error:` lines on stderr, with exit status 1,
//! the others on stdout, all of them in order; `...` matches any text); a
//! comment after a blank line is prose. `/tmp/ids` becomes a fresh directory,
//! and `/tmp/orders.key` a file holding the mask key the page names.

use std::io::Write;
use std::process::{Command, Output, Stdio};

mod bounded;

/// Splits a command line into words: blanks separate, single quotes group.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word: Option<String> = None;
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                word.get_or_insert_with(String::new);
            }
            c if c.is_whitespace() && !quoted => out.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    assert!(!quoted, "unbalanced quote: {line}");
    out.extend(word);
    out
}

/// Runs `snowmint ARGS`, or `echo WORDS | snowmint ARGS`.
fn run(line: &str) -> Output {
    let (input, cmd) = match line.split_once(" | ") {
        Some((echo, cmd)) => {
            let text = echo.strip_prefix("echo ").expect("only `echo ... |` pipes");
            (Some(format!("{text}\n")), cmd)
        }
        None => (None, line),
    };
    let args = words(cmd);
    assert_eq!(args[0], "snowmint", "{line}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_snowmint"))
        .args(&args[1..])
        .env_remove("NO_COLOR")
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run snowmint");
    if let Some(text) = input {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    bounded::finish(child)
}

/// `text` matches `pattern`, where `...` in the pattern matches any text.
fn matches(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split("...");
    let first = parts.next().unwrap();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, part) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// The key docs/CLI.md's mask example says its output is for.
const README_MASK_KEY: &str = "000102030405060708090a0b0c0d0e0f";

fn check(line: &str, expected: &[String], dir: &str) {
    let line = line
        .replace("/tmp/orders.key", &format!("{dir}.key"))
        .replace("/tmp/ids", dir);
    let out = run(&line);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let (want_err, want_out): (Vec<&String>, Vec<&String>) = expected
        .iter()
        .partition(|l| l.starts_with("snowmint: error:"));
    let code = if want_err.is_empty() { 0 } else { 1 };
    assert_eq!(out.status.code(), Some(code), "{line}\n{stderr}");
    if expected.is_empty() {
        assert!(!stdout.is_empty(), "{line}: no output");
        return;
    }
    for (want, got) in [(want_out, &stdout), (want_err, &stderr)] {
        let got: Vec<&str> = got.lines().collect();
        assert_eq!(got.len(), want.len(), "{line}: {got:#?} for {want:#?}");
        for (w, g) in want.iter().zip(&got) {
            assert!(matches(w, g), "{line}:\n  got  {g}\n  want {w}");
        }
    }
}

#[test]
fn the_readme_commands_print_what_the_readme_shows() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/CLI.md"))
        .expect("docs/CLI.md");
    let section = readme
        .split("\n## Every command, with its output\n")
        .nth(1)
        .expect("the section")
        .split("\n## ")
        .next()
        .unwrap();
    let block = section
        .split("```sh\n")
        .nth(1)
        .expect("an sh block")
        .split("\n```")
        .next()
        .unwrap();
    let dir = std::env::temp_dir().join(format!("snowmint-readme-{}", std::process::id()));
    let dir = dir.to_str().unwrap().to_string();
    assert!(
        section.contains(&format!("for the key {README_MASK_KEY}")),
        "the mask example names another key"
    );
    std::fs::write(format!("{dir}.key"), format!("{README_MASK_KEY}\n")).unwrap();
    // (command, its output lines)
    let mut commands: Vec<(String, Vec<String>)> = Vec::new();
    let mut after_command = false;
    for line in block.lines() {
        if line.starts_with("snowmint ") || line.starts_with("echo ") {
            commands.push((line.to_string(), Vec::new()));
            after_command = true;
        } else if let Some(text) = line.strip_prefix("# ").filter(|_| after_command) {
            commands.last_mut().unwrap().1.push(text.to_string());
        } else {
            assert!(
                line.is_empty() || (line.starts_with("# ") && !after_command),
                "neither a command nor a comment: {line}"
            );
            after_command = false;
        }
    }
    assert!(commands.len() >= 15, "{} commands", commands.len());
    for (line, expected) in &commands {
        check(line, expected, &dir);
    }
    // The lease commands above ran on a directory of their own.
    assert!(std::path::Path::new(&dir).is_dir());
    std::fs::remove_dir_all(&dir).ok();
    std::fs::remove_file(format!("{dir}.key")).ok();
}

#[test]
fn the_pattern_matcher_is_strict() {
    assert!(matches("a ... b", "a x y b"));
    assert!(!matches("a ... b", "a x y c"));
    assert!(!matches("abc", "abcd"));
    assert!(matches("x...", "xyz"));
    assert_eq!(words("a 'b c'  d"), ["a", "b c", "d"]);
}

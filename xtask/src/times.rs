//! The test command's times per part: a full run records them in
//! `target/xtask/times.tsv`; `cargo xtask times` prints them beside each
//! part's budget and `--write` puts that table into CONTRIBUTING.md between
//! its `<!-- times:start -->` and `<!-- times:end -->` markers, so the figures
//! there come from a run, not from a diary.

use std::fs;
use std::io;
use std::path::Path;
use std::process::Command;

use crate::parts::TEST_PARTS;

/// One part's time in a run.
#[derive(Debug, Clone)]
pub struct PartTime {
    pub name: &'static str,
    pub wall_s: u64,
    pub cpu_s: u64,
}

const FILE: &str = "target/xtask/times.tsv";
const START: &str = "<!-- times:start -->";
const END: &str = "<!-- times:end -->";

/// Writes a full run's times: a header line (`commit`, total wall and CPU
/// seconds), then a line per part.
pub fn record(root: &Path, took: &[PartTime], wall_s: u64, cpu_s: u64) -> io::Result<()> {
    let commit = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let mut text = format!("total\t{wall_s}\t{cpu_s}\t{commit}\n");
    for t in took {
        text.push_str(&format!("{}\t{}\t{}\n", t.name, t.wall_s, t.cpu_s));
    }
    fs::write(root.join(FILE), text)
}

/// The markdown table of the recorded run.
fn table(root: &Path) -> Result<String, String> {
    let text = fs::read_to_string(root.join(FILE)).map_err(|e| {
        format!("no recorded run ({FILE}: {e}); a full `cargo xtask test` records one")
    })?;
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap_or_default().split('\t').collect();
    let [_, wall, cpu, commit] = head[..] else {
        return Err(format!("{FILE}: a malformed first line"));
    };
    let mut out = String::from(
        "| part | budget (s) | last run (s) | CPU (s) |\n| --- | ---: | ---: | ---: |\n",
    );
    for line in lines {
        let f: Vec<&str> = line.split('\t').collect();
        let [name, wall_s, cpu_s] = f[..] else {
            return Err(format!("{FILE}: a malformed line: {line}"));
        };
        let budget = TEST_PARTS
            .iter()
            .find(|p| p.name == name)
            .map_or("-".to_string(), |p| p.budget_s.to_string());
        out.push_str(&format!("| `{name}` | {budget} | {wall_s} | {cpu_s} |\n"));
    }
    let budget: u64 = TEST_PARTS.iter().map(|p| p.budget_s).sum();
    out.push_str(&format!(
        "| all (commit `{commit}`) | {budget} | {wall} | {cpu} |\n"
    ));
    Ok(out)
}

/// `cargo xtask times [--write]`.
pub fn command(root: &Path, args: &[String]) -> u8 {
    let write = match args {
        [] => false,
        [w] if w == "--write" => true,
        _ => {
            eprintln!("usage: cargo xtask times [--write]");
            return 2;
        }
    };
    let table = match table(root) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("xtask times: {e}");
            return 1;
        }
    };
    print!("{table}");
    if !write {
        return 0;
    }
    let path = root.join("CONTRIBUTING.md");
    let doc = match fs::read_to_string(&path) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("xtask times: {}: {e}", path.display());
            return 1;
        }
    };
    let (Some(a), Some(b)) = (doc.find(START), doc.find(END)) else {
        eprintln!("xtask times: CONTRIBUTING.md has no {START} ... {END} markers");
        return 1;
    };
    if b < a {
        eprintln!("xtask times: CONTRIBUTING.md's markers are out of order");
        return 1;
    }
    let new = format!("{}{START}\n{table}{}", &doc[..a], &doc[b..]);
    if let Err(e) = fs::write(&path, new) {
        eprintln!("xtask times: {}: {e}", path.display());
        return 1;
    }
    println!("CONTRIBUTING.md: the times table rewritten");
    0
}

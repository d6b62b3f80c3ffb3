//! The prose must not drift from the code: dates and codes in
//! docs/SEMANTICS.md, and the list in the unknown-preset message, are checked
//! against the core. (Here, not in core/tests: the packaged crate has no docs/
//! or workspace README, and its tests must pass from the .crate alone.)

use snowmint::{Error, Iso8601, Layout};

const SEMANTICS: &str = include_str!("../../../docs/SEMANTICS.md");

fn date(ms: u64) -> String {
    Iso8601(ms).to_string()[..10].to_string()
}

#[test]
fn preset_table_dates_match_the_core() {
    for name in Layout::PRESETS {
        let l = Layout::preset(name).unwrap();
        let row = SEMANTICS
            .lines()
            .find(|r| r.starts_with(&format!("| `{name}` |")))
            .unwrap_or_else(|| panic!("no row for {name}"));
        assert!(
            row.contains(&date(l.time_end_ms())),
            "{name}: time end {} not in {row}",
            date(l.time_end_ms())
        );
        if l.i64_end_ms() != l.time_end_ms() {
            assert!(
                row.contains(&date(l.i64_end_ms())),
                "{name}: i64 end {} not in {row}",
                date(l.i64_end_ms())
            );
        }
        assert!(row.contains(&l.epoch_ms().to_string()), "{name}: epoch");
    }
}

#[test]
fn every_code_is_documented() {
    for code in Error::ALL_CODES {
        assert!(
            SEMANTICS.contains(&format!("| `{code}` |")),
            "{code} missing from the table"
        );
    }
}

#[test]
fn iso8601_matches_known_dates() {
    for (ms, s) in [
        (0, "1970-01-01T00:00:00.000Z"),
        (951782400000, "2000-02-29T00:00:00.000Z"),
        (4107542400000, "2100-03-01T00:00:00.000Z"),
        (1732109056000, "2024-11-20T13:24:16.000Z"),
        (3487858230209, "2080-07-10T17:30:30.209Z"),
        (6907087738880, "2188-11-16T03:28:58.880Z"),
        (1462015105796, "2016-04-30T11:18:25.796Z"),
    ] {
        assert_eq!(Iso8601(ms).to_string(), s);
    }
}

#[test]
fn the_unknown_preset_message_lists_every_preset() {
    // The message spells the list out (building it would cost the
    // WebAssembly module code); this keeps it equal to `Layout::PRESETS`.
    let err = Layout::preset("nope").unwrap_err();
    let want = format!("unknown preset (known: {})", Layout::PRESETS.join(", "));
    assert!(err.to_string().starts_with(&want), "{err}");
}

/// The workspace README's Rust example is compiled and run as a doctest of
/// the crate README (core/README.md, included by core/src/lib.rs), which the
/// packaged crate carries: it must stay one of that README's examples.
#[test]
fn the_workspace_readme_rust_example_is_doctested_by_the_crate_readme() {
    const ROOT: &str = include_str!("../../../README.md");
    const CRATE: &str = include_str!("../../../core/README.md");
    let blocks: Vec<&str> = ROOT
        .split("```rust\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .collect();
    assert!(!blocks.is_empty(), "no ```rust block in README.md");
    for b in blocks {
        assert!(
            CRATE.contains(&format!("```rust\n{b}```")),
            "this README.md example is not in core/README.md:\n{b}"
        );
    }
}

/// Where a user-facing page lists the network lease stores, it lists all of
/// them: a paragraph that names four of the five names every one (a store
/// added to the code and left out of a list was found twice by reading).
/// docs/STORES.md compares stores and docs/HARNESS.md reports runs of some:
/// their paragraphs may name a few, and are not checked.
#[test]
fn every_list_of_stores_names_every_store() {
    const PAGES: [(&str, &str); 11] = [
        ("README.md", include_str!("../../../README.md")),
        ("ARCHITECTURE.md", include_str!("../../../ARCHITECTURE.md")),
        ("CONTRIBUTING.md", include_str!("../../../CONTRIBUTING.md")),
        (
            "docs/SEMANTICS.md",
            include_str!("../../../docs/SEMANTICS.md"),
        ),
        ("docs/LEASES.md", include_str!("../../../docs/LEASES.md")),
        ("docs/SERVER.md", include_str!("../../../docs/SERVER.md")),
        (
            "server/README.md",
            include_str!("../../../server/README.md"),
        ),
        ("cli/README.md", include_str!("../../../cli/README.md")),
        (
            "bindings-c/README.md",
            include_str!("../../../bindings-c/README.md"),
        ),
        (
            "bindings-python/README.md",
            include_str!("../../../bindings-python/README.md"),
        ),
        (
            "bindings-node/README.md",
            include_str!("../../../bindings-node/README.md"),
        ),
    ];
    // Each store by the names a page may call it.
    const STORES: [(&str, &[&str]); 5] = [
        ("PostgreSQL", &["PostgreSQL", "postgres"]),
        ("MySQL/MariaDB", &["MySQL", "MariaDB", "mysql"]),
        ("Redis", &["Redis", "redis"]),
        ("etcd", &["etcd"]),
        ("ZooKeeper", &["ZooKeeper", "zookeeper"]),
    ];
    let mut missing = Vec::new();
    for (page, text) in PAGES {
        for paragraph in text.split("\n\n") {
            let absent: Vec<&str> = STORES
                .iter()
                .filter(|(_, names)| !names.iter().any(|n| paragraph.contains(n)))
                .map(|(store, _)| *store)
                .collect();
            if absent.len() == 1 {
                let start: String = paragraph.chars().take(80).collect();
                missing.push(format!("{page}: no {} in: {start}...", absent[0]));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "store lists missing a store:\n{}",
        missing.join("\n")
    );
}

/// The docs stay sized for readers (CONTRIBUTING, "Docs"): the README a
/// user's path (at most 300 lines), the changelog one line per change (at
/// most 150), the harness page its model and a results table, not run logs
/// (at most 20,000 bytes).
#[test]
fn docs_stay_within_their_sizes() {
    let pages: [(&str, &str, usize, bool); 3] = [
        ("README.md", include_str!("../../../README.md"), 300, true),
        (
            "CHANGELOG.md",
            include_str!("../../../CHANGELOG.md"),
            150,
            true,
        ),
        (
            "docs/HARNESS.md",
            include_str!("../../../docs/HARNESS.md"),
            20_000,
            false,
        ),
    ];
    for (name, text, limit, in_lines) in pages {
        let (size, unit) = if in_lines {
            (text.lines().count(), "lines")
        } else {
            (text.len(), "bytes")
        };
        assert!(
            size <= limit,
            "{name} has {size} {unit}, over its {limit}: shorten it"
        );
    }
}

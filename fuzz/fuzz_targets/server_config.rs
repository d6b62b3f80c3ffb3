//! The ID service's configuration: flags (clap, as the binary parses them)
//! and a TOML file's text through `config::from_toml_str`, which is
//! `config::load` without reading the file. The input's first line is the
//! flags (split on spaces), the rest the TOML text.
//!
//! No file is read but one token file written here: flags and keys that
//! name other files (`--config`, `--token-file`, `token_file`, `--layout
//! @FILE`) are dropped or the input skipped; the word `TOKENS` stands for the
//! token file (`TOKENS` as a flag, `token_file = "TOKENS"` in the text).
//!
//! Properties: nothing panics; an error names a key, says what is wrong on
//! one line and never quotes the password of a lease URL in the text; an
//! accepted configuration has `max_count` in 1..=2^32-1, a loopback address
//! unless tokens or `insecure` were given, generators with unique names
//! (those of the file valid URL names) and well-formed layouts; written back
//! as a TOML file it loads to the same configuration.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use clap::Parser;
use libfuzzer_sys::fuzz_target;
use snowmint::Layout;
use snowmint_server::config::{self, Config, Flags};

#[path = "common.rs"]
mod common;

/// The token file, written once.
fn tokens_path() -> &'static PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("snowmint-fuzz-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("tokens");
        std::fs::write(&p, "# tokens\nfuzz-token-1\n\n  fuzz-token-2  \n").unwrap();
        // Only its owner may read a token file.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        p
    })
}

/// The tokens of `c`, as text.
fn tokens(c: &Config) -> Vec<Vec<u8>> {
    c.tokens.iter().map(|t| t.token.clone()).collect()
}

fn flags(line: &str) -> Option<Flags> {
    let mut args = vec!["snowmint-server".to_string()];
    let mut skip_value = false;
    for a in line.split(' ').filter(|a| !a.is_empty()) {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        if a == "TOKENS" {
            args.push(format!("--token-file={}", tokens_path().display()));
        } else if a == "--config" || a == "--token-file" {
            skip_value = true;
        } else if a.starts_with("--config=") || a.starts_with("--token-file=") || a.contains('@') {
            continue;
        } else {
            args.push(a.to_string());
        }
    }
    Flags::try_parse_from(args).ok()
}

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The passwords of URLs (`scheme://user:PASSWORD@host`) in `text`.
fn passwords(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("://") {
        let rest = &text[i + 3..];
        let end = rest.find(['"', '\'', '\n', '/']).unwrap_or(rest.len());
        let auth = &rest[..end];
        if let Some(at) = auth.rfind('@') {
            if let Some((_, pw)) = auth[..at].split_once(':') {
                if pw.len() >= 6 && text.matches(pw).count() == 1 {
                    out.push(pw);
                }
            }
        }
    }
    out
}

/// `c` as a TOML file (every generator a table), or None when it has no
/// file form (a flag generator's name or nodes a table cannot hold).
fn to_toml(c: &Config, insecure: bool) -> Option<String> {
    let mut t = toml::Table::new();
    t.insert("listen".into(), c.listen.to_string().into());
    t.insert("max_count".into(), toml::Value::Integer(c.max_count as i64));
    if !c.tokens.is_empty() {
        t.insert(
            "token_file".into(),
            tokens_path().display().to_string().into(),
        );
    }
    if insecure {
        t.insert("insecure".into(), true.into());
    }
    t.insert(
        "log_format".into(),
        if c.json_logs { "json" } else { "text" }.into(),
    );
    let mut gens = toml::Table::new();
    for g in &c.generators {
        if !valid_name(&g.name) {
            return None;
        }
        let mut gt = toml::Table::new();
        gt.insert("layout".into(), g.layout.to_json().into());
        let mut nodes = toml::Table::new();
        for (n, v) in &g.nodes {
            let v = i64::try_from(*v).ok()?;
            if nodes.insert(n.clone(), v.into()).is_some() {
                return None;
            }
        }
        gt.insert("nodes".into(), nodes.into());
        if let Some(l) = &g.lease {
            gt.insert("lease".into(), l.clone().into());
        }
        gens.insert(g.name.clone(), gt.into());
    }
    t.insert("generators".into(), gens.into());
    Some(toml::to_string(&t).unwrap())
}

/// A generator's name, layout, node values and lease.
type GenView = (String, Layout, Vec<(String, u64)>, Option<String>);

/// The generators, their nodes sorted by name (the file's come sorted).
fn gens(c: &Config) -> Vec<GenView> {
    c.generators
        .iter()
        .map(|g| {
            let mut nodes = g.nodes.clone();
            nodes.sort();
            (g.name.clone(), g.layout, nodes, g.lease.clone())
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (line, body) = text.split_once('\n').unwrap_or((&text, ""));
    let Some(flags) = flags(line) else { return };
    let body = body.replace(
        "\"TOKENS\"",
        &format!("{:?}", tokens_path().display().to_string()),
    );
    let table = body.parse::<toml::Table>().ok();
    if let Some(t) = &table {
        // A token file other than ours would be read.
        if t.get("token_file")
            .is_some_and(|v| v.as_str() != Some(&tokens_path().display().to_string()))
        {
            return;
        }
    }
    let flag_insecure = flags.insecure;
    let flag_name = flags.name.clone();
    let secrets = passwords(&body);
    match config::from_toml_str(flags, &body) {
        Ok(c) => {
            assert!(c.max_count >= 1 && c.max_count <= config::MAX_MAX_COUNT);
            let file_insecure = table
                .as_ref()
                .and_then(|t| t.get("insecure"))
                .and_then(toml::Value::as_bool)
                == Some(true);
            let insecure = flag_insecure || file_insecure;
            assert!(
                c.listen.ip().is_loopback() || !c.tokens.is_empty() || insecure,
                "{} without tokens or insecure",
                c.listen
            );
            if !c.tokens.is_empty() {
                assert_eq!(
                    tokens(&c),
                    [b"fuzz-token-1".to_vec(), b"fuzz-token-2".to_vec()]
                );
            }
            assert!(!c.generators.is_empty());
            for (i, g) in c.generators.iter().enumerate() {
                assert!(
                    c.generators[..i].iter().all(|h| h.name != g.name),
                    "two generators named {:?}",
                    g.name
                );
                if g.name != flag_name || i > 0 {
                    assert!(valid_name(&g.name), "file generator {:?}", g.name);
                }
                common::check_layout(&g.layout);
            }
            // Written back as a file, it loads to the same configuration.
            if let Some(again) = to_toml(&c, insecure) {
                let back = config::from_toml_str(Flags::parse_from(["snowmint-server"]), &again)
                    .unwrap_or_else(|e| panic!("{again}\nwritten back is refused: {e}"));
                assert_eq!(back.listen, c.listen, "{again}");
                assert_eq!(back.max_count, c.max_count);
                assert_eq!(tokens(&back), tokens(&c));
                assert_eq!(back.json_logs, c.json_logs);
                let (mut a, b) = (gens(&c), gens(&back));
                a.sort_by(|x, y| x.0.cmp(&y.0));
                assert_eq!(a, b, "{again}");
            }
        }
        Err(e) => {
            assert!(!e.key.is_empty() && !e.message.is_empty(), "{e:?}");
            let shown = e.to_string();
            assert_eq!(
                shown,
                format!("configuration error in {}: {}", e.key, e.message)
            );
            assert!(
                !shown.contains('\n'),
                "a message of several lines: {shown:?}"
            );
            for pw in &secrets {
                assert!(!shown.contains(pw), "the password {pw:?} is in {shown:?}");
            }
        }
    }
});

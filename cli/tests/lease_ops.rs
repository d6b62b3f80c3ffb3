//! `snowmint lease init|list|release` on the file store.

mod lease_cli;
use lease_cli::*;

#[test]
fn lease_commands_on_the_file_store() {
    let dir = std::env::temp_dir().join(format!("snowmint-cli-ops-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let url = format!(
        "file:{}?namespace={}&renew_ms=200&window_ms=1500",
        dir.display(),
        unique_ns("file")
    );
    scenario(&url, false);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn lease_command_errors() {
    fails(
        &["lease", "list", "--store", "zookeeper://h:2181"],
        "invalid_option",
    );
    fails(
        &["lease", "init", "--store", "file:/tmp/x?ttl_ms=oops"],
        "invalid_option",
    );
    // A file where the directory should be: the store cannot be read.
    let file = std::env::temp_dir().join(format!("snowmint-cli-ops-file-{}", std::process::id()));
    std::fs::write(&file, "x").unwrap();
    fails(
        &[
            "lease",
            "list",
            "--store",
            &format!("file:{}", file.display()),
        ],
        "lease_unavailable",
    );
    std::fs::remove_file(&file).unwrap();
    // Arguments clap refuses (exit 2).
    assert_eq!(
        snowmint(&["lease", "release", "--store", "file", "--slot", "x"])
            .status
            .code(),
        Some(2)
    );
}

//! The record of issued IDs (`--issued-log FILE`): an audit file with one
//! line per batch of IDs, `GENERATOR ID ID ...` (decimal), appended with
//! one write(2) before the IDs leave in an answer. A process killed or
//! stopped after issuing cannot lose them from the record: it holds every
//! ID handed out, and some a client never received (an answer that came
//! too late for it, or never left). Not fsynced: the record survives the
//! process, not a crash of the machine. A write that fails is the request's
//! error: the IDs are not handed out.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// An open record file (appended to by every request, no lock: each line
/// is one write(2) to a file opened with `O_APPEND`).
#[derive(Debug)]
pub struct IssuedLog {
    file: File,
    path: PathBuf,
}

impl IssuedLog {
    /// Opens `path` for appending, creating it (mode 0600: IDs may be
    /// private) if it is missing.
    pub fn open(path: &Path) -> std::io::Result<IssuedLog> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(path)?;
        Ok(IssuedLog {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Appends the line of `ids`, issued by `generator`. Called before the
    /// IDs are handed out; an error means they must not be.
    pub fn record(&self, generator: &str, ids: &[u64]) -> Result<(), String> {
        let mut line = String::with_capacity(generator.len() + 1 + ids.len() * 21);
        line.push_str(generator);
        let mut digits = itoa::Buffer::new();
        for &id in ids {
            line.push(' ');
            line.push_str(digits.format(id));
        }
        line.push('\n');
        // A regular file: one write(2) unless the disk is full, then an error.
        (&self.file).write_all(line.as_bytes()).map_err(|e| {
            format!(
                "cannot write the record of issued IDs {}: {e}",
                self.path.display()
            )
        })
    }
}

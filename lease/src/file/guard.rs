//! What the file store checks before it trusts a directory, and how it opens
//! its own files. The store's promise rests on two things a directory can
//! silently lack: locks that really exclude, and files nobody else can
//! rewrite. So it fails closed:
//!
//! - **Network and cluster filesystems** (NFS, SMB/CIFS, FUSE, 9p, AFS, Ceph,
//!   Lustre, GPFS, ...) are refused, naming the filesystem: there `flock` is
//!   emulated with per-process POSIX locks or not coherent across machines,
//!   and two generators of one process stop excluding each other. The URL
//!   option `allow_fs=NAME` (the name the refusal gives) accepts that one
//!   filesystem: its operator vouches that its locks exclude.
//! - **Volatile filesystems** (tmpfs, ramfs) forget every `hwm` at reboot: a
//!   holder after a reboot starts from `hwm` 0, which is safe only if the clock
//!   has not stepped back across the reboot. A directory the URL names is the
//!   user's choice and is accepted (documented); the *default* directory is
//!   refused there unless the URL says `allow_fs=tmpfs` (or `ramfs`).
//! - **The default directory** (plain `file`) is created 0700 and refused
//!   unless it is a directory (not a link) owned by this user that neither its
//!   group nor others may write.
//! - **Any store directory** is refused if every user may write it without the
//!   sticky bit; a space directory is refused if others may write it or it is
//!   a link, and in a store directory every user may write (sticky), unless
//!   this user owns it (another user could have made it first). Group write
//!   stays allowed outside the default directory: services of one group may
//!   share a store.
//! - **Its own files** are opened with `O_NOFOLLOW`; temporary files are
//!   created with `O_CREAT|O_EXCL|O_NOFOLLOW` under a fresh random name.

use std::ffi::CString;
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

use crate::slot::new_token;
use crate::store::StoreError;

/// A failed file operation, naming it, the path and the OS error. Errors of
/// the directory as it is set up (no permission, a read-only or full
/// filesystem, a path through a file...) are refusals ("the store cannot keep
/// leases safe as configured"), not "the store did not answer in time":
/// someone must fix the directory. Others (EIO, EINTR, ...) may pass and
/// stay unreachable. Either way nothing was written and a holder keeps its
/// reservation.
pub(super) fn io_err(what: &str, path: &Path, e: io::Error) -> StoreError {
    let detail = format!("{what} {}: {e}", path.display());
    match e.raw_os_error() {
        Some(
            libc::EACCES
            | libc::EPERM
            | libc::EROFS
            | libc::ENOSPC
            | libc::EDQUOT
            | libc::ENOTDIR
            | libc::EISDIR
            | libc::ELOOP
            | libc::ENAMETOOLONG
            | libc::EMLINK
            | libc::EFBIG,
        ) => StoreError::Refused(detail),
        _ => StoreError::Unreachable(detail),
    }
}

/// What a filesystem means for the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FsClass {
    /// Real local locks and durable files.
    Local,
    /// Real locks, but every file is gone at reboot (tmpfs, ramfs).
    Volatile,
    /// Locks that may not exclude (network, cluster and FUSE filesystems),
    /// or a system where the type cannot be told.
    Shared,
}

/// The filesystem `path` is on: its name (as refusals and `allow_fs` spell
/// it) and class.
pub(super) fn filesystem(path: &Path) -> io::Result<(String, FsClass)> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path holds a NUL byte"))?;
    fs_of(&c)
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn fs_of(path: &CString) -> io::Result<(String, FsClass)> {
    // SAFETY: a valid C string and a zeroed out-struct statfs fills.
    let mut buf: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: path is a NUL-terminated C string and buf a valid, writable struct the call fills.
    if unsafe { libc::statfs(path.as_ptr(), &mut buf) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // f_type is a signed word of varying width; the magic numbers are u32.
    #[allow(clippy::unnecessary_cast)]
    let magic = buf.f_type as u32;
    let (name, class) = linux_magic(magic);
    Ok(match name {
        Some(n) => (n.to_string(), class),
        None => (format!("0x{magic:x}"), class),
    })
}

/// Linux `statfs` magic numbers (linux/magic.h and the filesystems' own
/// sources). A number not listed is a local filesystem.
#[cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]
pub(super) fn linux_magic(magic: u32) -> (Option<&'static str>, FsClass) {
    use FsClass::*;
    let (name, class) = match magic {
        0x6969 => ("nfs", Shared),
        0x517b => ("smb", Shared),
        0xfe53_4d42 => ("smb2", Shared),
        0xff53_4d42 => ("cifs", Shared),
        // sshfs, GlusterFS, s3fs, virtiofs, ... all report FUSE.
        0x6573_5546 => ("fuse", Shared),
        0x0102_1997 => ("9p", Shared),
        0x5346_414f => ("afs", Shared),
        0x6b41_4653 => ("kafs", Shared),
        0x00c3_6400 => ("ceph", Shared),
        0x0bd0_0bd0 => ("lustre", Shared),
        0x4750_4653 => ("gpfs", Shared),
        0x1983_0326 => ("beegfs", Shared),
        0x2003_0528 => ("orangefs", Shared),
        0x7461_636f => ("ocfs2", Shared),
        0x0116_1970 => ("gfs2", Shared),
        0x7375_7245 => ("coda", Shared),
        0x564c => ("ncp", Shared),
        0x786f_4256 => ("vboxsf", Shared),
        0x0102_1994 => ("tmpfs", Volatile),
        0x8584_58f6 => ("ramfs", Volatile),
        0xef53 => ("ext4", Local),
        0x5846_5342 => ("xfs", Local),
        0x9123_683e => ("btrfs", Local),
        0x2fc1_2fc1 => ("zfs", Local),
        0x794c_7630 => ("overlay", Local),
        0xf2f5_2010 => ("f2fs", Local),
        _ => return (None, Local),
    };
    (Some(name), class)
}

#[cfg(any(
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "dragonfly"
))]
// c_char is i8 or u8 depending on the target.
#[allow(clippy::unnecessary_cast)]
fn fs_of(path: &CString) -> io::Result<(String, FsClass)> {
    // SAFETY: a valid C string and a zeroed out-struct statfs fills.
    let mut buf: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: path is a NUL-terminated C string and buf a valid, writable struct the call fills.
    if unsafe { libc::statfs(path.as_ptr(), &mut buf) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let name: String = buf
        .f_fstypename
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8 as char)
        .collect();
    let class = bsd_class(&name);
    Ok((name, class))
}

#[cfg(target_os = "netbsd")]
#[allow(clippy::unnecessary_cast)]
fn fs_of(path: &CString) -> io::Result<(String, FsClass)> {
    // SAFETY: a valid C string and a zeroed out-struct statvfs fills.
    let mut buf: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: path is a NUL-terminated C string and buf a valid, writable struct the call fills.
    if unsafe { libc::statvfs(path.as_ptr(), &mut buf) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let name: String = buf
        .f_fstypename
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8 as char)
        .collect();
    let class = bsd_class(&name);
    Ok((name, class))
}

/// Other unixes: the type cannot be told here, so it counts as shared
/// (refused unless `allow_fs=unknown`).
#[cfg(not(any(
    target_os = "linux",
    target_os = "android",
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "dragonfly",
    target_os = "netbsd"
)))]
fn fs_of(_path: &CString) -> io::Result<(String, FsClass)> {
    Ok(("unknown".to_string(), FsClass::Shared))
}

/// The class of a BSD/macOS `f_fstypename`. A name not listed is local.
#[cfg_attr(any(target_os = "linux", target_os = "android"), allow(dead_code))]
pub(super) fn bsd_class(name: &str) -> FsClass {
    match name {
        "nfs" | "smbfs" | "cifs" | "afpfs" | "webdav" | "ftp" | "9p" | "p9fs" | "afs" | "ceph" => {
            FsClass::Shared
        }
        n if n.contains("fuse") => FsClass::Shared,
        "tmpfs" | "mfs" => FsClass::Volatile,
        _ => FsClass::Local,
    }
}

/// Refuses a shared filesystem, and a volatile one or overlayfs for the
/// default directory, unless `allow_fs` names it.
pub(super) fn check_filesystem(
    dir: &Path,
    allow_fs: Option<&str>,
    default_dir: bool,
) -> Result<(), StoreError> {
    let (name, class) = filesystem(dir).map_err(|e| io_err("cannot statfs", dir, e))?;
    if allow_fs == Some(name.as_str()) {
        return Ok(());
    }
    match class {
        // Each container's own upper layer: a default directory there is
        // private to one container, whose store then starts empty.
        FsClass::Local if default_dir && name == "overlay" => Err(StoreError::Refused(format!(
            "the default directory {} is on overlay, a container's own layer that other \
                 containers do not see (each would take the same slot): give the directory, \
                 file:/path, on a local filesystem every process leasing these node values sees \
                 (a directory of the host mounted into each container), or add allow_fs=overlay \
                 to the URL",
            dir.display()
        ))),
        FsClass::Local => Ok(()),
        FsClass::Volatile if !default_dir => Ok(()),
        FsClass::Volatile => Err(StoreError::Refused(format!(
            "the default directory {} is on {name}, which forgets every hwm at reboot \
             (safe only if the clock never steps back across one): set XDG_STATE_HOME or HOME, \
             name a directory on a disk (file:/var/lib/app/ids), or add allow_fs={name} to the URL",
            dir.display()
        ))),
        FsClass::Shared => Err(StoreError::Refused(format!(
            "{} is on {name}, a network, cluster or FUSE filesystem (or one this system cannot \
             name), where flock may not exclude other holders: use a local directory or a \
             network store; allow_fs={name} in the URL accepts it if its locks really exclude",
            dir.display()
        ))),
    }
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Creates the default directory 0700 (with any missing parents) and refuses
/// it unless it is a directory, not a link, owned by this user, that neither
/// group nor others may write.
pub(super) fn private_dir(dir: &Path) -> Result<(), StoreError> {
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| io_err("cannot create", dir, e))?;
    let m = fs::symlink_metadata(dir).map_err(|e| io_err("cannot stat", dir, e))?;
    let why = if m.file_type().is_symlink() {
        "is a symbolic link".to_string()
    } else if !m.is_dir() {
        "is not a directory".to_string()
    } else if m.uid() != euid() {
        format!("belongs to uid {}, not to this user ({})", m.uid(), euid())
    } else if m.mode() & 0o022 != 0 {
        format!(
            "may be written by its group or others (mode {:o})",
            m.mode() & 0o7777
        )
    } else {
        return Ok(());
    };
    Err(StoreError::Refused(format!(
        "the default directory {} {why}: refused (another user could lower its hwm); \
         if it is yours, make it private (chmod 700: its hwm values are worth keeping), \
         else remove it, or name a directory (file:/path)",
        dir.display()
    )))
}

/// Refuses a store directory every user may write without the sticky bit.
pub(super) fn check_store_dir(dir: &Path) -> Result<fs::Metadata, StoreError> {
    let m = fs::metadata(dir).map_err(|e| io_err("cannot stat", dir, e))?;
    if m.mode() & 0o002 != 0 && m.mode() & 0o1000 == 0 {
        return Err(StoreError::Refused(format!(
            "{} may be written by every user (mode {:o}, no sticky bit): refused (another user \
             could replace its files and lower an hwm)",
            dir.display(),
            m.mode() & 0o7777
        )));
    }
    Ok(m)
}

/// Refuses a space directory that is a link, that others may write, or that
/// another user owns inside a store directory every user may write.
pub(super) fn check_space_dir(sdir: &Path, store: &fs::Metadata) -> Result<(), StoreError> {
    let m = fs::symlink_metadata(sdir).map_err(|e| io_err("cannot stat", sdir, e))?;
    let why = if m.file_type().is_symlink() {
        "is a symbolic link".to_string()
    } else if !m.is_dir() {
        "is not a directory".to_string()
    } else if m.mode() & 0o002 != 0 {
        format!(
            "may be written by every user (mode {:o})",
            m.mode() & 0o7777
        )
    } else if store.mode() & 0o002 != 0 && m.uid() != euid() {
        format!(
            "belongs to uid {}, not to this user ({}), in a directory every user may write",
            m.uid(),
            euid()
        )
    } else {
        return Ok(());
    };
    Err(StoreError::Refused(format!(
        "{} {why}: refused (another user could lower its hwm)",
        sdir.display()
    )))
}

/// Opens `path` with `opts`, never through a symbolic link: a link in its
/// place is refused by name.
pub(super) fn open(path: &Path, opts: &mut OpenOptions) -> Result<File, StoreError> {
    opts.custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| refuse_link(path).unwrap_or_else(|| io_err("cannot open", path, e)))
}

/// Reads `path` whole, never through a link; `None` if it does not exist.
pub(super) fn read(path: &Path) -> Result<Option<String>, StoreError> {
    let mut f = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(refuse_link(path).unwrap_or_else(|| io_err("cannot read", path, e)));
        }
    };
    let mut text = String::new();
    f.read_to_string(&mut text)
        .map_err(|e| io_err("cannot read", path, e))?;
    Ok(Some(text))
}

/// The refusal of a link found where the store keeps its own file (Linux
/// says ELOOP, FreeBSD EMLINK: look instead).
fn refuse_link(path: &Path) -> Option<StoreError> {
    let link = fs::symlink_metadata(path).ok()?.file_type().is_symlink();
    link.then(|| {
        StoreError::BadRecord(format!(
            "{} is a symbolic link: refused (the file store never follows links for its own files)",
            path.display()
        ))
    })
}

/// Writes `text` to a fresh temporary file beside `path` (created
/// exclusively, never through a link), fsyncs it, renames it to `path` and
/// fsyncs `dir`. The temporary file is removed if any step fails.
pub(super) fn write_durably(dir: &Path, path: &Path, text: &str) -> Result<(), StoreError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", new_token()));
    let written = open(&tmp, OpenOptions::new().write(true).create_new(true))
        .and_then(|mut f| {
            f.write_all(text.as_bytes())
                .and_then(|()| f.sync_all())
                .map_err(|e| io_err("cannot write", &tmp, e))
        })
        .and_then(|()| fs::rename(&tmp, path).map_err(|e| io_err("cannot rename into", path, e)));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_err("cannot sync", dir, e))
}

/// Removes temporary files left in `sdir` by a writer that died between
/// creating and renaming one (any `*.tmp` older than ten minutes: a write
/// takes milliseconds). Best effort: errors are ignored.
pub(super) fn sweep_temporaries(sdir: &Path) {
    let Ok(entries) = fs::read_dir(sdir) else {
        return;
    };
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(600);
    for entry in entries.flatten() {
        let stale = entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.ends_with(".tmp"))
            && fs::symlink_metadata(entry.path())
                .and_then(|m| m.modified())
                .is_ok_and(|t| t < old);
        if stale {
            let _ = fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_filesystems_are_shared_and_tmpfs_volatile() {
        for (magic, name) in [
            (0x6969, "nfs"),
            (0xff53_4d42, "cifs"),
            (0xfe53_4d42, "smb2"),
            (0x6573_5546, "fuse"),
            (0x0102_1997, "9p"),
            (0x00c3_6400, "ceph"),
            (0x0bd0_0bd0, "lustre"),
            (0x5346_414f, "afs"),
        ] {
            assert_eq!(linux_magic(magic), (Some(name), FsClass::Shared));
        }
        assert_eq!(linux_magic(0x0102_1994), (Some("tmpfs"), FsClass::Volatile));
        assert_eq!(linux_magic(0xef53), (Some("ext4"), FsClass::Local));
        assert_eq!(linux_magic(0x1234), (None, FsClass::Local));
        for n in ["nfs", "smbfs", "macfuse", "fusefs.sshfs", "webdav"] {
            assert_eq!(bsd_class(n), FsClass::Shared, "{n}");
        }
        assert_eq!(bsd_class("tmpfs"), FsClass::Volatile);
        assert_eq!(bsd_class("apfs"), FsClass::Local);
    }

    #[test]
    fn refusals_name_the_filesystem() {
        // The machine's own /dev/shm is tmpfs on Linux: refused only as the
        // default directory, and then accepted with allow_fs=tmpfs.
        let shm = Path::new("/dev/shm");
        if filesystem(shm).map(|(n, _)| n).ok().as_deref() != Some("tmpfs") {
            return;
        }
        check_filesystem(shm, None, false).unwrap();
        let e = check_filesystem(shm, None, true).unwrap_err();
        assert!(
            matches!(&e, StoreError::Refused(m) if m.contains("is on tmpfs, which forgets every hwm")),
            "{e:?}"
        );
        check_filesystem(shm, Some("tmpfs"), true).unwrap();
        check_filesystem(shm, Some("nfs"), true).unwrap_err();
    }
}

//! The file store on systems other than Unix: not available. Its locks are
//! `flock(2)` locks whose release when a process dies is the claim's whole
//! meaning; a native version (`LockFileEx` on a per-slot lock file) is not
//! written. The type exists so that `file:` URLs parse and name the same
//! store everywhere; every call fails, which the driver reports as
//! `lease_unavailable` naming the reason.

use std::path::{Path, PathBuf};

use crate::space::SlotSpace;
use crate::store::{Claim, ClaimRequest, Holder, RenewRequest, Renewal, Store, StoreError};

/// The embedded store, unavailable on this system: every call fails.
#[derive(Debug)]
pub struct FileStore {
    dir: PathBuf,
}

#[cfg_attr(all(unix, test), allow(dead_code))]
impl FileStore {
    /// A store in `dir` (every call fails on this system).
    pub fn new(dir: impl Into<PathBuf>) -> FileStore {
        FileStore { dir: dir.into() }
    }

    /// The store a `file:` URL names (every call fails on this system).
    pub(crate) fn from_url(dir: &Path, settings: &crate::url::Settings) -> FileStore {
        let _ = settings;
        FileStore::new(dir)
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn unavailable(&self) -> StoreError {
        StoreError::Refused(format!(
            "the file store needs a Unix system (flock): {} cannot be used here; \
             use a network store (postgres, mysql, redis, etcd)",
            self.describe()
        ))
    }
}

impl Store for FileStore {
    fn describe(&self) -> String {
        format!("file:{}", self.dir.display())
    }

    fn now_ms(&self) -> Result<u64, StoreError> {
        Err(self.unavailable())
    }

    fn claim(&self, _: &SlotSpace, _: &ClaimRequest) -> Result<Claim, StoreError> {
        Err(self.unavailable())
    }

    fn renew_within(&self, _: &SlotSpace, _: &RenewRequest<'_>) -> Result<Renewal, StoreError> {
        Err(self.unavailable())
    }

    fn release(&self, _: &SlotSpace, _: &Holder, _: u64) -> Result<(), StoreError> {
        Err(self.unavailable())
    }

    fn init(&self) -> Result<(), StoreError> {
        Err(self.unavailable())
    }

    fn list(&self) -> Result<(u64, Vec<crate::store::SpaceRecord>), StoreError> {
        Err(self.unavailable())
    }

    fn release_slot(
        &self,
        req: &crate::store::SlotReleaseRequest<'_>,
    ) -> Result<crate::store::SlotRelease, StoreError> {
        crate::store::check_space_key(req.space_key)?;
        Err(self.unavailable())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_call_fails_naming_the_reason() {
        let store = FileStore::new("C:/ids");
        let space = SlotSpace::new(
            snowmint::Layout::preset("twitter").unwrap(),
            &[("datacenter", 1)],
            None,
        )
        .unwrap();
        let req = ClaimRequest::new(None, 1000, 1000);
        let e = store.claim(&space, &req).unwrap_err();
        assert_eq!(
            e,
            StoreError::Refused(
                "the file store needs a Unix system (flock): file:C:/ids cannot be used here; \
                 use a network store (postgres, mysql, redis, etcd)"
                    .into()
            )
        );
        assert_eq!(store.now_ms().unwrap_err(), e);
        assert_eq!(store.init().unwrap_err(), e);
        let req = crate::store::SlotReleaseRequest {
            space_key: "../x",
            slot: 0,
            force: false,
            reset_hwm_ms: None,
        };
        assert!(store.release_slot(&req).is_err());
    }
}

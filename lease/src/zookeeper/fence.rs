//! A ZooKeeper that goes back in time: the space's fence znode.
//!
//! A server restarted from a copy of its dataDir, or an ensemble restored
//! from a snapshot, has lost the writes after the copy. ZooKeeper has no
//! cluster identity to compare, and its zxid (epoch << 32 | counter) may
//! even be higher after a restore: an ensemble member starts a new epoch at
//! every election. What survives, in this process (`crate::history`):
//!
//! - per space, the highest zxid a call was answered at (each call first
//!   writes the clock znode: its `mzxid` is the server's position then). A
//!   lower one (a standalone server keeps its epoch across restarts) means
//!   lost writes;
//! - per live holder, the `mzxid` of its slot's znode after its last
//!   confirmed write. Only the holder writes it, so an older one is a lost
//!   write, whatever the epoch.
//!
//! A claim that detects either writes a fence into `<space>/fence` (store
//! time + the largest window any claimer of the space recorded in
//! `<space>/window` + 2 × `max_skew_ms`) and starts above it. Every claim,
//! renewal and release checks the fence znode's version in the same
//! multi-op as its write, so a later claim, from any process, starts above
//! the fence, and a holder whose slot znode is older than the fence (its
//! `mzxid` below the fence znode's) fails as lost at its next renewal: the
//! restore may have revived a holder that another had superseded. A renewal
//! that finds its own slot older than its last confirmed write fences the
//! space and fails as lost.
//! Not detected: a process that never talked to the server before the loss
//! (docs/STORES.md, "ZooKeeper").

use snowmint::FenceCause;
use zookeeper_client as zk;

use super::{is, persistent, ZookeeperStore};
use crate::history::{self, Fence, Seen};
use crate::store::StoreError;

/// How messages name ZooKeeper's position in its history.
pub(super) const UNIT: &str = "ZooKeeper zxid";

/// The fence znode's text while no fence was written.
const NO_FENCE: &str = "none";

/// The store's position as an answer gave it (ZooKeeper has no identity).
pub(super) fn at(zxid: i64) -> Seen {
    Seen {
        cluster: String::new(),
        revision: zxid,
    }
}

/// A space's fence znode as read.
pub(super) struct SpaceFence {
    /// The fence (`None`: never fenced).
    pub fence: Option<Fence>,
    /// The znode's version, which writes check.
    pub version: i32,
    /// The znode's `mzxid`: where the fence was written.
    pub mzxid: i64,
}

impl ZookeeperStore {
    pub(super) fn fence_path(&self, key: &str) -> String {
        format!("{}/fence", self.space_path(key))
    }

    fn window_path(&self, key: &str) -> String {
        format!("{}/window", self.space_path(key))
    }

    /// The space's fence znode; creates it (without a fence) first if it is
    /// missing, so that writes can check its version.
    pub(super) fn read_fence(&self, key: &str) -> Result<SpaceFence, StoreError> {
        let path = self.fence_path(key);
        let (data, stat) = self
            .conn
            .run(|c| async move {
                match c.get_data(&path).await {
                    Err(zk::Error::NoNode) => {
                        match c.create(&path, NO_FENCE.as_bytes(), &persistent()).await {
                            Ok(_) | Err(zk::Error::NodeExists) => {}
                            Err(e) => return Err(e),
                        }
                        c.get_data(&path).await
                    }
                    other => other,
                }
            })
            .map_err(|f| self.err(f))?;
        let bad = || StoreError::BadRecord(format!("znode '{key}/fence' is not a space fence"));
        let text = std::str::from_utf8(&data).map_err(|_| bad())?;
        let fence = match text {
            NO_FENCE => None,
            t => Some(Fence::parse(t).ok_or_else(bad)?),
        };
        Ok(SpaceFence {
            fence,
            version: stat.version,
            mzxid: stat.mzxid,
        })
    }

    /// Writes `fence` if the znode is still at `version`: its new version
    /// and the write's zxid, or `None` if it changed meanwhile.
    pub(super) fn write_fence(
        &self,
        key: &str,
        fence: Fence,
        version: i32,
    ) -> Result<Option<(i32, i64)>, StoreError> {
        let path = self.fence_path(key);
        let data = fence.to_text().into_bytes();
        match self
            .conn
            .run(|c| async move { c.set_data(&path, &data, Some(version)).await })
        {
            Ok(stat) => Ok(Some((stat.version, stat.mzxid))),
            Err(f) if is(&f, zk::Error::BadVersion) => Ok(None),
            Err(f) => Err(self.err(f)),
        }
    }

    /// The largest window a claimer of the space recorded, raised to
    /// `window_ms` (written if it was lower; a race lost is read again).
    pub(super) fn raise_window(&self, key: &str, window_ms: u64) -> Result<u64, StoreError> {
        let path = self.window_path(key);
        for _ in 0..super::ROUNDS {
            let p = path.clone();
            let read = self
                .conn
                .run(|c| async move {
                    match c.get_data(&p).await {
                        Ok((data, stat)) => Ok(Some((data, stat.version))),
                        Err(zk::Error::NoNode) => Ok(None),
                        Err(e) => Err(e),
                    }
                })
                .map_err(|f| self.err(f))?;
            let (old, version) = match read {
                Some((data, v)) => {
                    let w = std::str::from_utf8(&data)
                        .ok()
                        .and_then(history::parse_window)
                        .ok_or_else(|| {
                            StoreError::BadRecord(format!("znode '{key}/window' is not a window"))
                        })?;
                    (w, Some(v))
                }
                None => (0, None),
            };
            if old >= window_ms {
                return Ok(old);
            }
            let (p, data) = (path.clone(), format!("window={window_ms}").into_bytes());
            let r = self.conn.run(|c| async move {
                match version {
                    Some(v) => c.set_data(&p, &data, Some(v)).await.map(|_| ()),
                    None => c.create(&p, &data, &persistent()).await.map(|_| ()),
                }
            });
            match r {
                Ok(()) => return Ok(window_ms),
                Err(f) if is(&f, zk::Error::BadVersion) || is(&f, zk::Error::NodeExists) => {}
                Err(f) => return Err(self.err(f)),
            }
        }
        Err(StoreError::Unreachable(format!(
            "znode '{key}/window' kept changing"
        )))
    }

    /// Fences the space after a renewal found that the store went back
    /// (best effort: the caller fails as lost anyway).
    pub(super) fn fence_space(&self, key: &str, cause: FenceCause, window_ms: u64) {
        for _ in 0..4 {
            let Ok((now, _)) = self.touch() else { return };
            let Ok(window) = self.raise_window(key, window_ms) else {
                return;
            };
            let Ok(read) = self.read_fence(key) else {
                return;
            };
            let fence = Fence::after(now, window, self.skew_ms, cause);
            match self.write_fence(key, fence, read.version) {
                Ok(Some((_, zxid))) => {
                    history::record_space(&self.conn.name, key, &at(zxid), true);
                    return;
                }
                Ok(None) => continue,
                Err(_) => return,
            }
        }
    }
}

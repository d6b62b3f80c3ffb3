//! ZooKeeper, through `zookeeper-client`.
//!
//! ```text
//! <chroot>/snowmint/lease/clock                 touched to read the leader's clock (its mtime)
//! <chroot>/snowmint/lease/<space key>           the space's canonical text (checked on every claim)
//! <chroot>/snowmint/lease/<space key>/<n>       slot n: hwm_ms, counter, token, expires_ms
//! <chroot>/snowmint/lease/<space key>/window    the largest window a claimer recorded (see fence.rs)
//! <chroot>/snowmint/lease/<space key>/fence     the last fence after a detected loss (see fence.rs)
//! ```
//!
//! Every znode is persistent: no lease lives in a ZooKeeper session or an
//! ephemeral node. The session only carries requests; when it expires (the
//! client was cut off longer than the session timeout) the store opens a new
//! one, and nothing about any slot changes. A holder's claim lasts until the
//! `expires_ms` of its record, judged by the store's clock, exactly as in the
//! SQL and Redis stores.
//!
//! The store's clock: ZooKeeper has no clock API, but every write stamps the
//! znode's `mtime` with the leader's wall clock when it orders the write. Each
//! claim, renewal and `now_ms` therefore first writes the clock znode
//! (unconditionally) and reads its `mtime`: store time `T`, taken after the
//! call was sent. The claim or renewal then reads the slot records (a read
//! after this session's own write sees at least the state at `T`), decides
//! with `T` (free, or `expires_ms <= T`), and writes the record with
//! `setData` conditional on the version it read (or `create` for a slot never
//! used). A write that lost a race fails (`BadVersion`, `NodeExists`) and
//! nothing changes; the call reads again. ZooKeeper answers a write after a
//! quorum logged it (with the default `forceSync=yes`, on disk), so a
//! returned `hwm` is durable.
//!
//! A server restored from a backup or snapshot has lost confirmed writes: a
//! claim fences when this process saw a higher zxid, or one of its holders'
//! slots older than its last confirmed write; a holder's renewal fails as
//! lost when its slot is older than its last confirmed write or than the
//! space's fence (see `fence.rs`).

use std::collections::HashMap;

use zookeeper_client as zk;

use crate::error::LeaseError;
use crate::history;
use crate::slot::{new_token, slot_order, SlotSeen};
use crate::space::SlotSpace;
use crate::store::listing;
use crate::store::{
    check_hwm_bound, check_space_key, is_space_key, Claim, ClaimRequest, Holder, ReleaseStep,
    Renewal, SlotRecord, SlotRelease, SlotState, SpaceRecord, Store, StoreError,
};
use crate::store::{RenewRequest, SlotReleaseRequest};
use crate::url::Settings;

mod client;
mod fence;

use crate::history::Fence;
use client::{Conn, Failure};
use fence::{at, UNIT};

/// How many times a call reads again after losing a race on a slot.
const ROUNDS: usize = 64;

/// One slot's record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Record {
    hwm_ms: u64,
    counter: u64,
    token: String,
    expires_ms: u64,
}

impl Record {
    const HEADER: &'static str = "snowmint lease slot zookeeper v1";

    /// A free slot's record: no token, no expiry, `hwm_ms` and the claim
    /// counter kept.
    fn freed(hwm_ms: u64, counter: u64) -> Record {
        let (token, expires_ms) = (String::new(), 0);
        Record {
            hwm_ms,
            counter,
            token,
            expires_ms,
        }
    }

    fn to_text(&self) -> String {
        format!(
            "{}\nhwm_ms={}\ncounter={}\ntoken={}\nexpires_ms={}\n",
            Self::HEADER,
            self.hwm_ms,
            self.counter,
            self.token,
            self.expires_ms
        )
    }

    fn parse(data: &[u8]) -> Option<Record> {
        let text = std::str::from_utf8(data).ok()?;
        let mut lines = text.lines();
        if lines.next()? != Self::HEADER {
            return None;
        }
        let mut field = |name: &str| lines.next()?.strip_prefix(name)?.strip_prefix('=');
        Some(Record {
            hwm_ms: field("hwm_ms")?.parse().ok()?,
            counter: field("counter")?.parse().ok()?,
            token: field("token")?.to_string(),
            expires_ms: field("expires_ms")?.parse().ok()?,
        })
    }

    fn state(&self, now: u64) -> SlotState {
        SlotState::of_expiring(!self.token.is_empty(), self.expires_ms, now)
    }
}

/// A lease store on a ZooKeeper ensemble: see the module documentation.
pub struct ZookeeperStore {
    conn: Conn,
    /// `<chroot>/snowmint/lease`.
    root: String,
    /// `max_skew_ms`: twice added to a fence (clocks ahead, then behind).
    skew_ms: u64,
}

crate::store::debug_by_name!(ZookeeperStore, conn.name);

fn persistent() -> zk::CreateOptions<'static> {
    zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all())
}

fn is(f: &Failure, e: zk::Error) -> bool {
    f.zk() == Some(&e)
}

impl ZookeeperStore {
    /// A store on the ensemble of `url` (`host:port[,host:port...][/chroot]`,
    /// as [`crate::StoreUrl::Zookeeper`] holds it). No I/O here: the first
    /// call connects. The other settings are the defaults ([`Settings`]).
    pub fn new(url: &str, timeout_ms: u64) -> Result<ZookeeperStore, LeaseError> {
        Self::with_settings(url, &Settings::with_timeout(timeout_ms))
    }

    /// A store with the lease URL's settings: `timeout_ms`, and
    /// `max_skew_ms` (the fence after the store went back in time).
    pub fn with_settings(url: &str, settings: &Settings) -> Result<ZookeeperStore, LeaseError> {
        let timeout_ms = settings.timeout_ms;
        let (hosts, chroot) = match url.find('/') {
            Some(i) => (&url[..i], url[i..].trim_end_matches('/')),
            None => (url, ""),
        };
        if hosts.is_empty() || hosts.split(',').any(|h| h.trim().is_empty()) {
            return Err(LeaseError::url(
                "a ZooKeeper URL is 'zookeeper://host:port[,host:port...][/chroot]'",
            ));
        }
        if chroot
            .split('/')
            .skip(1)
            .any(|p| p.is_empty() || p == "." || p == "..")
        {
            return Err(LeaseError::url(format!(
                "'{chroot}' is not a ZooKeeper path (chroot)"
            )));
        }
        let name = format!("zookeeper://{hosts}{chroot}");
        Ok(ZookeeperStore {
            conn: Conn::new(hosts, name, timeout_ms)?,
            root: format!("{chroot}/snowmint/lease"),
            skew_ms: settings.max_skew_ms,
        })
    }

    fn space_path(&self, key: &str) -> String {
        format!("{}/{key}", self.root)
    }

    fn slot_path(&self, key: &str, n: u64) -> String {
        format!("{}/{key}/{n}", self.root)
    }

    fn err(&self, f: Failure) -> StoreError {
        self.conn.unreachable(f)
    }

    /// Store time: writes the clock znode and returns its `mtime` (the
    /// leader's clock when it ordered the write). Creates it (and the root)
    /// the first time. Also the write's zxid: the server's position then.
    fn touch(&self) -> Result<(u64, i64), StoreError> {
        let clock = format!("{}/clock", self.root);
        let root = self.root.clone();
        let stat = self
            .conn
            .run(|c| async move {
                match c.set_data(&clock, b"", None).await {
                    Err(zk::Error::NoNode) => {
                        c.mkdir(&root, &persistent()).await?;
                        match c.create(&clock, b"", &persistent()).await {
                            Ok(_) | Err(zk::Error::NodeExists) => {}
                            Err(e) => return Err(e),
                        }
                        c.set_data(&clock, b"", None).await
                    }
                    other => other,
                }
            })
            .map_err(|f| self.err(f))?;
        let now = u64::try_from(stat.mtime).map_err(|_| {
            StoreError::BadRecord(format!("the clock znode's mtime {}", stat.mtime))
        })?;
        Ok((now, stat.mzxid))
    }

    /// Checks (or first writes) the space's text.
    fn check_space(&self, space: &SlotSpace) -> Result<(), StoreError> {
        let path = self.space_path(space.key());
        let text = space.text().to_string();
        let root = self.root.clone();
        let stored = self
            .conn
            .run(|c| async move {
                match c.get_data(&path).await {
                    Ok((data, _)) => Ok(data),
                    Err(zk::Error::NoNode) => {
                        c.mkdir(&root, &persistent()).await?;
                        match c.create(&path, text.as_bytes(), &persistent()).await {
                            Ok(_) => Ok(text.into_bytes()),
                            Err(zk::Error::NodeExists) => Ok(c.get_data(&path).await?.0),
                            Err(e) => Err(e),
                        }
                    }
                    Err(e) => Err(e),
                }
            })
            .map_err(|f| self.err(f))?;
        if stored != space.text().as_bytes() {
            return Err(StoreError::BadRecord(format!(
                "znode '{}' describes another slot space than its name says",
                self.space_path(space.key())
            )));
        }
        Ok(())
    }

    /// Every slot record of the space `key`, with its znode version and
    /// `mzxid`.
    fn read_slots(&self, key: &str) -> Result<HashMap<u64, (Record, i32, i64)>, StoreError> {
        let path = self.space_path(key);
        let answers = self
            .conn
            .run(|c| async move {
                let children = match c.list_children(&path).await {
                    Ok(ch) => ch,
                    Err(zk::Error::NoNode) => return Ok(Vec::new()),
                    Err(e) => return Err(e),
                };
                let children: Vec<String> = children
                    .into_iter()
                    .filter(|c| c != "fence" && c != "window")
                    .collect();
                let mut out = Vec::with_capacity(children.len());
                for chunk in children.chunks(256) {
                    let mut reader = c.new_multi_reader();
                    for child in chunk {
                        reader.add_get_data(&format!("{path}/{child}"))?;
                    }
                    let results = reader.commit().await?;
                    out.extend(chunk.iter().cloned().zip(results));
                }
                Ok(out)
            })
            .map_err(|f| self.err(f))?;
        let mut slots = HashMap::new();
        for (child, result) in answers {
            let bad =
                || StoreError::BadRecord(format!("znode '{key}/{child}' is not a slot record"));
            let n: u64 = child.parse().map_err(|_| bad())?;
            match result {
                zk::MultiReadResult::Data { data, stat } => {
                    let record = Record::parse(&data).ok_or_else(bad)?;
                    slots.insert(n, (record, stat.version, stat.mzxid));
                }
                // Deleted between the listing and the read: nothing holds it.
                zk::MultiReadResult::Error {
                    err: zk::Error::NoNode,
                } => {}
                zk::MultiReadResult::Error { err } => {
                    return Err(self.err(Failure::Zk(err)));
                }
                _ => return Err(bad()),
            }
        }
        Ok(slots)
    }

    /// Slot `n` of the space `key` and its version (`None`: no record).
    fn read_slot(&self, key: &str, n: u64) -> Result<Option<(Record, i32)>, StoreError> {
        Ok(self.read_slot_at(key, n)?.map(|(r, v, _)| (r, v)))
    }

    /// [`read_slot`](Self::read_slot), and the znode's `mzxid`.
    fn read_slot_at(&self, key: &str, n: u64) -> Result<Option<(Record, i32, i64)>, StoreError> {
        let path = self.slot_path(key, n);
        let answer = self
            .conn
            .run(|c| async move {
                match c.get_data(&path).await {
                    Ok((data, stat)) => Ok(Some((data, stat.version, stat.mzxid))),
                    Err(zk::Error::NoNode) => Ok(None),
                    Err(e) => Err(e),
                }
            })
            .map_err(|f| self.err(f))?;
        match answer {
            None => Ok(None),
            Some((data, version, mzxid)) => Record::parse(&data)
                .map(|r| Some((r, version, mzxid)))
                .ok_or_else(|| {
                    StoreError::BadRecord(format!("znode '{key}/{n}' is not a slot record"))
                }),
        }
    }

    /// Writes `record` to slot `n` if its version is still `version` (or, with
    /// `None`, if it does not exist yet). `Ok(false)`: it changed meanwhile.
    fn write_slot(
        &self,
        key: &str,
        n: u64,
        record: &Record,
        version: Option<i32>,
    ) -> Result<bool, StoreError> {
        Ok(self.write_slot_at(key, n, record, version, None)?.is_some())
    }

    /// [`write_slot`](Self::write_slot), in one multi-op with a check that
    /// the space's fence znode is still at `fence_version` (if given):
    /// `Some(zxid)` of the write, `None` if either changed meanwhile.
    fn write_slot_at(
        &self,
        key: &str,
        n: u64,
        record: &Record,
        version: Option<i32>,
        fence_version: Option<i32>,
    ) -> Result<Option<i64>, StoreError> {
        let path = self.slot_path(key, n);
        let fence = self.fence_path(key);
        let data = record.to_text().into_bytes();
        let r = self.conn.run(|c| async move {
            let Some(fv) = fence_version else {
                return match version {
                    Some(v) => c.set_data(&path, &data, Some(v)).await.map(|s| s.mzxid),
                    None => c
                        .create(&path, &data, &persistent())
                        .await
                        .map(|(s, _)| s.mzxid),
                };
            };
            let mut w = c.new_multi_writer();
            w.add_check_version(&fence, fv)?;
            match version {
                Some(v) => w.add_set_data(&path, &data, Some(v))?,
                None => w.add_create(&path, &data, &persistent())?,
            }
            let results = w.commit().await.map_err(zk::Error::from)?;
            Ok(match results.get(1) {
                Some(zk::MultiWriteResult::SetData { stat })
                | Some(zk::MultiWriteResult::Create { stat, .. }) => stat.mzxid,
                _ => 0,
            })
        });
        match r {
            Ok(zxid) => Ok(Some(zxid)),
            Err(f) if is(&f, zk::Error::BadVersion) || is(&f, zk::Error::NodeExists) => Ok(None),
            // The record (or the fence znode) went away (an operator deleted
            // it): read again.
            Err(f)
                if is(&f, zk::Error::NoNode) && (version.is_some() || fence_version.is_some()) =>
            {
                Ok(None)
            }
            Err(f) => Err(self.err(f)),
        }
    }

    /// Reads slot `holder.slot` and checks that `holder` still holds it.
    /// Lost, after fencing the space, if the slot's znode is older than the
    /// holder's last confirmed write, or the server answered (`zxid`, of this
    /// call's clock write, if there was one) below it: it went back in time
    /// (`window_ms`: the holder's, for the fence's span). Lost too if the
    /// slot's znode is older than the space's fence: the claim predates a
    /// detected loss, which may have revived it after another holder had
    /// superseded it. Also returns the fence znode's version, which the
    /// write checks.
    fn read_held(
        &self,
        space: &SlotSpace,
        holder: &Holder,
        zxid: Option<i64>,
        window_ms: u64,
    ) -> Result<(Record, i32, i32), StoreError> {
        // Without a clock write, only the slot's own znode is compared.
        let zxid = zxid.unwrap_or(i64::MAX);
        let name = &self.conn.name;
        let before = history::holder_seen(name, space.key(), &holder.token);
        let read = self.read_slot_at(space.key(), holder.slot)?;
        let record_at = read.as_ref().map(|(_, _, mzxid)| *mzxid);
        if let Some((cause, why)) =
            history::record_went_back(before.as_ref(), &at(zxid), holder.slot, record_at, UNIT)
        {
            if !history::fenced_since(name, space.key(), &holder.token) {
                self.fence_space(space.key(), cause, window_ms);
            }
            history::forget_holder(name, space.key(), &holder.token);
            return Err(StoreError::Lost(format!(
                "slot {}: {why}; the space is fenced",
                holder.slot
            )));
        }
        let fence = self.read_fence(space.key())?;
        if fence.fence.is_some() && record_at.is_some_and(|r| r < fence.mzxid) {
            history::forget_holder(name, space.key(), &holder.token);
            return Err(StoreError::Lost(format!(
                "slot {}: the space was fenced (at zxid {:#x}) after a loss was detected, \
                 and this claim was last confirmed before it",
                holder.slot, fence.mzxid
            )));
        }
        match read.map(|(r, v, _)| (r, v)) {
            Some((r, v)) if r.token == holder.token && r.counter == holder.counter => {
                Ok((r, v, fence.version))
            }
            Some((r, _)) if r.token.is_empty() => Err(StoreError::Lost(format!(
                "slot {} was released (claim counter {})",
                holder.slot, r.counter
            ))),
            Some((r, _)) => Err(StoreError::Lost(format!(
                "slot {} has another holder (claim counter {})",
                holder.slot, r.counter
            ))),
            None => Err(StoreError::Lost(format!(
                "slot {} has no record",
                holder.slot
            ))),
        }
    }
}

impl Store for ZookeeperStore {
    fn describe(&self) -> String {
        self.conn.name.clone()
    }

    /// The leader's clock as the `mtime` of a write (see the module
    /// documentation): one write.
    fn now_ms(&self) -> Result<u64, StoreError> {
        self.touch().map(|(now, _)| now)
    }

    fn claim(&self, space: &SlotSpace, req: &ClaimRequest) -> Result<Claim, StoreError> {
        let max_hwm_ms = req.max_hwm_ms;
        self.check_space(space)?;
        let name = &self.conn.name;
        for _ in 0..ROUNDS {
            // What this process saw before this call's clock write was sent:
            // that write is ordered after it, at a higher zxid.
            // This process's live holders as confirmed before the read: each
            // slot read after must be at least as new.
            let before = history::space_seen(name, space.key());
            let holders = history::holders(name, space.key());
            let (now, zxid) = self.touch()?;
            check_hwm_bound(now, req.window_ms, max_hwm_ms)?;
            let window = self.raise_window(space.key(), req.window_ms)?;
            let read_fence = self.read_fence(space.key())?;
            let (mut fence, mut fence_version) = (read_fence.fence, read_fence.version);
            let slots = self.read_slots(space.key())?;
            // Lost writes: a lower zxid, or a slot of this process's live
            // holders older than their last confirmed write.
            let detected = history::went_back(before.as_ref(), &at(zxid), UNIT).or_else(|| {
                holders.iter().find_map(|(n, seen)| {
                    let rec = slots.get(n).map(|(_, _, mzxid)| *mzxid);
                    history::record_went_back(Some(seen), &at(zxid), *n, rec, UNIT)
                })
            });
            if let Some((cause, _)) = &detected {
                let new = Fence::after(now, window, self.skew_ms, *cause);
                match self.write_fence(space.key(), new, fence_version)? {
                    Some((v, at_zxid)) => {
                        (fence, fence_version) = (Some(new), v);
                        history::record_space(name, space.key(), &at(at_zxid), true);
                    }
                    // Another claimer fenced meanwhile: read again.
                    None => continue,
                }
            }
            let seen: Vec<SlotSeen> = slots
                .iter()
                .map(|(&n, (r, _, _))| SlotSeen {
                    slot: n,
                    free: r.state(now) != SlotState::Held,
                    hwm_ms: r.hwm_ms,
                })
                .collect();
            let order = slot_order(req.prefer, space.slots(), &seen, now);
            if order.is_empty() {
                return Err(StoreError::NoFreeSlot);
            }
            for n in order {
                let (old, version) = match slots.get(&n) {
                    Some((r, v, _)) => (r.clone(), Some(*v)),
                    None => (Record::default(), None),
                };
                // The space's fence, while ahead of the slot's own hwm, is
                // where the new holder starts above.
                let (prev_hwm_ms, cause) = match fence {
                    Some(f) if f.fence_ms > old.hwm_ms => (f.fence_ms, Some(f.cause)),
                    _ => (old.hwm_ms, None),
                };
                let new = Record {
                    hwm_ms: prev_hwm_ms.max(now.saturating_add(req.window_ms)),
                    counter: old.counter + 1,
                    token: new_token(),
                    expires_ms: now.saturating_add(req.ttl_ms),
                };
                let written =
                    self.write_slot_at(space.key(), n, &new, version, Some(fence_version))?;
                if let Some(write_zxid) = written {
                    // A multi-op's create may not report its stat (see
                    // ZOOKEEPER-4026): the clock write's zxid is a lower bound.
                    let confirmed = at(write_zxid.max(zxid));
                    history::record_space(name, space.key(), &confirmed, false);
                    history::record_holder(name, space.key(), &new.token, n, &confirmed);
                    return Ok(Claim {
                        holder: Holder::new(n, new.token, new.counter),
                        prev_hwm_ms,
                        hwm_ms: new.hwm_ms,
                        expires_ms: Some(new.expires_ms),
                        fence: cause,
                    });
                }
            }
        }
        Err(StoreError::Unreachable(format!(
            "lost the race for a free slot {ROUNDS} times"
        )))
    }

    fn renew_within(&self, space: &SlotSpace, r: &RenewRequest<'_>) -> Result<Renewal, StoreError> {
        let (holder, ttl_ms, window_ms, max_hwm_ms) = r.parts();
        for _ in 0..ROUNDS {
            let (now, zxid) = self.touch()?;
            check_hwm_bound(now, window_ms, max_hwm_ms)?;
            let (mut record, version, fence_version) =
                self.read_held(space, holder, Some(zxid), window_ms)?;
            record.hwm_ms = record.hwm_ms.max(now.saturating_add(window_ms));
            record.expires_ms = now.saturating_add(ttl_ms);
            let written = self.write_slot_at(
                space.key(),
                holder.slot,
                &record,
                Some(version),
                Some(fence_version),
            )?;
            if let Some(write_zxid) = written {
                let name = &self.conn.name;
                let confirmed = at(write_zxid.max(zxid));
                history::record_space(name, space.key(), &confirmed, false);
                history::record_holder(name, space.key(), &holder.token, holder.slot, &confirmed);
                return Ok(Renewal {
                    hwm_ms: record.hwm_ms,
                    expires_ms: Some(record.expires_ms),
                });
            }
        }
        Err(StoreError::Unreachable(format!(
            "slot {}'s record kept changing during {ROUNDS} renewals",
            holder.slot
        )))
    }

    fn release(&self, space: &SlotSpace, holder: &Holder, last_ms: u64) -> Result<(), StoreError> {
        for _ in 0..ROUNDS {
            let (mut record, version, fence_version) = self.read_held(space, holder, None, 0)?;
            record.hwm_ms = last_ms;
            record.token.clear();
            record.expires_ms = 0;
            let written = self.write_slot_at(
                space.key(),
                holder.slot,
                &record,
                Some(version),
                Some(fence_version),
            )?;
            if written.is_some() {
                history::forget_holder(&self.conn.name, space.key(), &holder.token);
                return Ok(());
            }
        }
        Err(StoreError::Unreachable(format!(
            "slot {}'s record kept changing during {ROUNDS} releases",
            holder.slot
        )))
    }

    /// Creates the root and the clock znode if they are missing, and checks
    /// that a write is answered.
    fn init(&self) -> Result<(), StoreError> {
        self.touch().map(|_| ())
    }

    /// The store's clock (one write), then every space under the root with
    /// its slot records.
    fn list(&self) -> Result<(u64, Vec<SpaceRecord>), StoreError> {
        let (now, _) = self.touch()?;
        let root = self.root.clone();
        let children = self
            .conn
            .run(|c| async move { c.list_children(&root).await })
            .map_err(|f| self.err(f))?;
        let mut spaces = Vec::new();
        for key in children.into_iter().filter(|k| is_space_key(k)) {
            let path = self.space_path(&key);
            let text = self
                .conn
                .run(|c| async move { c.get_data(&path).await })
                .map_err(|f| self.err(f))?
                .0;
            let mut slots: Vec<(u64, (Record, i32, i64))> =
                self.read_slots(&key)?.into_iter().collect();
            slots.sort_by_key(|(n, _)| *n);
            let text = String::from_utf8_lossy(&text).into_owned();
            let slots = slots
                .into_iter()
                .map(|(n, (r, _, _))| slot_record(n, &r, now))
                .collect();
            spaces.push(SpaceRecord::unmarked(key, text, slots));
        }
        Ok(listing(now, spaces))
    }

    /// One conditional write (the version read): the token cleared, `hwm`
    /// kept or reset, the counter kept.
    fn release_slot(&self, req: &SlotReleaseRequest<'_>) -> Result<SlotRelease, StoreError> {
        let (space_key, slot, force, reset_hwm_ms) = req.parts();
        check_space_key(space_key)?;
        for _ in 0..ROUNDS {
            let (now, _) = self.touch()?;
            let Some((record, version)) = self.read_slot(space_key, slot)? else {
                return Ok(SlotRelease::WasFree);
            };
            let before = slot_record(slot, &record, now);
            let hwm_ms = match ReleaseStep::check(&before, force, reset_hwm_ms) {
                Ok(hwm_ms) => hwm_ms,
                Err(done) => return Ok(done),
            };
            let new = Record::freed(hwm_ms, record.counter);
            if self.write_slot(space_key, slot, &new, Some(version))? {
                return Ok(SlotRelease::Released(before));
            }
        }
        Err(StoreError::Unreachable(format!(
            "slot {slot}'s record kept changing during {ROUNDS} tries"
        )))
    }
}

fn slot_record(n: u64, r: &Record, now: u64) -> SlotRecord {
    SlotRecord::expiring(n, r.token.clone(), r.counter, r.expires_ms, r.hwm_ms, now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_text_round_trips() {
        let r = Record {
            hwm_ms: 5,
            counter: 2,
            token: "ab".into(),
            expires_ms: 9,
        };
        assert_eq!(Record::parse(r.to_text().as_bytes()), Some(r.clone()));
        assert_eq!(Record::parse(b"x"), None);
        assert_eq!(r.state(8), SlotState::Held);
        assert_eq!(r.state(9), SlotState::Expired);
        assert_eq!(Record::default().state(0), SlotState::Free);
    }

    #[test]
    fn urls() {
        let s = ZookeeperStore::new("a:1,b:2/app/ids", 1000).unwrap();
        assert_eq!(s.describe(), "zookeeper://a:1,b:2/app/ids");
        assert_eq!(s.root, "/app/ids/snowmint/lease");
        let s = ZookeeperStore::new("a:1", 1000).unwrap();
        assert_eq!(s.root, "/snowmint/lease");
        assert!(ZookeeperStore::new("a:1//x", 1000).is_err());
        assert!(ZookeeperStore::new("a:1,/x", 1000).is_err());
    }
}

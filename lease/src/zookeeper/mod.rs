//! ZooKeeper, through `zookeeper-client`.
//!
//! ```text
//! <chroot>/snowmint/lease/clock                 touched to read the leader's clock (its mtime)
//! <chroot>/snowmint/lease/<space key>           the space's canonical text (checked on every claim)
//! <chroot>/snowmint/lease/<space key>/<n>       slot n: hwm_ms, counter, token, expires_ms
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

use std::collections::HashMap;

use zookeeper_client as zk;

use crate::error::LeaseError;
use crate::file::new_token;
use crate::space::SlotSpace;
use crate::store::{
    check_hwm_bound, check_space_key, is_space_key, Claim, ClaimRequest, Holder, ReleaseStep,
    Renewal, SlotRecord, SlotRelease, SlotState, SpaceRecord, Store, StoreError,
};

mod client;

use client::{Conn, Failure};

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
        if self.token.is_empty() {
            SlotState::Free
        } else if self.expires_ms > now {
            SlotState::Held
        } else {
            SlotState::Expired
        }
    }
}

/// A lease store on a ZooKeeper ensemble: see the module documentation.
pub struct ZookeeperStore {
    conn: Conn,
    /// `<chroot>/snowmint/lease`.
    root: String,
}

impl std::fmt::Debug for ZookeeperStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZookeeperStore")
            .field("name", &self.conn.name)
            .finish_non_exhaustive()
    }
}

fn persistent() -> zk::CreateOptions<'static> {
    zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all())
}

fn is(f: &Failure, e: zk::Error) -> bool {
    f.zk() == Some(&e)
}

impl ZookeeperStore {
    /// A store on the ensemble of `url` (`host:port[,host:port...][/chroot]`,
    /// as [`crate::StoreUrl::Zookeeper`] holds it). No I/O here: the first
    /// call connects.
    pub fn new(url: &str, timeout_ms: u64) -> Result<ZookeeperStore, LeaseError> {
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
    /// the first time.
    fn touch(&self) -> Result<u64, StoreError> {
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
        u64::try_from(stat.mtime)
            .map_err(|_| StoreError::BadRecord(format!("the clock znode's mtime {}", stat.mtime)))
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

    /// Every slot record of the space `key`, with its znode version.
    fn read_slots(&self, key: &str) -> Result<HashMap<u64, (Record, i32)>, StoreError> {
        let path = self.space_path(key);
        let answers = self
            .conn
            .run(|c| async move {
                let children = match c.list_children(&path).await {
                    Ok(ch) => ch,
                    Err(zk::Error::NoNode) => return Ok(Vec::new()),
                    Err(e) => return Err(e),
                };
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
                    slots.insert(n, (Record::parse(&data).ok_or_else(bad)?, stat.version));
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
        let path = self.slot_path(key, n);
        let answer = self
            .conn
            .run(|c| async move {
                match c.get_data(&path).await {
                    Ok((data, stat)) => Ok(Some((data, stat.version))),
                    Err(zk::Error::NoNode) => Ok(None),
                    Err(e) => Err(e),
                }
            })
            .map_err(|f| self.err(f))?;
        match answer {
            None => Ok(None),
            Some((data, version)) => {
                Record::parse(&data)
                    .map(|r| Some((r, version)))
                    .ok_or_else(|| {
                        StoreError::BadRecord(format!("znode '{key}/{n}' is not a slot record"))
                    })
            }
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
        let path = self.slot_path(key, n);
        let data = record.to_text().into_bytes();
        let r = self.conn.run(|c| async move {
            match version {
                Some(v) => c.set_data(&path, &data, Some(v)).await.map(|_| ()),
                None => c.create(&path, &data, &persistent()).await.map(|_| ()),
            }
        });
        match r {
            Ok(()) => Ok(true),
            Err(f) if is(&f, zk::Error::BadVersion) || is(&f, zk::Error::NodeExists) => Ok(false),
            // The record went away (an operator deleted it): read again.
            Err(f) if is(&f, zk::Error::NoNode) && version.is_some() => Ok(false),
            Err(f) => Err(self.err(f)),
        }
    }

    /// Reads slot `holder.slot` and checks that `holder` still holds it.
    fn read_held(&self, space: &SlotSpace, holder: &Holder) -> Result<(Record, i32), StoreError> {
        match self.read_slot(space.key(), holder.slot)? {
            Some((r, v)) if r.token == holder.token && r.counter == holder.counter => Ok((r, v)),
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
        self.touch()
    }

    fn claim_within(
        &self,
        space: &SlotSpace,
        req: &ClaimRequest,
        max_hwm_ms: u64,
    ) -> Result<Claim, StoreError> {
        self.check_space(space)?;
        for _ in 0..ROUNDS {
            let now = self.touch()?;
            check_hwm_bound(now, req.window_ms, max_hwm_ms)?;
            let slots = self.read_slots(space.key())?;
            let free = |n: &u64| {
                slots
                    .get(n)
                    .is_none_or(|(r, _)| r.state(now) != SlotState::Held)
            };
            let hwm = |n: &u64| slots.get(n).map_or(0, |(r, _)| r.hwm_ms);
            // The preferred slot; then free slots whose hwm is behind the
            // clock (a slot never used has hwm 0), lowest first; then the
            // other free ones, lowest hwm first.
            let n_slots = space.slots();
            let mut used: Vec<u64> = slots.keys().copied().filter(|&n| n < n_slots).collect();
            used.sort_unstable();
            let mut behind: Vec<u64> = used
                .iter()
                .copied()
                .filter(|n| free(n) && hwm(n) <= now)
                .collect();
            // Enough never-used slots that racing claimers do not all fight
            // over one.
            behind.extend((0..n_slots).filter(|n| !slots.contains_key(n)).take(64));
            behind.sort_unstable();
            let mut ahead: Vec<u64> = used
                .iter()
                .copied()
                .filter(|n| free(n) && hwm(n) > now)
                .collect();
            ahead.sort_by_key(|n| (hwm(n), *n));
            let order: Vec<u64> = req
                .prefer
                .filter(|p| *p < n_slots && free(p))
                .into_iter()
                .chain(behind)
                .chain(ahead)
                .collect();
            if order.is_empty() {
                return Err(StoreError::NoFreeSlot);
            }
            for n in order {
                let (old, version) = match slots.get(&n) {
                    Some((r, v)) => (r.clone(), Some(*v)),
                    None => (Record::default(), None),
                };
                let new = Record {
                    hwm_ms: old.hwm_ms.max(now.saturating_add(req.window_ms)),
                    counter: old.counter + 1,
                    token: new_token(),
                    expires_ms: now.saturating_add(req.ttl_ms),
                };
                if self.write_slot(space.key(), n, &new, version)? {
                    return Ok(Claim {
                        holder: Holder {
                            slot: n,
                            token: new.token,
                            counter: new.counter,
                        },
                        prev_hwm_ms: old.hwm_ms,
                        hwm_ms: new.hwm_ms,
                        expires_ms: Some(new.expires_ms),
                        fence: None,
                    });
                }
            }
        }
        Err(StoreError::Unreachable(format!(
            "lost the race for a free slot {ROUNDS} times"
        )))
    }

    fn renew_within(
        &self,
        space: &SlotSpace,
        holder: &Holder,
        ttl_ms: u64,
        window_ms: u64,
        max_hwm_ms: u64,
    ) -> Result<Renewal, StoreError> {
        for _ in 0..ROUNDS {
            let now = self.touch()?;
            check_hwm_bound(now, window_ms, max_hwm_ms)?;
            let (mut record, version) = self.read_held(space, holder)?;
            record.hwm_ms = record.hwm_ms.max(now.saturating_add(window_ms));
            record.expires_ms = now.saturating_add(ttl_ms);
            if self.write_slot(space.key(), holder.slot, &record, Some(version))? {
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
            let (mut record, version) = self.read_held(space, holder)?;
            record.hwm_ms = last_ms;
            record.token.clear();
            record.expires_ms = 0;
            if self.write_slot(space.key(), holder.slot, &record, Some(version))? {
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
        let now = self.touch()?;
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
            let mut slots: Vec<(u64, (Record, i32))> = self.read_slots(&key)?.into_iter().collect();
            slots.sort_by_key(|(n, _)| *n);
            spaces.push(SpaceRecord {
                key,
                text: String::from_utf8_lossy(&text).into_owned(),
                slots: slots
                    .into_iter()
                    .map(|(n, (r, _))| slot_record(n, &r, now))
                    .collect(),
                marker: None,
            });
        }
        spaces.sort_by(|a, b| a.key.cmp(&b.key));
        Ok((now, spaces))
    }

    /// One conditional write (the version read): the token cleared, `hwm`
    /// kept or reset, the counter kept.
    fn release_slot(
        &self,
        space_key: &str,
        slot: u64,
        force: bool,
        reset_hwm_ms: Option<u64>,
    ) -> Result<SlotRelease, StoreError> {
        check_space_key(space_key)?;
        for _ in 0..ROUNDS {
            let now = self.touch()?;
            let Some((record, version)) = self.read_slot(space_key, slot)? else {
                return Ok(SlotRelease::WasFree);
            };
            let before = slot_record(slot, &record, now);
            match ReleaseStep::of(before.state, force, reset_hwm_ms) {
                ReleaseStep::Nothing => return Ok(SlotRelease::WasFree),
                ReleaseStep::Refuse => return Ok(SlotRelease::Refused(before)),
                ReleaseStep::Write => {}
            }
            let new = Record {
                hwm_ms: reset_hwm_ms.unwrap_or(record.hwm_ms),
                counter: record.counter,
                token: String::new(),
                expires_ms: 0,
            };
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
    let state = r.state(now);
    SlotRecord {
        slot: n,
        state,
        token: r.token.clone(),
        counter: r.counter,
        expires_ms: (state != SlotState::Free).then_some(r.expires_ms),
        hwm_ms: r.hwm_ms,
    }
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

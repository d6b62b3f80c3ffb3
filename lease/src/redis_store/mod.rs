//! The Redis store: one hash per slot, one Lua script per operation.
//!
//! ```text
//! snowmint:lease:{<space key>}:space     string: the space's canonical text (checked on every claim)
//! snowmint:lease:{<space key>}:slot:<n>  hash: token, counter, expires_ms, hwm_ms, epoch
//! snowmint:lease:{<space key>}:marker    hash: server, fence_ms, max_window_ms, max_skew_ms,
//!                                              latency_ms, epoch, cause
//! snowmint:lease:init                    hash: server, fence_ms, max_window_ms, max_skew_ms,
//!                                              latency_ms (`lease init`)
//! ```
//!
//! Every operation (claim, renew, release) is one Lua script, which Redis runs
//! atomically: nothing else runs on the server between its reads and its
//! writes. The scripts read the store clock with `TIME` themselves, so expiry
//! and the reserved `hwm` are decided by the server's clock alone. Records are
//! never deleted and carry no Redis TTL: a free slot has an empty token (or an
//! expiry behind the clock) and keeps its `hwm`. The space key is a hash tag
//! (`{...}`), so all of a space's keys live on one node of a cluster.
//!
//! A returned `hwm` is confirmed by the server Redis is connected to: in its
//! memory, and on disk only as far as its persistence settings go
//! (`appendonly yes` with `appendfsync always` writes it before the reply).
//! The store does not issue `WAIT`: with asynchronous replication a failover
//! can lose a confirmed claim or `hwm`. What it does instead is fail closed
//! after such a loss: the space's marker names the server (`run_id` and
//! `master_replid`) that holds its records; a claim that finds it missing or
//! naming another server fences every slot's `hwm` to at least store time +
//! `redis_max_window_ms` + 2 × `max_skew_ms` + the latency allowance
//! ([`LIMIT_LATENCY_MS`]), above every limit a holder had before the loss,
//! and starts a new epoch. The marker and the init key record those three
//! settings; a claim or renewal that counts with others is refused, and a
//! claim whose server's clock is more than `max_skew_ms` behind the
//! claimer's is refused too (the fence relies on it). Each record carries the
//! epoch it was claimed under; a renewal or release is `Lost` unless the
//! marker names this server with the record's epoch, so a holder whose record
//! a rollback brought back cannot go on (the argument: scripts.rs, CLAIM, and
//! docs/STORES.md, "Redis").

use std::sync::Mutex;
use std::time::Duration;

use redis::{Client, Connection, ErrorKind, RedisError, Script};

use crate::error::LeaseError;
use crate::space::SlotSpace;
use crate::store::listing;
use crate::store::{
    check_space_key, is_space_key, Claim, ClaimRequest, Holder, InitFence, Marker, MarkerState,
    Renewal, SlotRecord, SlotRelease, SlotState, SpaceRecord, Store, StoreError, LIMIT_LATENCY_MS,
};
use crate::store::{RenewRequest, SlotReleaseRequest};
use crate::url::Settings;
use snowmint::FenceCause;

mod scripts;
use scripts::{CLAIM, INIT, PRELUDE, RELEASE, RELEASE_SLOT, RENEW, RESET_SLOT};

/// The widest leased field this store serves: a claim reads up to this many
/// slot records in one script, during which the server does nothing else
/// (a fenced claim reading all 16,384 took 20-75 ms on a loaded 2-core
/// machine; 65,536 reads took 70 ms idle, 2^20 would take over a second).
pub const MAX_SLOTS: u64 = 1 << 14;

/// The key `lease init` writes: which server it vouched for, and its fence.
const INIT_KEY: &str = "snowmint:lease:init";

/// The store in a Redis server (`redis://[user:password@]host[:port][/db]`;
/// `rediss://` needs the client's TLS support, which this build does not
/// have). See the module documentation for the keys.
pub struct RedisStore {
    client: Client,
    name: String,
    /// The password of the URL, scrubbed from every message.
    password: Option<String>,
    timeout: Duration,
    /// `redis_max_window_ms`: the largest window served, and the fence's span.
    max_window_ms: u64,
    /// `max_skew_ms`: twice added to the fence (clocks ahead, then behind).
    skew_ms: u64,
    /// `redis_allow_eviction`.
    allow_eviction: bool,
    /// The connection, opened by the first call and dropped after an error.
    conn: Mutex<Option<Connection>>,
    claim: Script,
    renew: Script,
    release: Script,
    release_slot: Script,
    reset_slot: Script,
    init: Script,
}

crate::store::debug_by_name!(RedisStore, name);

impl RedisStore {
    /// A store at `url` whose every network step (connect, each read and
    /// write) gives up after `timeout_ms`. No I/O: the first call connects.
    /// A URL the client refuses is `invalid_option`.
    /// The other settings are the defaults ([`Settings`]).
    pub fn new(url: &str, timeout_ms: u64) -> Result<RedisStore, LeaseError> {
        Self::with_settings(url, &Settings::with_timeout(timeout_ms))
    }

    /// A store at `url` with the lease URL's settings: `timeout_ms`,
    /// `redis_max_window_ms`, `max_skew_ms` (the fence) and
    /// `redis_allow_eviction`.
    pub fn with_settings(url: &str, settings: &Settings) -> Result<RedisStore, LeaseError> {
        let timeout_ms = settings.timeout_ms;
        let name = crate::url::redact(url);
        let client = Client::open(url).map_err(|e| {
            let mut why = e.to_string();
            if let Some(pw) = password_of(url) {
                why = why.replace(&pw, "***");
            }
            LeaseError::url(format!("{name}: {why}"))
        })?;
        let password = client
            .get_connection_info()
            .redis_settings()
            .password()
            .filter(|p| !p.is_empty())
            .map(str::to_string);
        Ok(RedisStore {
            client,
            name,
            password,
            timeout: Duration::from_millis(timeout_ms.max(1)),
            max_window_ms: settings.redis_max_window_ms,
            skew_ms: settings.max_skew_ms,
            allow_eviction: settings.redis_allow_eviction,
            conn: Mutex::new(None),
            claim: Script::new(&claim_script()),
            renew: Script::new(&format!("{PRELUDE}{RENEW}")),
            release: Script::new(&format!("{PRELUDE}{RELEASE}")),
            release_slot: Script::new(&format!("{PRELUDE}{RELEASE_SLOT}")),
            reset_slot: Script::new(&format!("{PRELUDE}{RESET_SLOT}")),
            init: Script::new(&format!("{PRELUDE}{INIT}")),
        })
    }

    /// Runs `f` on the connection (opened first if there is none); any error
    /// drops the connection, so the next call starts on a fresh one.
    fn with_conn<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> redis::RedisResult<T>,
    ) -> Result<T, StoreError> {
        let mut guard = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        let conn = match guard.as_mut() {
            Some(c) => c,
            None => {
                let c = self
                    .client
                    .get_connection_with_timeout(self.timeout)
                    .and_then(|c| {
                        c.set_read_timeout(Some(self.timeout))?;
                        c.set_write_timeout(Some(self.timeout))?;
                        Ok(c)
                    })
                    .map_err(|e| self.error("cannot connect", &e))?;
                guard.insert(c)
            }
        };
        f(conn).map_err(|e| {
            *guard = None;
            if e.code() == Some("WRONGTYPE") {
                return StoreError::BadRecord(self.scrub(format!("{e}")));
            }
            self.error("request failed", &e)
        })
    }

    /// `Unreachable` naming what happened, without the password.
    fn error(&self, what: &str, e: &RedisError) -> StoreError {
        let auth = e.kind() == ErrorKind::AuthenticationFailed
            || matches!(e.code(), Some("NOAUTH" | "WRONGPASS"));
        let why = if auth {
            format!("authentication failed ({e})")
        } else if e.is_connection_refusal() {
            format!("{what}: connection refused ({e})")
        } else if e.is_timeout() {
            format!(
                "{what}: timed out after {} ms ({e})",
                self.timeout.as_millis()
            )
        } else {
            format!("{what}: {e}")
        };
        StoreError::Unreachable(self.scrub(why))
    }

    fn scrub(&self, text: String) -> String {
        match &self.password {
            Some(pw) => text.replace(pw.as_str(), "***"),
            None => text,
        }
    }

    /// The keys of `space` start with this (a hash tag: one cluster node).
    fn base(space: &SlotSpace) -> String {
        format!("snowmint:lease:{{{}}}", space.key())
    }

    fn slot_key(space: &SlotSpace, slot: u64) -> String {
        format!("{}:slot:{slot}", Self::base(space))
    }

    fn marker_key(space: &SlotSpace) -> String {
        format!("{}:marker", Self::base(space))
    }

    /// Every key matching `pattern` (`SCAN`, so the server is never blocked
    /// for long).
    fn scan(&self, pattern: &str) -> Result<Vec<String>, StoreError> {
        let mut cursor: u64 = 0;
        let mut keys = Vec::new();
        loop {
            let (next, batch): (u64, Vec<String>) = self.with_conn(|c| {
                redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(pattern)
                    .arg("COUNT")
                    .arg(1000)
                    .query(c)
            })?;
            keys.extend(batch);
            if next == 0 {
                break;
            }
            cursor = next;
        }
        keys.sort_unstable();
        keys.dedup();
        Ok(keys)
    }

    /// The refusals every script may answer, as errors naming the setting.
    fn refusal(&self, reply: &[String]) -> Option<StoreError> {
        let arg = reply.get(1).map_or("?", String::as_str);
        Some(StoreError::Refused(match reply.first()?.as_str() {
            "window" => format!(
                "window_ms is above redis_max_window_ms ({arg}): the fence after a data loss \
                 must cover every holder's reservation"
            ),
            "eviction" => format!(
                "the server's maxmemory-policy is {arg}, which may evict the lease records \
                 (they have no TTL): set it to noeviction or a volatile-* policy, or add \
                 redis_allow_eviction=true to the URL"
            ),
            "noidentity" => "INFO shows no run_id or master_replid: the store cannot tell \
                             whether the server lost its data"
                .to_string(),
            "toofar" => crate::store::hwm_refusal(
                num(reply, 1).ok()?,
                num(reply, 2).ok()?,
                num(reply, 3).ok()?,
            ),
            "settings" => {
                let at = |i: usize| match reply.get(i).map(String::as_str) {
                    None | Some("") => "(none)",
                    Some(v) => v,
                };
                format!(
                    "the space's marker records redis_max_window_ms={}, max_skew_ms={}, \
                     latency allowance {} ms; this holder counts redis_max_window_ms={}, \
                     max_skew_ms={}, latency allowance {} ms: every holder of a space must use \
                     the same (the fence after a data loss is counted with them)",
                    at(1),
                    at(2),
                    at(3),
                    at(4),
                    at(5),
                    at(6)
                )
            }
            "tooearly" => format!(
                "the server's clock reads {} ms, below this claim's lower bound {} ms (the \
                 claimer's clock when it sent the claim - max_skew_ms): the server that ran \
                 the claim is not the one whose clock the skew check read, or its clock is \
                 more than max_skew_ms behind; nothing was written",
                num(reply, 1).ok()?,
                num(reply, 2).ok()?
            ),
            _ => return None,
        }))
    }

    /// The server's identity as the scripts compute it (`run_id` and
    /// `master_replid` from INFO), `None` if INFO does not show them.
    fn identity(&self) -> Result<Option<String>, StoreError> {
        let field = |section: &str, name: &str| -> Result<Option<String>, StoreError> {
            let info: String = self.with_conn(|c| redis::cmd("INFO").arg(section).query(c))?;
            Ok(info.lines().find_map(|l| {
                l.strip_prefix(name)?
                    .strip_prefix(':')
                    .map(|v| v.trim().to_string())
            }))
        };
        Ok(
            match (
                field("server", "run_id")?,
                field("replication", "master_replid")?,
            ) {
                (Some(run), Some(repl)) => Some(format!("{run}/{repl}")),
                _ => None,
            },
        )
    }

    /// The marker of space `key` as the claim script judges it: present
    /// only if it names `server` (this one) and has an epoch.
    fn marker(&self, key: &str, server: Option<&str>) -> Result<Marker, StoreError> {
        let m: Vec<Option<String>> = self.with_conn(|c| {
            redis::cmd("HMGET")
                .arg(format!("snowmint:lease:{{{key}}}:marker"))
                .arg(&["server", "fence_ms", "epoch"])
                .query(c)
        })?;
        let get = |i: usize| m.get(i).cloned().flatten().filter(|v| !v.is_empty());
        let (named, fence, epoch) = (get(0), get(1), get(2));
        let state = match named.as_deref() {
            Some(n) if Some(n) == server && epoch.is_some() => MarkerState::Present,
            Some(n) if Some(n) != server => MarkerState::OtherServer,
            // None, or this server without an epoch: the next claim fences.
            _ => MarkerState::Missing,
        };
        Ok(Marker {
            state,
            server: named,
            fence_ms: fence.and_then(|f| f.parse().ok()).unwrap_or(0),
        })
    }

    fn lost(holder: &Holder, reply: &[String]) -> StoreError {
        if reply.get(2).map(String::as_str) == Some("epoch") {
            return StoreError::Lost(format!(
                "slot {}: the store lost data since this claim (Redis restarted, failed over \
                 or was wiped; its record may be an old copy): its space's marker names another \
                 server or epoch",
                holder.slot
            ));
        }
        match reply.get(1).map(String::as_str) {
            Some("0") => StoreError::Lost(format!(
                "slot {}'s record is gone from the store (were Redis's data lost?)",
                holder.slot
            )),
            Some(c) => StoreError::Lost(format!(
                "slot {} has another holder (claim counter {c})",
                holder.slot
            )),
            None => StoreError::Lost(format!("slot {} has another holder", holder.slot)),
        }
    }
}

/// The password of a `scheme://user:password@host` URL, decoded as the client
/// decodes it (for scrubbing messages about a URL the client refused).
fn password_of(url: &str) -> Option<String> {
    let pw = crate::url::Authority::of_url(url)?.1.password?;
    (!pw.is_empty()).then(|| pw.to_string())
}

/// The scripts' `max_hwm` argument: empty for no bound.
fn bound_arg(max_hwm_ms: u64) -> String {
    if max_hwm_ms == u64::MAX {
        String::new()
    } else {
        max_hwm_ms.to_string()
    }
}

/// A number the script wrote.
fn num(reply: &[String], i: usize) -> Result<u64, StoreError> {
    reply
        .get(i)
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| StoreError::BadRecord(format!("unexpected script reply {reply:?}")))
}

fn bad_reply(reply: &[String]) -> StoreError {
    StoreError::BadRecord(format!("unexpected script reply {reply:?}"))
}

impl Store for RedisStore {
    fn describe(&self) -> String {
        self.name.clone()
    }

    /// The server's `TIME`.
    fn now_ms(&self) -> Result<u64, StoreError> {
        let (secs, micros): (u64, u64) = self.with_conn(|c| redis::cmd("TIME").query(c))?;
        Ok(secs * 1000 + micros / 1000)
    }

    /// Both bounds (`max_hwm_ms`, `min_store_ms`) are checked in the claim's
    /// script against the server's `TIME`, before the script writes
    /// anything: the lower one catches a claim that reached another server
    /// than the skew check (a name or address that moved between the two
    /// calls) whose clock is behind, on which the fence after a loss would
    /// be counted too low.
    fn claim(&self, space: &SlotSpace, req: &ClaimRequest) -> Result<Claim, StoreError> {
        let (min_store_ms, max_hwm_ms) = (req.min_store_ms, req.max_hwm_ms);
        if space.slots() > MAX_SLOTS {
            return Err(StoreError::Refused(format!(
                "the leased field '{}' has {} values; the Redis store serves at most {MAX_SLOTS} \
                 (14 bits: a claim reads them all in one script, blocking the server)",
                space.leased_field(),
                space.slots()
            )));
        }
        let token = crate::slot::new_token();
        let prefer = req.prefer.map_or(-1, |p| i64::try_from(p).unwrap_or(-1));
        let reply: Vec<String> = self.with_conn(|c| {
            self.claim
                .key(Self::base(space))
                .key(INIT_KEY)
                .arg(space.text())
                .arg(space.slots())
                .arg(prefer)
                .arg(req.ttl_ms)
                .arg(req.window_ms)
                .arg(&token)
                .arg(self.max_window_ms)
                .arg(self.skew_ms)
                .arg(if self.allow_eviction { "1" } else { "0" })
                .arg(bound_arg(max_hwm_ms))
                .arg(LIMIT_LATENCY_MS)
                .arg(if min_store_ms == 0 {
                    String::new()
                } else {
                    min_store_ms.to_string()
                })
                .invoke(c)
        })?;
        if let Some(e) = self.refusal(&reply) {
            return Err(e);
        }
        match reply.first().map(String::as_str) {
            Some("claimed") => Ok(Claim {
                holder: Holder {
                    slot: num(&reply, 1)?,
                    token,
                    counter: num(&reply, 2)?,
                },
                prev_hwm_ms: num(&reply, 3)?,
                hwm_ms: num(&reply, 4)?,
                expires_ms: Some(num(&reply, 5)?),
                fence: match reply.get(7).map(String::as_str) {
                    Some("forgot") => Some(FenceCause::StoreForgot),
                    Some("changed") => Some(FenceCause::StoreChanged),
                    _ => None,
                },
            }),
            Some("full") => Err(StoreError::NoFreeSlot),
            Some("badspace") => Err(StoreError::BadRecord(format!(
                "{}:space: {}",
                Self::base(space),
                reply.get(1).map_or("?", String::as_str)
            ))),
            Some("badrecord") => Err(StoreError::BadRecord(format!(
                "{}:slot:{} is not a slot record: {}",
                Self::base(space),
                reply.get(1).map_or("?", String::as_str),
                reply.get(2).map_or("?", String::as_str)
            ))),
            _ => Err(bad_reply(&reply)),
        }
    }

    fn renew_within(&self, space: &SlotSpace, r: &RenewRequest<'_>) -> Result<Renewal, StoreError> {
        let (holder, ttl_ms, window_ms, max_hwm_ms) = r.parts();
        let key = Self::slot_key(space, holder.slot);
        let reply: Vec<String> = self.with_conn(|c| {
            self.renew
                .key(&key)
                .key(Self::marker_key(space))
                .arg(&holder.token)
                .arg(holder.counter)
                .arg(ttl_ms)
                .arg(window_ms)
                .arg(self.max_window_ms)
                .arg(bound_arg(max_hwm_ms))
                .arg(self.skew_ms)
                .arg(LIMIT_LATENCY_MS)
                .invoke(c)
        })?;
        if let Some(e) = self.refusal(&reply) {
            return Err(e);
        }
        match reply.first().map(String::as_str) {
            Some("ok") => Ok(Renewal {
                hwm_ms: num(&reply, 1)?,
                expires_ms: Some(num(&reply, 2)?),
            }),
            Some("lost") => Err(Self::lost(holder, &reply)),
            Some("badrecord") => Err(StoreError::BadRecord(format!(
                "{key} is not a slot record: {}",
                reply.get(1).map_or("?", String::as_str)
            ))),
            _ => Err(bad_reply(&reply)),
        }
    }

    fn release(&self, space: &SlotSpace, holder: &Holder, last_ms: u64) -> Result<(), StoreError> {
        let key = Self::slot_key(space, holder.slot);
        let reply: Vec<String> = self.with_conn(|c| {
            self.release
                .key(&key)
                .key(Self::marker_key(space))
                .arg(&holder.token)
                .arg(holder.counter)
                .arg(last_ms)
                .invoke(c)
        })?;
        match reply.first().map(String::as_str) {
            Some("ok") => Ok(()),
            Some("lost") => Err(Self::lost(holder, &reply)),
            Some("badrecord") => Err(StoreError::BadRecord(format!(
                "{key} is not a slot record: {}",
                reply.get(1).map_or("?", String::as_str)
            ))),
            _ => Err(bad_reply(&reply)),
        }
    }

    /// Writes the init key: spaces first claimed later on this server (same
    /// `run_id` and `master_replid`) need no fence of their own. Kept if it
    /// already names this server with settings that cover this URL's; else
    /// written with a fence at store time + `redis_max_window_ms` + 2 ×
    /// `max_skew_ms` + the latency allowance, as a claim's (a wipe just
    /// before may have left live holders), and those settings (see
    /// `INIT`). Refuses a server that may evict keys without a TTL, unless
    /// `redis_allow_eviction` (claims then trust no init key).
    fn init(&self) -> Result<(), StoreError> {
        self.init_fence().map(|_| ())
    }

    /// The init key's fence and the store's clock (see `INIT`).
    fn init_fence(&self) -> Result<Option<InitFence>, StoreError> {
        let reply: Vec<String> = self.with_conn(|c| {
            self.init
                .key(INIT_KEY)
                .arg(self.max_window_ms)
                .arg(self.skew_ms)
                .arg(LIMIT_LATENCY_MS)
                .arg(if self.allow_eviction { "1" } else { "0" })
                .invoke(c)
        })?;
        if let Some(e) = self.refusal(&reply) {
            return Err(e);
        }
        match reply.first().map(String::as_str) {
            Some("kept" | "new") => Ok(Some(InitFence {
                fence_ms: num(&reply, 1)?,
                now_ms: num(&reply, 2)?,
            })),
            _ => Err(bad_reply(&reply)),
        }
    }

    /// `SCAN`s for the spaces' text keys and each space's slot hashes (not
    /// one atomic read: each slot is as it was when read, by `TIME` before).
    fn list(&self) -> Result<(u64, Vec<SpaceRecord>), StoreError> {
        let now = self.now_ms()?;
        let server = self.identity()?;
        let space_keys = self.scan("snowmint:lease:{v1-*}:space")?;
        let mut spaces = Vec::new();
        for text_key in space_keys {
            let Some(key) = text_key
                .strip_prefix("snowmint:lease:{")
                .and_then(|k| k.strip_suffix("}:space"))
                .filter(|k| is_space_key(k))
            else {
                continue;
            };
            let text: Option<String> =
                self.with_conn(|c| redis::cmd("GET").arg(&text_key).query(c))?;
            let Some(text) = text else { continue };
            let prefix = format!("snowmint:lease:{{{key}}}:slot:");
            let mut numbered: Vec<(u64, String)> = self
                .scan(&format!("{prefix}*"))?
                .into_iter()
                .filter_map(|k| Some((k.strip_prefix(&prefix)?.parse().ok()?, k)))
                .collect();
            numbered.sort_unstable();
            let mut slots = Vec::new();
            for (n, k) in numbered {
                let h: Vec<Option<String>> = self.with_conn(|c| {
                    redis::cmd("HMGET")
                        .arg(&k)
                        .arg(&["token", "counter", "expires_ms", "hwm_ms"])
                        .query(c)
                })?;
                if h.iter().all(Option::is_none) {
                    // Deleted since the SCAN (a namespace removed meanwhile):
                    // not there, not a bad record.
                    continue;
                }
                let bad = || StoreError::BadRecord(format!("{k} is not a slot record"));
                let field = |i: usize| h.get(i).cloned().flatten().ok_or_else(bad);
                let number = |i: usize| field(i)?.parse::<u64>().map_err(|_| bad());
                let token = field(0)?;
                let (counter, expires, hwm) = (number(1)?, number(2)?, number(3)?);
                slots.push(SlotRecord::expiring(n, token, counter, expires, hwm, now));
            }
            let marker = self.marker(key, server.as_deref())?;
            spaces.push(SpaceRecord {
                key: key.to_string(),
                text,
                slots,
                marker: Some(marker),
            });
        }
        Ok(listing(now, spaces))
    }

    /// One Lua script: decides by `TIME` and clears the token (`hwm` kept,
    /// or set by `RESET_SLOT` when asked). The record's epoch is not
    /// checked: freeing a record from before a data loss lowers nothing (a
    /// claim counts its `hwm` as at least the fence).
    fn release_slot(&self, req: &SlotReleaseRequest<'_>) -> Result<SlotRelease, StoreError> {
        let (space_key, slot, force, reset_hwm_ms) = req.parts();
        check_space_key(space_key)?;
        let key = format!("snowmint:lease:{{{space_key}}}:slot:{slot}");
        let reply: Vec<String> = self.with_conn(|c| match reset_hwm_ms {
            Some(hwm) => self.reset_slot.key(&key).arg(hwm).invoke(c),
            None => self
                .release_slot
                .key(&key)
                .arg(if force { "1" } else { "0" })
                .invoke(c),
        })?;
        let record = |state| -> Result<SlotRecord, StoreError> {
            Ok(SlotRecord {
                slot,
                state,
                token: reply.get(4).cloned().unwrap_or_default(),
                counter: num(&reply, 1)?,
                expires_ms: Some(num(&reply, 2)?),
                hwm_ms: num(&reply, 3)?,
            })
        };
        let state = match reply.first().map(String::as_str) {
            Some("free") => return Ok(SlotRelease::WasFree),
            Some("idle") => SlotState::Free,
            Some("held") => SlotState::Held,
            Some("expired") => SlotState::Expired,
            Some("badrecord") => {
                return Err(StoreError::BadRecord(format!(
                    "{key} is not a slot record: {}",
                    reply.get(1).map_or("?", String::as_str)
                )))
            }
            _ => return Err(bad_reply(&reply)),
        };
        let record = record(state)?;
        match reply.get(5).map(String::as_str) {
            Some("1") => Ok(SlotRelease::Released(record)),
            Some("0") => Ok(SlotRelease::Refused(record)),
            _ => Err(bad_reply(&reply)),
        }
    }
}

/// The claim script; the fault harness's control build (Cargo feature, off
/// by default) sets the failover fence to zero once it is computed, to prove
/// its checker finds the duplicates that follow.
fn claim_script() -> String {
    let script = format!("{PRELUDE}{CLAIM}");
    if crate::removed(crate::Control::NoRedisFence) {
        let at = "\n-- A slot's hwm as this claim counts it";
        assert!(script.contains(at), "the claim script changed");
        return script.replacen(at, &format!("\nfence = 0{at}"), 1);
    }
    script
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_io_in_new_and_refused_urls() {
        // Nothing listens on port 1: `new` must not notice.
        let s = RedisStore::new("redis://:secret@127.0.0.1:1/3", 100).unwrap();
        assert_eq!(s.describe(), "redis://:***@127.0.0.1:1/3");
        let e = RedisStore::new("redis://:secret@127.0.0.1:1/notadb", 100).unwrap_err();
        assert_eq!(e.code(), "invalid_option");
        assert!(!e.to_string().contains("secret"), "{e}");
        assert_eq!(
            password_of("redis://u:p%40w@h:1/0").as_deref(),
            Some("p%40w")
        );
        assert_eq!(password_of("redis://h:1"), None);
    }

    #[test]
    fn closed_port_is_unreachable_with_the_cause() {
        let s = RedisStore::new("redis://127.0.0.1:1", 2000).unwrap();
        match s.now_ms() {
            Err(StoreError::Unreachable(m)) => {
                assert!(m.contains("connection refused"), "{m}")
            }
            other => panic!("{other:?}"),
        }
    }
}

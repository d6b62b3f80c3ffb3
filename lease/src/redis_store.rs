//! The Redis store: one hash per slot, one Lua script per operation.
//!
//! ```text
//! snowmint:lease:{<space key>}:space     string: the space's canonical text (checked on every claim)
//! snowmint:lease:{<space key>}:slot:<n>  hash: token, counter, expires_ms, hwm_ms
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
//! can lose a confirmed claim or `hwm` (docs/SEMANTICS.md, "The Redis store").

use std::sync::Mutex;
use std::time::Duration;

use redis::{Client, Connection, ErrorKind, RedisError, Script};

use crate::error::LeaseError;
use crate::space::SlotSpace;
use crate::store::{
    check_space_key, is_space_key, Claim, ClaimRequest, Holder, Renewal, SlotRecord, SlotRelease,
    SlotState, SpaceRecord, Store, StoreError,
};

/// Shared head of the scripts: the server's clock in ms (`now`), and numbers
/// written as integers (a Lua number would become `1.7e+12`-style text).
const PRELUDE: &str = r"
if redis.replicate_commands then pcall(redis.replicate_commands) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function int(n) return string.format('%.0f', n) end
-- A slot's record: nil (bad), {used=false} (never claimed), or its fields.
local function read(key)
  local h = redis.pcall('HMGET', key, 'token', 'counter', 'expires_ms', 'hwm_ms')
  if h.err then return nil, h.err end
  if not h[1] and not h[2] and not h[3] and not h[4] then
    return {used = false, token = '', counter = 0, expires = 0, hwm = 0}
  end
  local counter, expires, hwm = tonumber(h[2]), tonumber(h[3]), tonumber(h[4])
  if type(h[1]) ~= 'string' or not counter or not expires or not hwm then
    return nil, 'fields token, counter, expires_ms, hwm_ms expected'
  end
  return {used = true, token = h[1], counter = counter, expires = expires, hwm = hwm}
end
";

/// KEYS[1]: the space's key prefix. ARGV: text, slots, prefer (-1: none),
/// ttl_ms, window_ms, token. Returns {'claimed', slot, counter, prev_hwm, hwm,
/// expires}, {'full'}, {'badspace'} or {'badrecord', slot, why}.
const CLAIM: &str = r"
local base = KEYS[1]
local text, slots, prefer = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local ttl, window, token = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local stored = redis.pcall('GET', base .. ':space')
if type(stored) == 'table' then return {'badspace', stored.err or 'not a string'} end
if not stored then
  redis.call('SET', base .. ':space', text)
elseif stored ~= text then
  return {'badspace', 'another slot space is stored under its key'}
end
local pick, rec
local function free(r) return r.token == '' or r.expires <= now end
if prefer >= 0 and prefer < slots then
  local r, why = read(base .. ':slot:' .. prefer)
  if not r then return {'badrecord', int(prefer), why} end
  if free(r) then pick, rec = prefer, r end
end
if not pick then
  -- In order, the first free slot whose hwm is behind the clock (a slot
  -- never used has hwm 0); else the free slot with the lowest hwm.
  local ahead, ahead_rec
  for i = 0, slots - 1 do
    local r, why = read(base .. ':slot:' .. i)
    if not r then return {'badrecord', int(i), why} end
    if free(r) then
      if r.hwm <= now then pick, rec = i, r; break end
      if not ahead or r.hwm < ahead_rec.hwm then ahead, ahead_rec = i, r end
    end
  end
  if not pick and ahead then pick, rec = ahead, ahead_rec end
end
if not pick then return {'full'} end
local counter = rec.counter + 1
local expires = now + ttl
local hwm = math.max(rec.hwm, now + window)
redis.call('HSET', base .. ':slot:' .. pick, 'token', token, 'counter', int(counter),
  'expires_ms', int(expires), 'hwm_ms', int(hwm))
return {'claimed', int(pick), int(counter), int(rec.hwm), int(hwm), int(expires)}
";

/// KEYS[1]: the slot's hash. ARGV: token, counter, ttl_ms, window_ms.
/// Returns {'ok', hwm, expires}, {'lost', counter} or {'badrecord', why}.
const RENEW: &str = r"
local r, why = read(KEYS[1])
if not r then return {'badrecord', why} end
if r.token ~= ARGV[1] or r.counter ~= tonumber(ARGV[2]) then
  return {'lost', int(r.counter)}
end
local expires = now + tonumber(ARGV[3])
local hwm = math.max(r.hwm, now + tonumber(ARGV[4]))
redis.call('HSET', KEYS[1], 'expires_ms', int(expires), 'hwm_ms', int(hwm))
return {'ok', int(hwm), int(expires)}
";

/// KEYS[1]: the slot's hash. ARGV: token, counter, last_ms.
/// Returns {'ok'}, {'lost', counter} or {'badrecord', why}.
const RELEASE: &str = r"
local r, why = read(KEYS[1])
if not r then return {'badrecord', why} end
if r.token ~= ARGV[1] or r.counter ~= tonumber(ARGV[2]) then
  return {'lost', int(r.counter)}
end
redis.call('HSET', KEYS[1], 'token', '', 'expires_ms', int(now), 'hwm_ms', ARGV[3])
return {'ok'}
";

/// KEYS[1]: the slot's hash. ARGV: force ('1' or '0'). Frees the slot if it
/// is expired, or held and `force`; keeps `hwm`. Returns {'free'},
/// {'held'|'expired', counter, expires, hwm, token, done ('1': freed)} or
/// {'badrecord', why}.
const RELEASE_SLOT: &str = r"
local r, why = read(KEYS[1])
if not r then return {'badrecord', why} end
if not r.used or r.token == '' then return {'free'} end
local state = 'held'
if r.expires <= now then state = 'expired' end
if state == 'held' and ARGV[1] ~= '1' then
  return {state, int(r.counter), int(r.expires), int(r.hwm), r.token, '0'}
end
redis.call('HSET', KEYS[1], 'token', '', 'expires_ms', int(now))
return {state, int(r.counter), int(r.expires), int(r.hwm), r.token, '1'}
";

/// The store in a Redis server (`redis://[user:password@]host[:port][/db]`;
/// `rediss://` needs the client's TLS support, which this build does not
/// have). See the module documentation for the keys.
pub struct RedisStore {
    client: Client,
    name: String,
    /// The password of the URL, scrubbed from every message.
    password: Option<String>,
    timeout: Duration,
    /// The connection, opened by the first call and dropped after an error.
    conn: Mutex<Option<Connection>>,
    claim: Script,
    renew: Script,
    release: Script,
    release_slot: Script,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("url", &self.name)
            .finish_non_exhaustive()
    }
}

impl RedisStore {
    /// A store at `url` whose every network step (connect, each read and
    /// write) gives up after `timeout_ms`. No I/O: the first call connects.
    /// A URL the client refuses is `invalid_option`.
    pub fn new(url: &str, timeout_ms: u64) -> Result<RedisStore, LeaseError> {
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
            conn: Mutex::new(None),
            claim: Script::new(&format!("{PRELUDE}{CLAIM}")),
            renew: Script::new(&format!("{PRELUDE}{RENEW}")),
            release: Script::new(&format!("{PRELUDE}{RELEASE}")),
            release_slot: Script::new(&format!("{PRELUDE}{RELEASE_SLOT}")),
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

    fn lost(holder: &Holder, reply: &[String]) -> StoreError {
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
    let rest = url.split_once("://")?.1;
    let authority = &rest[..rest.find(['/', '?']).unwrap_or(rest.len())];
    let userinfo = authority.rsplit_once('@')?.0;
    let pw = userinfo.split_once(':')?.1;
    (!pw.is_empty()).then(|| pw.to_string())
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

    fn claim(&self, space: &SlotSpace, req: &ClaimRequest) -> Result<Claim, StoreError> {
        let token = crate::file::new_token();
        let prefer = req.prefer.map_or(-1, |p| i64::try_from(p).unwrap_or(-1));
        let reply: Vec<String> = self.with_conn(|c| {
            self.claim
                .key(Self::base(space))
                .arg(space.text())
                .arg(space.slots())
                .arg(prefer)
                .arg(req.ttl_ms)
                .arg(req.window_ms)
                .arg(&token)
                .invoke(c)
        })?;
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

    fn renew(
        &self,
        space: &SlotSpace,
        holder: &Holder,
        ttl_ms: u64,
        window_ms: u64,
    ) -> Result<Renewal, StoreError> {
        let key = Self::slot_key(space, holder.slot);
        let reply: Vec<String> = self.with_conn(|c| {
            self.renew
                .key(&key)
                .arg(&holder.token)
                .arg(holder.counter)
                .arg(ttl_ms)
                .arg(window_ms)
                .invoke(c)
        })?;
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

    /// Redis needs nothing created: checks that the server answers (`PING`).
    fn init(&self) -> Result<(), StoreError> {
        let pong: String = self.with_conn(|c| redis::cmd("PING").query(c))?;
        if pong == "PONG" {
            Ok(())
        } else {
            Err(StoreError::BadRecord(format!("PING answered '{pong}'")))
        }
    }

    /// `SCAN`s for the spaces' text keys and each space's slot hashes (not
    /// one atomic read: each slot is as it was when read, by `TIME` before).
    fn list(&self) -> Result<(u64, Vec<SpaceRecord>), StoreError> {
        let now = self.now_ms()?;
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
                let bad = || StoreError::BadRecord(format!("{k} is not a slot record"));
                let field = |i: usize| h.get(i).cloned().flatten().ok_or_else(bad);
                let number = |i: usize| field(i)?.parse::<u64>().map_err(|_| bad());
                let token = field(0)?;
                let (counter, expires, hwm) = (number(1)?, number(2)?, number(3)?);
                let state = if token.is_empty() {
                    SlotState::Free
                } else if expires <= now {
                    SlotState::Expired
                } else {
                    SlotState::Held
                };
                slots.push(SlotRecord {
                    slot: n,
                    state,
                    token,
                    counter,
                    expires_ms: (state != SlotState::Free).then_some(expires),
                    hwm_ms: hwm,
                });
            }
            spaces.push(SpaceRecord {
                key: key.to_string(),
                text,
                slots,
            });
        }
        spaces.sort_by(|a, b| a.key.cmp(&b.key));
        Ok((now, spaces))
    }

    /// One Lua script: decides by `TIME` and clears the token (`hwm` kept).
    fn release_slot(
        &self,
        space_key: &str,
        slot: u64,
        force: bool,
    ) -> Result<SlotRelease, StoreError> {
        check_space_key(space_key)?;
        let key = format!("snowmint:lease:{{{space_key}}}:slot:{slot}");
        let reply: Vec<String> = self.with_conn(|c| {
            self.release_slot
                .key(&key)
                .arg(if force { "1" } else { "0" })
                .invoke(c)
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

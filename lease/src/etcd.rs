//! etcd v3, through its JSON gateway (`/v3/...`) over plain HTTP.
//!
//! ```text
//! snowmint/lease/<space key>/space            the space's canonical text (checked on every claim)
//! snowmint/lease/<space key>/slot/<n>/state   hwm_ms, counter, token: no etcd lease, never deleted
//! snowmint/lease/<space key>/slot/<n>/holder  "<token> <counter>", attached to the holder's etcd lease
//! ```
//!
//! The holder key is the claim: it exists while its etcd lease lives, and etcd
//! deletes it when the lease expires (etcd's own timer, on its leader) or is
//! revoked. A claim is one transaction: *if the holder key is absent and the
//! state key is unchanged since it was read* (`create_revision == 0`, equal
//! `mod_revision`), put the holder key with a fresh lease and the state with
//! the counter + 1 and the raised `hwm`. A renewal keeps the lease alive and
//! raises `hwm` in a transaction conditional on the holder key's value (token
//! and counter) and the state's `mod_revision`; a release, under the same
//! conditions, writes `hwm` = last, deletes the holder key, then revokes the
//! lease. etcd answers a transaction after a quorum has committed it to its
//! write-ahead log, so a returned `hwm` is durable.
//!
//! etcd has no clock API: [`EtcdStore::now_ms`] is the etcd member's clock as
//! its HTTP `Date` headers show it (whole seconds), narrowed to milliseconds
//! over the calls made (see [`Calibration`]). Safety does not depend on it:
//! expiry is etcd's lease timer, claims are exclusive by the transaction, and
//! a clock only decides how far ahead a reservation reaches.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use serde_json::{json, Value};

use crate::error::LeaseError;
use crate::file::State;
use crate::file::{new_token, system_ms};
use crate::space::SlotSpace;
use crate::store::{
    check_space_key, is_space_key, Claim, ClaimRequest, Holder, Renewal, SlotRecord, SlotRelease,
    SlotState, SpaceRecord, Store, StoreError,
};

/// Where every key lives.
const ROOT: &str = "snowmint/lease/";

/// How many times a call re-reads and tries again after losing a race on a
/// slot's state (another claimer, or a renewal of ours that the driver gave up
/// on and that completed later). Each lost race means another call won.
const ROUNDS: usize = 64;

/// A lease store on an etcd v3 cluster: see the module documentation.
pub struct EtcdStore {
    /// `http://host:port`, without user information.
    base: String,
    /// How messages name the store (`etcd://host:port`, no password).
    name: String,
    /// `(user, password)` from `etcd://user:password@host:port`.
    credentials: Option<(String, String)>,
    /// The authentication token, fetched on first use and again when etcd
    /// says it is no longer valid.
    token: Mutex<Option<String>>,
    /// Keeps connections (and opens a new one after an error); every call
    /// is bounded by `timeout_ms` in all (connect, send, receive).
    agent: ureq::Agent,
    timeout_ms: u64,
    clock: Mutex<Calibration>,
}

impl std::fmt::Debug for EtcdStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdStore")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// The offset of the etcd member's clock from the local one, from the HTTP
/// `Date` headers of its answers. A header stamped during a call that ran
/// from local `t0` to `t1` with second `D` says: offset in `[D*1000 - t1,
/// D*1000 + 999 - t0]`. The intervals of successive calls are intersected,
/// which narrows the estimate towards the millisecond; an empty intersection
/// (a clock was stepped) starts again from the newest call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Calibration {
    /// `(lo, hi)`, inclusive; `None` before the first answer.
    bounds: Option<(i64, i64)>,
}

impl Calibration {
    fn sample(&mut self, date_ms: i64, t0: i64, t1: i64) {
        let (a, b) = (date_ms - t1, date_ms + 999 - t0);
        self.bounds = Some(match self.bounds {
            Some((lo, hi)) if lo.max(a) <= hi.min(b) => (lo.max(a), hi.min(b)),
            _ => (a, b),
        });
    }

    fn offset(&self) -> Option<i64> {
        self.bounds.map(|(lo, hi)| lo + (hi - lo) / 2)
    }
}

/// A key as read: its value and the revisions the transactions compare.
#[derive(Clone, Debug, Default)]
struct Kv {
    value: String,
    mod_revision: i64,
    lease: i64,
}

/// One slot as read: its state (`None`: never used) and its holder key.
#[derive(Clone, Debug, Default)]
struct Slot {
    state: Option<(State, Kv)>,
    holder: Option<Kv>,
}

impl Slot {
    fn hwm_ms(&self) -> u64 {
        self.state.as_ref().map_or(0, |(s, _)| s.hwm_ms)
    }
}

fn b64(s: &str) -> String {
    B64.encode(s.as_bytes())
}

/// An int64 of the gateway's JSON: a string, or absent for 0.
fn int(v: &Value) -> i64 {
    match v {
        Value::String(s) => s.parse().unwrap_or(0),
        Value::Number(n) => n.as_i64().unwrap_or(0),
        _ => 0,
    }
}

fn holder_value(token: &str, counter: u64) -> String {
    format!("{token} {counter}")
}

/// `Unreachable` with what failed and why.
fn unreachable(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Unreachable(format!("{what}: {e}"))
}

/// Seconds since 1970 of an HTTP date (`Mon, 23 Nov 2026 22:58:37 GMT`).
fn parse_http_date(s: &str) -> Option<i64> {
    let mut it = s.split_whitespace().skip(1);
    let day: i64 = it.next()?.parse().ok()?;
    let month_name = it.next()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| *m == month_name)? as i64
        + 1;
    let year: i64 = it.next()?.parse().ok()?;
    let mut hms = it.next()?.split(':').map(|x| x.parse::<i64>().ok());
    let (h, m, sec) = (hms.next()??, hms.next()??, hms.next()??);
    if it.next()? != "GMT" {
        return None;
    }
    // Days from civil (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + m * 60 + sec)
}

impl EtcdStore {
    /// A store on the etcd member at `endpoint` (`http://host:port`, or
    /// `http://user:password@host:port` with authentication). No I/O here:
    /// the first call connects.
    pub fn new(endpoint: &str, timeout_ms: u64) -> Result<EtcdStore, LeaseError> {
        let rest = endpoint.strip_prefix("http://").unwrap_or(endpoint);
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.is_empty() || rest.contains(['/', '?', '#']) {
            return Err(LeaseError::url(format!(
                "an etcd URL is 'etcd://[user:password@]host:port', not '{}'",
                crate::url::redact(&format!("etcd://{rest}"))
            )));
        }
        let (credentials, host) = match rest.rsplit_once('@') {
            Some((userinfo, host)) => {
                let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
                let decode = |s: &str| percent_decode(s);
                (Some((decode(user)?, decode(password)?)), host)
            }
            None => (None, rest),
        };
        let timeout = Duration::from_millis(timeout_ms.max(1));
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(timeout))
            .timeout_connect(Some(timeout))
            .max_idle_age(Duration::from_secs(30))
            .build()
            .into();
        Ok(EtcdStore {
            base: format!("http://{host}"),
            name: crate::url::redact(&format!("etcd://{rest}")),
            credentials,
            token: Mutex::new(None),
            agent,
            timeout_ms,
            clock: Mutex::new(Calibration::default()),
        })
    }

    fn clock(&self) -> std::sync::MutexGuard<'_, Calibration> {
        self.clock.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// POSTs `body` to `/v3/<path>`, authenticated if the URL has a user;
    /// returns the answer's JSON. An expired token is fetched again once.
    fn call(&self, path: &str, body: &Value) -> Result<Value, StoreError> {
        let token = self.auth_token()?;
        match self.post(path, body, token.as_deref()) {
            Err(Failure::Etcd(_, msg)) if token.is_some() && msg.contains("invalid auth token") => {
                *self.token.lock().unwrap_or_else(|e| e.into_inner()) = None;
                let token = self.auth_token()?;
                self.post(path, body, token.as_deref())
                    .map_err(|f| f.into_store(path))
            }
            r => r.map_err(|f| f.into_store(path)),
        }
    }

    /// The authentication token (`None` without a user in the URL).
    fn auth_token(&self) -> Result<Option<String>, StoreError> {
        let Some((user, password)) = &self.credentials else {
            return Ok(None);
        };
        let mut cached = self.token.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = cached.as_ref() {
            return Ok(Some(t.clone()));
        }
        let answer = self
            .post(
                "auth/authenticate",
                &json!({"name": user, "password": password}),
                None,
            )
            .map_err(|f| match f {
                Failure::Etcd(_, msg) => {
                    StoreError::Unreachable(format!("authentication as '{user}' failed: {msg}"))
                }
                f => f.into_store("auth/authenticate"),
            })?;
        let token = answer["token"]
            .as_str()
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                StoreError::Unreachable(format!(
                    "authentication as '{user}' failed: etcd returned no token"
                ))
            })?
            .to_string();
        *cached = Some(token.clone());
        Ok(Some(token))
    }

    fn post(&self, path: &str, body: &Value, token: Option<&str>) -> Result<Value, Failure> {
        let url = format!("{}/v3/{path}", self.base);
        let mut req = self
            .agent
            .post(&url)
            .header("Content-Type", "application/json");
        if let Some(t) = token {
            req = req.header("Authorization", t);
        }
        let t0 = system_ms() as i64;
        let mut resp = req.send(body.to_string()).map_err(|e| {
            Failure::Transport(match e {
                ureq::Error::Timeout(_) => format!("no answer within {} ms ({e})", self.timeout_ms),
                e => e.to_string(),
            })
        })?;
        let t1 = system_ms() as i64;
        if let Some(secs) = resp
            .headers()
            .get("date")
            .and_then(|d| d.to_str().ok())
            .and_then(parse_http_date)
        {
            self.clock().sample(secs * 1000, t0, t1);
        }
        let status = resp.status().as_u16();
        let text = resp
            .body_mut()
            .with_config()
            .limit(256 << 20)
            .read_to_string()
            .map_err(|e| Failure::Transport(e.to_string()))?;
        let json: Value = serde_json::from_str(&text).map_err(|_| {
            Failure::Etcd(
                status,
                format!(
                    "not a JSON answer (HTTP {status}): {}",
                    text.chars().take(200).collect::<String>()
                ),
            )
        })?;
        if let Some(err) = json.get("error").filter(|e| !e.is_null()) {
            let msg = json["message"].as_str().or(err.as_str()).unwrap_or("");
            return Err(Failure::Etcd(status, msg.to_string()));
        }
        if status != 200 {
            return Err(Failure::Etcd(status, format!("HTTP {status}: {text}")));
        }
        Ok(json)
    }

    /// The cheapest call a user of this store may make: counts the keys
    /// under the root (a read any user of the store needs anyway; maintenance
    /// calls may need more rights).
    fn ping(&self) -> Result<(), StoreError> {
        self.call("kv/range", &json!({"key": b64(ROOT), "count_only": true}))
            .map(|_| ())
    }

    /// The member's clock, Unix ms (the local clock moved by the calibrated
    /// offset). Without any answer yet, asks for one.
    fn store_ms(&self) -> Result<u64, StoreError> {
        if self.clock().offset().is_none() {
            self.ping()?;
        }
        let offset = self.clock().offset().ok_or_else(|| {
            StoreError::Unreachable("etcd's answers carry no HTTP Date header".into())
        })?;
        Ok((system_ms() as i64 + offset).max(0) as u64)
    }

    fn space_prefix(space: &SlotSpace) -> String {
        format!("{ROOT}{}/", space.key())
    }

    fn slot_prefix(space: &SlotSpace, slot: u64) -> String {
        format!("{}slot/{slot}/", Self::space_prefix(space))
    }

    /// Every key under `prefix`.
    fn range_prefix(&self, prefix: &str) -> Result<Vec<(String, Kv)>, StoreError> {
        let mut end = prefix.as_bytes().to_vec();
        // The prefixes end in '/': its successor '0' ends the range.
        *end.last_mut().expect("a prefix") += 1;
        let answer = self.call(
            "kv/range",
            &json!({"key": b64(prefix), "range_end": B64.encode(&end)}),
        )?;
        parse_kvs(&answer["kvs"])
    }

    /// Reads the space: checks (or first writes) its text, and returns its slots.
    fn read_space(&self, space: &SlotSpace) -> Result<HashMap<u64, Slot>, StoreError> {
        let prefix = Self::space_prefix(space);
        let space_key = format!("{prefix}space");
        let mut text = None;
        let mut slots: HashMap<u64, Slot> = HashMap::new();
        for (key, kv) in self.range_prefix(&prefix)? {
            if key == space_key {
                text = Some(kv.value);
                continue;
            }
            let bad = || StoreError::BadRecord(format!("unexpected etcd key '{key}'"));
            let rest = key[prefix.len()..].strip_prefix("slot/").ok_or_else(bad)?;
            let (n, what) = rest.split_once('/').ok_or_else(bad)?;
            let n: u64 = n.parse().map_err(|_| bad())?;
            let slot = slots.entry(n).or_default();
            match what {
                "state" => {
                    let state = State::parse(&kv.value).ok_or_else(|| {
                        StoreError::BadRecord(format!("etcd key '{key}' is not a slot state"))
                    })?;
                    slot.state = Some((state, kv));
                }
                "holder" => slot.holder = Some(kv),
                _ => return Err(bad()),
            }
        }
        let text = match text {
            Some(t) => t,
            None => {
                // Put if absent; several claimers may race, all with one text.
                let k = b64(&space_key);
                let answer = self.call(
                    "kv/txn",
                    &json!({
                        "compare": [{"key": k, "result": "EQUAL", "target": "CREATE", "create_revision": "0"}],
                        "success": [{"request_put": {"key": k, "value": b64(space.text())}}],
                        "failure": [{"request_range": {"key": k}}],
                    }),
                )?;
                if answer["succeeded"].as_bool() == Some(true) {
                    space.text().to_string()
                } else {
                    let kvs = parse_kvs(&answer["responses"][0]["response_range"]["kvs"])?;
                    kvs.into_iter()
                        .next()
                        .map(|(_, kv)| kv.value)
                        .unwrap_or_default()
                }
            }
        };
        if text != space.text() {
            return Err(StoreError::BadRecord(format!(
                "etcd key '{space_key}' describes another slot space than its name says"
            )));
        }
        Ok(slots)
    }

    /// Grants an etcd lease of `ttl_ms` rounded up to whole seconds (at least
    /// 1; etcd itself raises it to its minimum, 2 s with the default
    /// election timeout). Returns its ID and granted TTL in seconds.
    fn grant(&self, ttl_ms: u64) -> Result<(i64, i64), StoreError> {
        let secs = ttl_ms.div_ceil(1000).max(1);
        let answer = self.call("lease/grant", &json!({"TTL": secs.to_string()}))?;
        let id = int(&answer["ID"]);
        if id == 0 {
            return Err(StoreError::Unreachable(format!(
                "etcd granted no lease: {answer}"
            )));
        }
        Ok((id, int(&answer["TTL"]).max(secs as i64)))
    }

    /// Revokes a lease, best effort (it expires by itself anyway).
    fn revoke(&self, id: i64) {
        let _ = self.call("lease/revoke", &json!({"ID": id.to_string()}));
    }

    /// The compare that a slot's state is as read (absent, or unchanged).
    fn state_unchanged(key: &str, slot: &Slot) -> Value {
        match &slot.state {
            Some((_, kv)) => json!({"key": b64(key), "result": "EQUAL", "target": "MOD",
                                    "mod_revision": kv.mod_revision.to_string()}),
            None => json!({"key": b64(key), "result": "EQUAL", "target": "CREATE",
                           "create_revision": "0"}),
        }
    }

    /// One try to claim `n`, as read in `slot`: `Ok(None)` if someone was faster.
    fn try_claim(
        &self,
        space: &SlotSpace,
        n: u64,
        slot: &Slot,
        lease: (i64, i64),
        window_ms: u64,
    ) -> Result<Option<Claim>, StoreError> {
        let prefix = Self::slot_prefix(space, n);
        let (state_key, holder_key) = (format!("{prefix}state"), format!("{prefix}holder"));
        let old = slot
            .state
            .as_ref()
            .map(|(s, _)| s.clone())
            .unwrap_or_default();
        let now = self.store_ms()?;
        let new = State {
            hwm_ms: old.hwm_ms.max(now.saturating_add(window_ms)),
            counter: old.counter + 1,
            token: new_token(),
        };
        let answer = self.call(
            "kv/txn",
            &json!({
                "compare": [
                    {"key": b64(&holder_key), "result": "EQUAL", "target": "CREATE", "create_revision": "0"},
                    Self::state_unchanged(&state_key, slot),
                ],
                "success": [
                    {"request_put": {"key": b64(&state_key), "value": b64(&new.to_text())}},
                    {"request_put": {"key": b64(&holder_key),
                                     "value": b64(&holder_value(&new.token, new.counter)),
                                     "lease": lease.0.to_string()}},
                ],
            }),
        )?;
        if answer["succeeded"].as_bool() != Some(true) {
            return Ok(None);
        }
        Ok(Some(Claim {
            holder: Holder {
                slot: n,
                token: new.token,
                counter: new.counter,
            },
            prev_hwm_ms: old.hwm_ms,
            hwm_ms: new.hwm_ms,
            expires_ms: Some(now.saturating_add(lease.1 as u64 * 1000)),
        }))
    }

    /// The seconds left of an etcd lease (`<= 0`: expired or gone).
    fn time_to_live(&self, id: i64) -> Result<i64, StoreError> {
        let answer = self.call("lease/timetolive", &json!({"ID": id.to_string()}))?;
        Ok(int(&answer["TTL"]))
    }

    /// A slot as an operator sees it: held while its holder key lives (expiry
    /// from its etcd lease's time to live), free without one.
    fn slot_record(&self, n: u64, slot: &Slot, now: u64) -> Result<SlotRecord, StoreError> {
        let state = slot
            .state
            .as_ref()
            .map(|(s, _)| s.clone())
            .unwrap_or_default();
        let (state_kind, expires_ms) = match &slot.holder {
            None => (SlotState::Free, None),
            Some(kv) => {
                let ttl = if kv.lease == 0 {
                    0
                } else {
                    self.time_to_live(kv.lease)?
                };
                let expires = now.saturating_add(ttl.max(0) as u64 * 1000);
                if ttl > 0 {
                    (SlotState::Held, Some(expires))
                } else {
                    (SlotState::Expired, Some(now))
                }
            }
        };
        Ok(SlotRecord {
            slot: n,
            state: state_kind,
            token: state.token,
            counter: state.counter,
            expires_ms,
            hwm_ms: state.hwm_ms,
        })
    }

    /// Reads slot `n` of the space with key `space_key`: its state and holder keys.
    fn read_slot(&self, space_key: &str, n: u64) -> Result<Slot, StoreError> {
        let prefix = format!("{ROOT}{space_key}/slot/{n}/");
        let mut slot = Slot::default();
        for (key, kv) in self.range_prefix(&prefix)? {
            match &key[prefix.len()..] {
                "state" => {
                    let state = State::parse(&kv.value).ok_or_else(|| {
                        StoreError::BadRecord(format!("etcd key '{key}' is not a slot state"))
                    })?;
                    slot.state = Some((state, kv));
                }
                "holder" => slot.holder = Some(kv),
                _ => {}
            }
        }
        Ok(slot)
    }

    /// Reads the slot, checks that `holder` still holds it, and returns it
    /// with the holder key's etcd lease.
    fn read_held(&self, space: &SlotSpace, holder: &Holder) -> Result<(Slot, i64), StoreError> {
        let slot = self.read_slot(space.key(), holder.slot)?;
        let ours = holder_value(&holder.token, holder.counter);
        let lease = match &slot.holder {
            Some(kv) if kv.value == ours => kv.lease,
            Some(_) => {
                return Err(StoreError::Lost(format!(
                    "slot {} has another holder (claim counter {})",
                    holder.slot,
                    slot.state.as_ref().map_or(0, |(s, _)| s.counter)
                )))
            }
            None => {
                return Err(StoreError::Lost(format!(
                    "slot {}'s claim expired or was released (no holder key)",
                    holder.slot
                )))
            }
        };
        if slot.state.is_none() {
            return Err(StoreError::BadRecord(format!(
                "slot {} has a holder key but no state key",
                holder.slot
            )));
        }
        Ok((slot, lease))
    }

    /// Writes `state` if `holder` still holds the slot and the state is as
    /// read; `delete_holder` also frees the slot. `Ok(false)`: the state
    /// changed meanwhile (read again).
    fn write_held(
        &self,
        space: &SlotSpace,
        holder: &Holder,
        slot: &Slot,
        state: &State,
        delete_holder: bool,
    ) -> Result<bool, StoreError> {
        let prefix = Self::slot_prefix(space, holder.slot);
        let (state_key, holder_key) = (format!("{prefix}state"), format!("{prefix}holder"));
        let mut success =
            vec![json!({"request_put": {"key": b64(&state_key), "value": b64(&state.to_text())}})];
        if delete_holder {
            success.push(json!({"request_delete_range": {"key": b64(&holder_key)}}));
        }
        let answer = self.call(
            "kv/txn",
            &json!({
                "compare": [
                    {"key": b64(&holder_key), "result": "EQUAL", "target": "VALUE",
                     "value": b64(&holder_value(&holder.token, holder.counter))},
                    Self::state_unchanged(&state_key, slot),
                ],
                "success": success,
            }),
        )?;
        Ok(answer["succeeded"].as_bool() == Some(true))
    }
}

/// The `kvs` of a range answer, keys and values decoded.
fn parse_kvs(kvs: &Value) -> Result<Vec<(String, Kv)>, StoreError> {
    let Some(list) = kvs.as_array() else {
        return Ok(Vec::new());
    };
    let text = |v: &Value| -> Result<String, StoreError> {
        let raw = B64
            .decode(v.as_str().unwrap_or(""))
            .map_err(|e| StoreError::BadRecord(format!("etcd sent bad base64: {e}")))?;
        String::from_utf8(raw)
            .map_err(|_| StoreError::BadRecord("an etcd key or value is not UTF-8".into()))
    };
    list.iter()
        .map(|kv| {
            Ok((
                text(&kv["key"])?,
                Kv {
                    value: text(&kv["value"])?,
                    mod_revision: int(&kv["mod_revision"]),
                    lease: int(&kv["lease"]),
                },
            ))
        })
        .collect()
}

/// Percent-decoding of the user information.
fn percent_decode(s: &str) -> Result<String, LeaseError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let v = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| {
                    LeaseError::url("bad percent escape in the etcd user or password")
                })?;
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out)
        .map_err(|_| LeaseError::url("the etcd user or password decodes to invalid UTF-8"))
}

/// Why an HTTP call failed.
enum Failure {
    /// No answer: refused, timed out, reset.
    Transport(String),
    /// etcd answered with an error (HTTP status, its message).
    Etcd(u16, String),
}

impl Failure {
    fn into_store(self, path: &str) -> StoreError {
        match self {
            Failure::Transport(e) => StoreError::Unreachable(e),
            Failure::Etcd(status, msg) => {
                let auth = msg.contains("user name is empty")
                    || msg.contains("invalid auth token")
                    || msg.contains("permission denied");
                if auth {
                    unreachable(&format!("authentication failed on /v3/{path}"), msg)
                } else {
                    unreachable(&format!("etcd refused /v3/{path} (HTTP {status})"), msg)
                }
            }
        }
    }
}

impl Store for EtcdStore {
    fn describe(&self) -> String {
        self.name.clone()
    }

    /// The etcd member's clock from its HTTP `Date` headers (see the module
    /// documentation); the first call costs one request.
    fn now_ms(&self) -> Result<u64, StoreError> {
        // A fresh answer also refines the calibration.
        self.ping()?;
        self.store_ms()
    }

    fn claim(&self, space: &SlotSpace, req: &ClaimRequest) -> Result<Claim, StoreError> {
        let mut lease = None;
        let result = (|| {
            for _ in 0..ROUNDS {
                let slots = self.read_space(space)?;
                let now = self.store_ms()?;
                let free = |n: &u64| slots.get(n).is_none_or(|s| s.holder.is_none());
                // The preferred slot; then free slots whose hwm is behind the
                // clock, lowest first (a slot never used has hwm 0); then the
                // other free ones, lowest hwm first.
                let n_slots = space.slots();
                let mut used: Vec<u64> = slots.keys().copied().filter(|&n| n < n_slots).collect();
                used.sort_unstable();
                let never_used = (0..n_slots).filter(|n| !slots.contains_key(n));
                let mut behind: Vec<u64> = used
                    .iter()
                    .copied()
                    .filter(|n| free(n) && slots[n].hwm_ms() <= now)
                    .collect();
                // Enough never-used slots that racing claimers do not all
                // fight over one.
                behind.extend(never_used.take(64));
                behind.sort_unstable();
                let mut ahead: Vec<u64> = used
                    .iter()
                    .copied()
                    .filter(|n| free(n) && slots[n].hwm_ms() > now)
                    .collect();
                ahead.sort_by_key(|n| (slots[n].hwm_ms(), *n));
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
                let l = match lease {
                    Some(l) => l,
                    None => *lease.insert(self.grant(req.ttl_ms)?),
                };
                let empty = Slot::default();
                for n in order {
                    let slot = slots.get(&n).unwrap_or(&empty);
                    if let Some(claim) = self.try_claim(space, n, slot, l, req.window_ms)? {
                        return Ok(claim);
                    }
                }
            }
            Err(StoreError::Unreachable(format!(
                "lost the race for a free slot {ROUNDS} times"
            )))
        })();
        if let (Err(_), Some((id, _))) = (&result, lease) {
            self.revoke(id);
        }
        result
    }

    fn renew(
        &self,
        space: &SlotSpace,
        holder: &Holder,
        _ttl_ms: u64,
        window_ms: u64,
    ) -> Result<Renewal, StoreError> {
        for _ in 0..ROUNDS {
            let (slot, lease) = self.read_held(space, holder)?;
            // Keep the etcd lease alive (its TTL is the one granted at claim).
            let answer = self.call("lease/keepalive", &json!({"ID": lease.to_string()}))?;
            let ttl = int(&answer["result"]["TTL"]);
            if ttl <= 0 {
                return Err(StoreError::Lost(format!(
                    "slot {}'s etcd lease expired",
                    holder.slot
                )));
            }
            let now = self.store_ms()?;
            let mut state = slot.state.clone().expect("checked by read_held").0;
            state.hwm_ms = state.hwm_ms.max(now.saturating_add(window_ms));
            if self.write_held(space, holder, &slot, &state, false)? {
                return Ok(Renewal {
                    hwm_ms: state.hwm_ms,
                    expires_ms: Some(now.saturating_add(ttl as u64 * 1000)),
                });
            }
        }
        Err(StoreError::Unreachable(format!(
            "slot {}'s state kept changing during {ROUNDS} renewals",
            holder.slot
        )))
    }

    fn release(&self, space: &SlotSpace, holder: &Holder, last_ms: u64) -> Result<(), StoreError> {
        for _ in 0..ROUNDS {
            let (slot, lease) = self.read_held(space, holder)?;
            let mut state = slot.state.clone().expect("checked by read_held").0;
            state.hwm_ms = last_ms;
            state.token.clear();
            if self.write_held(space, holder, &slot, &state, true)? {
                self.revoke(lease);
                return Ok(());
            }
        }
        Err(StoreError::Unreachable(format!(
            "slot {}'s state kept changing during {ROUNDS} releases",
            holder.slot
        )))
    }

    /// etcd needs nothing created: checks that it answers (and that the
    /// user may read the keys).
    fn init(&self) -> Result<(), StoreError> {
        self.ping()
    }

    /// One range read of every key under `snowmint/lease/`, then each
    /// holder key's lease time to live.
    fn list(&self) -> Result<(u64, Vec<SpaceRecord>), StoreError> {
        let now = self.now_ms()?;
        let mut texts: HashMap<String, String> = HashMap::new();
        let mut slots: HashMap<String, HashMap<u64, Slot>> = HashMap::new();
        for (key, kv) in self.range_prefix(ROOT)? {
            let rest = &key[ROOT.len()..];
            let Some((space, what)) = rest.split_once('/') else {
                continue;
            };
            if !is_space_key(space) {
                continue;
            }
            if what == "space" {
                texts.insert(space.to_string(), kv.value);
                continue;
            }
            let Some((n, part)) = what
                .strip_prefix("slot/")
                .and_then(|r| r.split_once('/'))
                .and_then(|(n, p)| Some((n.parse::<u64>().ok()?, p)))
            else {
                continue;
            };
            let slot = slots
                .entry(space.to_string())
                .or_default()
                .entry(n)
                .or_default();
            match part {
                "state" => {
                    let state = State::parse(&kv.value).ok_or_else(|| {
                        StoreError::BadRecord(format!("etcd key '{key}' is not a slot state"))
                    })?;
                    slot.state = Some((state, kv));
                }
                "holder" => slot.holder = Some(kv),
                _ => {}
            }
        }
        let mut spaces = Vec::new();
        for (key, text) in texts {
            let mut records = Vec::new();
            let mut of_space: Vec<(u64, Slot)> =
                slots.remove(&key).unwrap_or_default().into_iter().collect();
            of_space.sort_by_key(|(n, _)| *n);
            for (n, slot) in &of_space {
                records.push(self.slot_record(*n, slot, now)?);
            }
            spaces.push(SpaceRecord {
                key,
                text,
                slots: records,
            });
        }
        spaces.sort_by(|a, b| a.key.cmp(&b.key));
        Ok((now, spaces))
    }

    /// One transaction, if the holder key and the state are as read: the
    /// state with the token cleared (`hwm` and counter kept), the holder key
    /// deleted; then its etcd lease revoked.
    fn release_slot(
        &self,
        space_key: &str,
        slot: u64,
        force: bool,
    ) -> Result<SlotRelease, StoreError> {
        check_space_key(space_key)?;
        let prefix = format!("{ROOT}{space_key}/slot/{slot}/");
        let (state_key, holder_key) = (format!("{prefix}state"), format!("{prefix}holder"));
        for _ in 0..ROUNDS {
            let read = self.read_slot(space_key, slot)?;
            let Some(holder) = &read.holder else {
                return Ok(SlotRelease::WasFree);
            };
            let now = self.now_ms()?;
            let record = self.slot_record(slot, &read, now)?;
            if record.state == SlotState::Held && !force {
                return Ok(SlotRelease::Refused(record));
            }
            let state = State {
                hwm_ms: record.hwm_ms,
                counter: record.counter,
                token: String::new(),
            };
            let answer = self.call(
                "kv/txn",
                &json!({
                    "compare": [
                        {"key": b64(&holder_key), "result": "EQUAL", "target": "MOD",
                         "mod_revision": holder.mod_revision.to_string()},
                        Self::state_unchanged(&state_key, &read),
                    ],
                    "success": [
                        {"request_put": {"key": b64(&state_key), "value": b64(&state.to_text())}},
                        {"request_delete_range": {"key": b64(&holder_key)}},
                    ],
                }),
            )?;
            if answer["succeeded"].as_bool() == Some(true) {
                if holder.lease != 0 {
                    self.revoke(holder.lease);
                }
                return Ok(SlotRelease::Released(record));
            }
        }
        Err(StoreError::Unreachable(format!(
            "slot {slot}'s keys kept changing during {ROUNDS} tries"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_dates() {
        assert_eq!(
            parse_http_date("Mon, 23 Nov 2026 22:58:37 GMT"),
            Some(1_795_474_717)
        );
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(
            parse_http_date("Tue, 29 Feb 2028 12:00:00 GMT"),
            Some(1_835_438_400)
        );
        assert_eq!(parse_http_date("junk"), None);
    }

    #[test]
    fn calibration_narrows_and_resets() {
        let mut c = Calibration::default();
        assert_eq!(c.offset(), None);
        // Server 10 s ahead; calls at local 1000.300 and 1000.800.
        c.sample(1_010_000, 1_000_300, 1_000_310);
        assert_eq!(c.bounds, Some((9_690, 10_699)));
        c.sample(1_010_000, 1_000_800, 1_000_805);
        assert_eq!(c.bounds, Some((9_690, 10_199)));
        c.sample(1_011_000, 1_000_900, 1_000_905);
        assert_eq!(c.bounds, Some((10_095, 10_199)));
        // A step of the local clock: start again.
        c.sample(1_011_000, 2_000_900, 2_000_905);
        assert_eq!(c.bounds, Some((-989_905, -988_901)));
    }

    #[test]
    fn constructor_does_no_io_and_hides_passwords() {
        let s = EtcdStore::new("http://127.0.0.1:1", 100).unwrap();
        assert_eq!(s.describe(), "etcd://127.0.0.1:1");
        let s = EtcdStore::new("http://app:s%40cret@h:2379", 100).unwrap();
        assert_eq!(s.describe(), "etcd://app:***@h:2379");
        assert_eq!(s.base, "http://h:2379");
        assert_eq!(
            s.credentials,
            Some(("app".to_string(), "s@cret".to_string()))
        );
        let e = EtcdStore::new("http://u:pw@h:2379/x", 100).unwrap_err();
        assert!(!e.to_string().contains("pw"), "{e}");
        assert!(e.to_string().contains("etcd://u:***@h:2379/x"), "{e}");
    }

    #[test]
    fn state_text_round_trips() {
        let s = State {
            hwm_ms: 5,
            counter: 2,
            token: "ab".into(),
        };
        assert_eq!(State::parse(&s.to_text()), Some(s));
        assert_eq!(State::parse("x"), None);
    }
}

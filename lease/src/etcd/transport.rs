//! The HTTP/JSON side of the etcd store: requests to etcd v3's gRPC gateway
//! (`/v3/...`) over plain HTTP with ureq, each bounded by the store's
//! timeout; authentication; base64 keys and values; etcd's errors mapped to
//! [`StoreError`]; and the member's clock read from the `Date:` headers of
//! its answers (see [`Calibration`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use serde_json::{json, Value};

use crate::error::LeaseError;
use crate::slot::system_ms;
use crate::store::StoreError;
use crate::url::{percent_decode, Authority};

/// A client of one etcd member's JSON gateway.
pub(super) struct Client {
    /// `http://host:port` of every member the URL lists, without user
    /// information.
    bases: Vec<String>,
    /// The member calls go to first: the last one that answered.
    current: AtomicUsize,
    /// How messages name the store (`etcd://host:port`, no password).
    pub(super) name: String,
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

crate::store::debug_by_name!(Client, name);

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
pub(super) struct Kv {
    pub(super) value: String,
    pub(super) mod_revision: i64,
    pub(super) lease: i64,
}

/// A key or value as the gateway's JSON carries it.
pub(super) fn b64(s: &str) -> String {
    B64.encode(s.as_bytes())
}

/// An int64 of the gateway's JSON: a string, or absent for 0.
pub(super) fn int(v: &Value) -> i64 {
    match v {
        Value::String(s) => s.parse().unwrap_or(0),
        Value::Number(n) => n.as_i64().unwrap_or(0),
        _ => 0,
    }
}

/// `Unreachable` with what failed and why.
fn unreachable(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Unreachable(format!("{what}: {e}"))
}

/// Seconds since 1970 of an HTTP date (`Mon, 23 Nov 2026 22:58:37 GMT`,
/// RFC 9110's IMF-fixdate, the form etcd sends).
fn parse_http_date(s: &str) -> Option<i64> {
    let mut it = s.split_whitespace().skip(1);
    let day = it.next()?.parse().ok()?;
    let month_name = it.next()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| *m == month_name)? as u32
        + 1;
    let year = it.next()?.parse().ok()?;
    let mut hms = it.next()?.split(':').map(|x| x.parse::<u8>().ok());
    let (h, m, sec) = (hms.next()??, hms.next()??, hms.next()??);
    if it.next()? != "GMT" || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    let days = snowmint::time::days_from_civil(year, month, day)?;
    Some(days * 86_400 + i64::from(h) * 3600 + i64::from(m) * 60 + i64::from(sec))
}

impl Client {
    /// A store on the etcd member at `endpoint` (`http://host:port`, or
    /// `http://user:password@host:port` with authentication). No I/O here:
    /// the first call connects.
    pub fn new(endpoint: &str, timeout_ms: u64) -> Result<Client, LeaseError> {
        let rest = endpoint.strip_prefix("http://").unwrap_or(endpoint);
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.is_empty() || rest.contains(['/', '?', '#']) {
            return Err(LeaseError::url(format!(
                "an etcd URL is 'etcd://[user:password@]host:port', not '{}'",
                crate::url::redact(&format!("etcd://{rest}"))
            )));
        }
        let authority = Authority::parse(rest);
        let credentials = match authority.user {
            Some(user) => Some((
                percent_decode(user, "etcd user")?,
                percent_decode(authority.password.unwrap_or(""), "etcd password")?,
            )),
            None => None,
        };
        let bases: Vec<String> = authority
            .host
            .split(',')
            .map(|h| format!("http://{h}"))
            .collect();
        if authority.host.split(',').any(str::is_empty) {
            return Err(LeaseError::url(format!(
                "an etcd URL lists members as 'etcd://host:port,host:port', not '{}'",
                crate::url::redact(&format!("etcd://{rest}"))
            )));
        }
        // Every member listed may be tried within one call's timeout.
        let timeout = Duration::from_millis((timeout_ms / bases.len() as u64).max(1));
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(timeout))
            .timeout_connect(Some(timeout))
            .max_idle_age(Duration::from_secs(30))
            .build()
            .into();
        Ok(Client {
            bases,
            current: AtomicUsize::new(0),
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
    pub(super) fn call(&self, path: &str, body: &Value) -> Result<Value, StoreError> {
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

    /// [`post_to`](Self::post_to) the current member; if it gives no answer
    /// or cannot serve (no leader, its request timed out), the next listed
    /// one, each at most once, within the call's timeout in all (each member
    /// gets `timeout_ms` / members). Trying a write again elsewhere is safe:
    /// every write is a transaction conditional on the revisions read, so
    /// one that had been applied fails its comparison the second time and
    /// the caller reads again.
    fn post(&self, path: &str, body: &Value, token: Option<&str>) -> Result<Value, Failure> {
        let n = self.bases.len();
        let first = self.current.load(Ordering::Relaxed) % n;
        let mut failures = Vec::new();
        for i in 0..n {
            let at = (first + i) % n;
            match self.post_to(&self.bases[at], path, body, token) {
                Ok(v) => {
                    self.current.store(at, Ordering::Relaxed);
                    return Ok(v);
                }
                Err(f) if n > 1 && f.member_down() => failures.push((at, f)),
                Err(f) => return Err(f),
            }
        }
        let (_, last) = failures.pop().expect("at least one member");
        if failures.is_empty() {
            return Err(last);
        }
        Err(Failure::Transport(format!(
            "no member of {n} answered: {}",
            match last {
                Failure::Transport(e) | Failure::Etcd(_, e) => e,
            }
        )))
    }

    fn post_to(
        &self,
        base: &str,
        path: &str,
        body: &Value,
        token: Option<&str>,
    ) -> Result<Value, Failure> {
        let url = format!("{base}/v3/{path}");
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
    pub(super) fn ping(&self) -> Result<(), StoreError> {
        self.call(
            "kv/range",
            &json!({"key": b64(super::ROOT), "count_only": true}),
        )
        .map(|_| ())
    }

    /// The member's clock, Unix ms (the local clock moved by the calibrated
    /// offset). Without any answer yet, asks for one.
    pub(super) fn store_ms(&self) -> Result<u64, StoreError> {
        if self.clock().offset().is_none() {
            self.ping()?;
        }
        let offset = self.clock().offset().ok_or_else(|| {
            StoreError::Unreachable("etcd's answers carry no HTTP Date header".into())
        })?;
        Ok((system_ms() as i64 + offset).max(0) as u64)
    }

    /// Every key under `prefix`.
    pub(super) fn range_prefix(&self, prefix: &str) -> Result<Vec<(String, Kv)>, StoreError> {
        self.range_prefix_at(prefix).map(|(_, kvs)| kvs)
    }

    /// Every key under `prefix`, and the answer's header (a linearizable
    /// read: its revision is at least that of every write confirmed before
    /// the read was sent).
    pub(super) fn range_prefix_at(
        &self,
        prefix: &str,
    ) -> Result<(Header, Vec<(String, Kv)>), StoreError> {
        let mut end = prefix.as_bytes().to_vec();
        // The prefixes end in '/': its successor '0' ends the range.
        *end.last_mut().expect("a prefix") += 1;
        let answer = self.call(
            "kv/range",
            &json!({"key": b64(prefix), "range_end": B64.encode(&end)}),
        )?;
        Ok((header_of(&answer)?, parse_kvs(&answer["kvs"])?))
    }

    /// One key (`None`: absent).
    pub(super) fn get(&self, key: &str) -> Result<Option<Kv>, StoreError> {
        let answer = self.call("kv/range", &json!({"key": b64(key)}))?;
        Ok(parse_kvs(&answer["kvs"])?
            .into_iter()
            .next()
            .map(|(_, kv)| kv))
    }

    /// Grants an etcd lease of `ttl_ms` rounded up to whole seconds (at least
    /// 1; etcd itself raises it to its minimum, 2 s with the default
    /// election timeout). Returns its ID and granted TTL in seconds.
    pub(super) fn grant(&self, ttl_ms: u64) -> Result<(i64, i64), StoreError> {
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
    pub(super) fn revoke(&self, id: i64) {
        let _ = self.call("lease/revoke", &json!({"ID": id.to_string()}));
    }

    /// The seconds left of an etcd lease (`<= 0`: expired or gone).
    pub(super) fn time_to_live(&self, id: i64) -> Result<i64, StoreError> {
        let answer = self.call("lease/timetolive", &json!({"ID": id.to_string()}))?;
        Ok(int(&answer["TTL"]))
    }
}

/// What every answer's header says of the store: which cluster answered
/// (`cluster_id`, as etcd sends it, a decimal uint64), and the revision of
/// its key-value store then (raised by every write, never lowered while the
/// cluster keeps its data).
pub(super) use crate::history::Seen as Header;

/// The header of `answer`; an answer without one is a bad record.
pub(super) fn header_of(answer: &Value) -> Result<Header, StoreError> {
    let h = &answer["header"];
    let cluster = match &h["cluster_id"] {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    };
    let revision = int(&h["revision"]);
    if cluster.is_empty() || revision <= 0 {
        return Err(StoreError::BadRecord(format!(
            "etcd's answer has no cluster_id or revision in its header: {h}"
        )));
    }
    Ok(Header { cluster, revision })
}

/// The `kvs` of a range answer, keys and values decoded.
pub(super) fn parse_kvs(kvs: &Value) -> Result<Vec<(String, Kv)>, StoreError> {
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

/// Why an HTTP call failed.
enum Failure {
    /// No answer: refused, timed out, reset.
    Transport(String),
    /// etcd answered with an error (HTTP status, its message).
    Etcd(u16, String),
}

impl Failure {
    /// The member gave no answer, or cannot serve now: another may.
    fn member_down(&self) -> bool {
        match self {
            Failure::Transport(_) => true,
            Failure::Etcd(status, msg) => {
                *status == 503
                    || msg.contains("no leader")
                    || msg.contains("request timed out")
                    || msg.contains("leader changed")
                    || msg.contains("not capable")
            }
        }
    }

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
        let s = Client::new("http://127.0.0.1:1", 100).unwrap();
        assert_eq!(s.name, "etcd://127.0.0.1:1");
        let s = Client::new("http://app:s%40cret@h:2379", 100).unwrap();
        assert_eq!(s.name, "etcd://app:***@h:2379");
        assert_eq!(s.bases, ["http://h:2379"]);
        assert_eq!(
            s.credentials,
            Some(("app".to_string(), "s@cret".to_string()))
        );
        let s = Client::new("http://a:1,b:2,c:3", 100).unwrap();
        assert_eq!(s.bases, ["http://a:1", "http://b:2", "http://c:3"]);
        assert_eq!(s.credentials, None);
        assert!(Client::new("http://a:1,,c:3", 100).is_err());
        let e = Client::new("http://u:pw@h:2379/x", 100).unwrap_err();
        assert!(!e.to_string().contains("pw"), "{e}");
        assert!(e.to_string().contains("etcd://u:***@h:2379/x"), "{e}");
    }
}

//! etcd v3, through its JSON gateway (`/v3/...`) over plain HTTP.
//!
//! ```text
//! snowmint/lease/<space key>/space            the space's canonical text (checked on every claim)
//! snowmint/lease/<space key>/marker           cluster ID, largest window (see fence.rs)
//! snowmint/lease/<space key>/fence            the last fence after a detected loss (see fence.rs)
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
//! over the calls made (see `transport::Calibration`). Safety does not depend on it:
//! expiry is etcd's lease timer, claims are exclusive by the transaction, and
//! a clock only decides how far ahead a reservation reaches.
//!
//! An etcd restored from a backup or snapshot has lost confirmed writes: a
//! claim fences when this process saw a higher revision or another cluster
//! ID, or one of its holders' states older than their last confirmed write,
//! or when the space's marker names another cluster; a holder's renewal
//! fails as lost when its slot's state is older than its last confirmed
//! write or than the space's fence (see `fence.rs`).

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::error::LeaseError;
use crate::slot::{new_token, slot_order, SlotSeen, State};
use crate::space::SlotSpace;
use crate::store::listing;
use crate::store::{
    check_hwm_bound, check_space_key, is_space_key, Claim, ClaimRequest, Holder, ReleaseStep,
    Renewal, SlotRecord, SlotRelease, SlotState, SpaceRecord, Store, StoreError,
};
use crate::store::{RenewRequest, SlotReleaseRequest};
use crate::url::Settings;

mod fence;
mod transport;

use crate::history::{self, Fence};
use fence::{no_fence, Marker, MarkerPlan, SpaceRead, UNIT};
use transport::{b64, header_of, int, parse_kvs, Client, Kv};

/// Where every key lives.
const ROOT: &str = "snowmint/lease/";

/// How many times a call re-reads and tries again after losing a race on a
/// slot's state (another claimer, or a renewal of ours that the driver gave up
/// on and that completed later). Each lost race means another call won.
const ROUNDS: usize = 64;

/// A lease store on an etcd v3 cluster: see the module documentation.
pub struct EtcdStore {
    client: Client,
    /// `max_skew_ms`: twice added to a fence (clocks ahead, then behind).
    skew_ms: u64,
}

crate::store::debug_by_name!(EtcdStore, client.name);

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

fn holder_value(token: &str, counter: u64) -> String {
    format!("{token} {counter}")
}

impl EtcdStore {
    /// A store on the etcd member at `endpoint` (`http://host:port`, or
    /// `http://user:password@host:port` with authentication). No I/O here:
    /// the first call connects.
    /// The other settings are the defaults ([`Settings`]).
    pub fn new(endpoint: &str, timeout_ms: u64) -> Result<EtcdStore, LeaseError> {
        Self::with_settings(endpoint, &Settings::with_timeout(timeout_ms))
    }

    /// A store with the lease URL's settings: `timeout_ms`, and
    /// `max_skew_ms` (the fence after the store went back in time).
    pub fn with_settings(endpoint: &str, settings: &Settings) -> Result<EtcdStore, LeaseError> {
        Ok(EtcdStore {
            client: Client::new(endpoint, settings.timeout_ms)?,
            skew_ms: settings.max_skew_ms,
        })
    }

    fn space_prefix(space: &SlotSpace) -> String {
        format!("{ROOT}{}/", space.key())
    }

    fn slot_prefix(space: &SlotSpace, slot: u64) -> String {
        format!("{}slot/{slot}/", Self::space_prefix(space))
    }

    /// Reads the space: checks (or first writes) its text, and returns its
    /// slots, its marker and fence keys, and the read's header.
    fn read_space(&self, space: &SlotSpace) -> Result<SpaceRead, StoreError> {
        let prefix = Self::space_prefix(space);
        let space_key = format!("{prefix}space");
        let marker_key = format!("{prefix}marker");
        let fence_key = format!("{prefix}fence");
        let mut text = None;
        let mut marker = None;
        let mut fence = None;
        let mut slots: HashMap<u64, Slot> = HashMap::new();
        let (header, kvs) = self.client.range_prefix_at(&prefix)?;
        for (key, kv) in kvs {
            if key == space_key {
                text = Some(kv.value);
                continue;
            }
            if key == marker_key {
                let m = Marker::parse(&kv.value).ok_or_else(|| {
                    StoreError::BadRecord(format!("etcd key '{key}' is not a space marker"))
                })?;
                marker = Some((m, kv));
                continue;
            }
            if key == fence_key {
                let f = Fence::parse(&kv.value).ok_or_else(|| {
                    StoreError::BadRecord(format!("etcd key '{key}' is not a space fence"))
                })?;
                fence = Some((f, kv));
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
                let answer = self.client.call(
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
        Ok(SpaceRead {
            header,
            slots,
            marker,
            fence,
        })
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

    /// One try to claim `n`, as read in `slot`, with the space's marker as
    /// read in `read` and planned in `plan`: `Ok(None)` if someone was faster.
    #[allow(clippy::too_many_arguments)]
    fn try_claim(
        &self,
        space: &SlotSpace,
        n: u64,
        slot: &Slot,
        (read, plan): (&SpaceRead, &MarkerPlan),
        lease: (i64, i64),
        window_ms: u64,
        max_hwm_ms: u64,
    ) -> Result<Option<Claim>, StoreError> {
        let prefix = Self::slot_prefix(space, n);
        let (state_key, holder_key) = (format!("{prefix}state"), format!("{prefix}holder"));
        let old = slot
            .state
            .as_ref()
            .map(|(s, _)| s.clone())
            .unwrap_or_default();
        let now = self.client.store_ms()?;
        check_hwm_bound(now, window_ms, max_hwm_ms)?;
        // The space's fence, while ahead of the slot's own hwm, is where the
        // new holder starts above.
        let (prev_hwm_ms, cause) = match plan.fence {
            Some(f) if f.fence_ms > old.hwm_ms => (f.fence_ms, Some(f.cause)),
            _ => (old.hwm_ms, None),
        };
        let new = State {
            hwm_ms: prev_hwm_ms.max(now.saturating_add(window_ms)),
            counter: old.counter + 1,
            token: new_token(),
        };
        let mut success = vec![
            json!({"request_put": {"key": b64(&state_key), "value": b64(&new.to_text())}}),
            json!({"request_put": {"key": b64(&holder_key),
                                   "value": b64(&holder_value(&new.token, new.counter)),
                                   "lease": lease.0.to_string()}}),
        ];
        let space_key = |name: &str| b64(&format!("{}{name}", Self::space_prefix(space)));
        if let Some(m) = &plan.marker {
            success.push(
                json!({"request_put": {"key": space_key("marker"), "value": b64(&m.to_text())}}),
            );
        }
        if let Some(f) = plan.fence.filter(|_| plan.fenced) {
            success.push(
                json!({"request_put": {"key": space_key("fence"), "value": b64(&f.to_text())}}),
            );
        }
        let answer = self.client.call(
            "kv/txn",
            &json!({
                "compare": [
                    {"key": b64(&holder_key), "result": "EQUAL", "target": "CREATE", "create_revision": "0"},
                    Self::state_unchanged(&state_key, slot),
                    Self::unchanged(space, "marker", read.marker.as_ref().map(|(_, kv)| kv)),
                    Self::unchanged(space, "fence", read.fence.as_ref().map(|(_, kv)| kv)),
                ],
                "success": success,
            }),
        )?;
        if answer["succeeded"].as_bool() != Some(true) {
            return Ok(None);
        }
        let header = header_of(&answer)?;
        let name = &self.client.name;
        history::record_space(name, space.key(), &header, plan.fenced);
        history::record_holder(name, space.key(), &new.token, n, &header);
        Ok(Some(Claim {
            holder: Holder::new(n, new.token, new.counter),
            prev_hwm_ms,
            hwm_ms: new.hwm_ms,
            expires_ms: Some(now.saturating_add(lease.1 as u64 * 1000)),
            fence: cause,
        }))
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
                    self.client.time_to_live(kv.lease)?
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
        self.read_slot_at(space_key, n).map(|(_, slot)| slot)
    }

    /// [`read_slot`](Self::read_slot), and the read's header.
    fn read_slot_at(&self, space_key: &str, n: u64) -> Result<(history::Seen, Slot), StoreError> {
        let prefix = format!("{ROOT}{space_key}/slot/{n}/");
        let mut slot = Slot::default();
        let (header, kvs) = self.client.range_prefix_at(&prefix)?;
        for (key, kv) in kvs {
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
        Ok((header, slot))
    }

    /// Reads the slot, checks that `holder` still holds it, and returns it
    /// with the holder key's etcd lease and the space's fence key. Lost,
    /// after writing a fence, if the store answers below the holder's last
    /// confirmed write or as another cluster: it went back in time
    /// (`window_ms`: the holder's, for the fence's span). Lost too if the
    /// slot's state is older than the space's fence: the claim predates a
    /// detected loss, which may have revived it after another holder had
    /// superseded it.
    fn read_held(
        &self,
        space: &SlotSpace,
        holder: &Holder,
        window_ms: u64,
    ) -> Result<(Slot, i64, Option<Kv>), StoreError> {
        let name = &self.client.name;
        let before = history::holder_seen(name, space.key(), &holder.token);
        let (header, slot) = self.read_slot_at(space.key(), holder.slot)?;
        let state_rev = slot.state.as_ref().map(|(_, kv)| kv.mod_revision);
        if let Some((cause, why)) =
            history::record_went_back(before.as_ref(), &header, holder.slot, state_rev, UNIT)
                .filter(|_| !no_fence())
        {
            if !history::fenced_since(name, space.key(), &holder.token) {
                self.fence_space(space, cause, window_ms);
            }
            history::forget_holder(name, space.key(), &holder.token);
            return Err(StoreError::Lost(format!(
                "slot {}: {why}; the space is fenced",
                holder.slot
            )));
        }
        let fence = self
            .client
            .get(&format!("{}fence", Self::space_prefix(space)))?;
        if let Some(f) = fence
            .as_ref()
            .filter(|f| !no_fence() && state_rev.is_some_and(|r| r < f.mod_revision))
        {
            history::forget_holder(name, space.key(), &holder.token);
            return Err(StoreError::Lost(format!(
                "slot {}: the space was fenced (at etcd revision {}) after a loss was detected, \
                 and this claim was last confirmed before it",
                holder.slot, f.mod_revision
            )));
        }
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
        Ok((slot, lease, fence))
    }

    /// Writes `state` if `holder` still holds the slot and the state is as
    /// read; `delete_holder` also frees the slot. `Ok(false)`: the state
    /// changed meanwhile (read again).
    fn write_held(
        &self,
        space: &SlotSpace,
        holder: &Holder,
        (slot, fence): (&Slot, Option<&Kv>),
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
        let answer = self.client.call(
            "kv/txn",
            &json!({
                "compare": [
                    {"key": b64(&holder_key), "result": "EQUAL", "target": "VALUE",
                     "value": b64(&holder_value(&holder.token, holder.counter))},
                    Self::state_unchanged(&state_key, slot),
                    // A fence written since the read: read again, and fail.
                    Self::unchanged(space, "fence", fence),
                ],
                "success": success,
            }),
        )?;
        let done = answer["succeeded"].as_bool() == Some(true);
        if done {
            let name = &self.client.name;
            if delete_holder {
                history::forget_holder(name, space.key(), &holder.token);
            } else {
                let header = header_of(&answer)?;
                history::record_space(name, space.key(), &header, false);
                history::record_holder(name, space.key(), &holder.token, holder.slot, &header);
            }
        }
        Ok(done)
    }
}

impl Store for EtcdStore {
    fn describe(&self) -> String {
        self.client.name.clone()
    }

    /// The etcd member's clock from its HTTP `Date` headers (see the module
    /// documentation); the first call costs one request.
    fn now_ms(&self) -> Result<u64, StoreError> {
        // A fresh answer also refines the calibration.
        self.client.ping()?;
        self.client.store_ms()
    }

    /// The bound is checked against the member's clock (its `Date` headers)
    /// before the transaction that would write the state.
    fn claim(&self, space: &SlotSpace, req: &ClaimRequest) -> Result<Claim, StoreError> {
        let max_hwm_ms = req.max_hwm_ms;
        let mut lease = None;
        let result = (|| {
            for _ in 0..ROUNDS {
                // What this process saw before the read was sent: the read
                // answers at a revision at least as high, in the same cluster.
                let before = history::space_seen(&self.client.name, space.key());
                let holders = history::holders(&self.client.name, space.key());
                let read = self.read_space(space)?;
                let slots = &read.slots;
                let now = self.client.store_ms()?;
                let plan = self.plan_marker(&read, (before.as_ref(), &holders), now, req.window_ms);
                let seen: Vec<SlotSeen> = slots
                    .iter()
                    .map(|(&n, s)| SlotSeen {
                        slot: n,
                        free: s.holder.is_none(),
                        hwm_ms: s.hwm_ms(),
                    })
                    .collect();
                let order = slot_order(req.prefer, space.slots(), &seen, now);
                if order.is_empty() {
                    return Err(StoreError::NoFreeSlot);
                }
                let l = match lease {
                    Some(l) => l,
                    None => *lease.insert(self.client.grant(req.ttl_ms)?),
                };
                let empty = Slot::default();
                for n in order {
                    let slot = slots.get(&n).unwrap_or(&empty);
                    if let Some(claim) = self.try_claim(
                        space,
                        n,
                        slot,
                        (&read, &plan),
                        l,
                        req.window_ms,
                        max_hwm_ms,
                    )? {
                        return Ok(claim);
                    }
                    if plan.writes() {
                        // The marker may be what changed: read it again.
                        break;
                    }
                }
            }
            Err(StoreError::Unreachable(format!(
                "lost the race for a free slot {ROUNDS} times"
            )))
        })();
        if let (Err(_), Some((id, _))) = (&result, lease) {
            self.client.revoke(id);
        }
        result
    }

    fn renew_within(&self, space: &SlotSpace, r: &RenewRequest<'_>) -> Result<Renewal, StoreError> {
        let (holder, _, window_ms, max_hwm_ms) = r.parts();
        for _ in 0..ROUNDS {
            let (slot, lease, fence) = self.read_held(space, holder, window_ms)?;
            // Keep the etcd lease alive (its TTL is the one granted at claim).
            let answer = self
                .client
                .call("lease/keepalive", &json!({"ID": lease.to_string()}))?;
            let ttl = int(&answer["result"]["TTL"]);
            if ttl <= 0 {
                return Err(StoreError::Lost(format!(
                    "slot {}'s etcd lease expired",
                    holder.slot
                )));
            }
            let now = self.client.store_ms()?;
            check_hwm_bound(now, window_ms, max_hwm_ms)?;
            let mut state = slot.state.clone().expect("checked by read_held").0;
            state.hwm_ms = state.hwm_ms.max(now.saturating_add(window_ms));
            if self.write_held(space, holder, (&slot, fence.as_ref()), &state, false)? {
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
            let (slot, lease, fence) = self.read_held(space, holder, 0)?;
            let mut state = slot.state.clone().expect("checked by read_held").0;
            state.hwm_ms = last_ms;
            state.token.clear();
            if self.write_held(space, holder, (&slot, fence.as_ref()), &state, true)? {
                self.client.revoke(lease);
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
        self.client.ping()
    }

    /// One range read of every key under `snowmint/lease/`, then each
    /// holder key's lease time to live.
    fn list(&self) -> Result<(u64, Vec<SpaceRecord>), StoreError> {
        let now = self.now_ms()?;
        let mut texts: HashMap<String, String> = HashMap::new();
        let mut slots: HashMap<String, HashMap<u64, Slot>> = HashMap::new();
        for (key, kv) in self.client.range_prefix(ROOT)? {
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
            spaces.push(SpaceRecord::unmarked(key, text, records));
        }
        Ok(listing(now, spaces))
    }

    /// One transaction, if the holder key and the state are as read: the
    /// state with the token cleared (`hwm` kept or reset, counter kept), the
    /// holder key deleted; then its etcd lease revoked.
    fn release_slot(&self, req: &SlotReleaseRequest<'_>) -> Result<SlotRelease, StoreError> {
        let (space_key, slot, force, reset_hwm_ms) = req.parts();
        check_space_key(space_key)?;
        let prefix = format!("{ROOT}{space_key}/slot/{slot}/");
        let (state_key, holder_key) = (format!("{prefix}state"), format!("{prefix}holder"));
        for _ in 0..ROUNDS {
            let read = self.read_slot(space_key, slot)?;
            if read.state.is_none() && read.holder.is_none() {
                return Ok(SlotRelease::WasFree);
            }
            let now = self.now_ms()?;
            let record = self.slot_record(slot, &read, now)?;
            let hwm_ms = match ReleaseStep::check(&record, force, reset_hwm_ms) {
                Ok(hwm_ms) => hwm_ms,
                Err(done) => return Ok(done),
            };
            let state = State::freed(hwm_ms, record.counter);
            // The holder key as read: absent stays absent (a claim between
            // the read and this transaction fails it), present is deleted.
            let holder_as_read = match &read.holder {
                Some(h) => json!({"key": b64(&holder_key), "result": "EQUAL", "target": "MOD",
                                  "mod_revision": h.mod_revision.to_string()}),
                None => json!({"key": b64(&holder_key), "result": "EQUAL", "target": "CREATE",
                               "create_revision": "0"}),
            };
            let answer = self.client.call(
                "kv/txn",
                &json!({
                    "compare": [holder_as_read, Self::state_unchanged(&state_key, &read)],
                    "success": [
                        {"request_put": {"key": b64(&state_key), "value": b64(&state.to_text())}},
                        {"request_delete_range": {"key": b64(&holder_key)}},
                    ],
                }),
            )?;
            if answer["succeeded"].as_bool() == Some(true) {
                if let Some(holder) = read.holder.as_ref().filter(|h| h.lease != 0) {
                    self.client.revoke(holder.lease);
                }
                return Ok(SlotRelease::Released(record));
            }
        }
        Err(StoreError::Unreachable(format!(
            "slot {slot}'s keys kept changing during {ROUNDS} tries"
        )))
    }
}

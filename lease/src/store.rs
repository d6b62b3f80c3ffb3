//! What a store does. One trait for the embedded file store and the stores
//! across machines (SQL, Redis, etcd): each call is one atomic operation on
//! one slot record, decided by the store's own clock.

use crate::space::SlotSpace;

/// `Debug` for a store or its client: the type and the name messages use
/// (its URL with any password redacted), nothing else: a connection or a
/// pool has nothing useful to show, and a secret never does.
#[cfg(any(
    feature = "postgres",
    feature = "mysql",
    feature = "redis",
    feature = "etcd",
    feature = "zookeeper"
))]
macro_rules! debug_by_name {
    ($ty:ident, $($name:ident).+) => {
        impl std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($ty))
                    .field("name", &self.$($name).+)
                    .finish_non_exhaustive()
            }
        }
    };
}
#[cfg(any(
    feature = "postgres",
    feature = "mysql",
    feature = "redis",
    feature = "etcd",
    feature = "zookeeper"
))]
pub(crate) use debug_by_name;

/// What a claim asks for, and the bounds under which the store refuses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClaimRequest {
    /// The slot this holder had before (a restart), tried first.
    pub prefer: Option<u64>,
    /// How long the claim holds without a renewal (stores with expiry).
    pub ttl_ms: u64,
    /// The first reservation: `hwm` becomes at least store time + `window_ms`.
    pub window_ms: u64,
    /// Refused ([`StoreError::Refused`], nothing written) if store time +
    /// `window_ms` is above it: the claimer's bound on how far its clock
    /// justifies a reservation (see [`hwm_bound`]); `u64::MAX`: no bound.
    /// Every store checks it in the same atomic step that reads its clock.
    pub max_hwm_ms: u64,
    /// Refused (nothing written) if the store's clock, read in the same
    /// atomic step, is below it (0: no bound): the claimer's clock when it
    /// sent the claim minus `max_skew_ms`. The skew check reads the clock in
    /// an earlier call, maybe of another server (a name or address that
    /// moved in between); a store whose fence relies on its clock (Redis)
    /// checks this bound, the others need not.
    pub min_store_ms: u64,
}

impl ClaimRequest {
    /// A claim without bounds (`max_hwm_ms` `u64::MAX`, `min_store_ms` 0).
    pub const fn new(prefer: Option<u64>, ttl_ms: u64, window_ms: u64) -> ClaimRequest {
        ClaimRequest {
            prefer,
            ttl_ms,
            window_ms,
            max_hwm_ms: u64::MAX,
            min_store_ms: 0,
        }
    }

    /// The same claim, refused if store time + `window_ms` is above `max_hwm_ms`.
    pub const fn within(self, max_hwm_ms: u64) -> ClaimRequest {
        ClaimRequest { max_hwm_ms, ..self }
    }
}

/// What a renewal asks for: extend `holder`'s claim by `ttl_ms`, raise `hwm`
/// to store time + `window_ms`, unless that is above `max_hwm_ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenewRequest<'a> {
    /// Who holds the slot.
    pub holder: &'a Holder,
    /// How long the claim holds from now without another renewal.
    pub ttl_ms: u64,
    /// The new reservation: `hwm` becomes at least store time + `window_ms`.
    pub window_ms: u64,
    /// As [`ClaimRequest::max_hwm_ms`]; `u64::MAX`: no bound.
    pub max_hwm_ms: u64,
}

impl<'a> RenewRequest<'a> {
    /// `(holder, ttl_ms, window_ms, max_hwm_ms)`.
    pub fn parts(&self) -> (&'a Holder, u64, u64, u64) {
        (self.holder, self.ttl_ms, self.window_ms, self.max_hwm_ms)
    }
}

/// An operator's release of a slot ([`Store::release_slot`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotReleaseRequest<'a> {
    /// The space's key ([`SlotSpace::key`]).
    pub space_key: &'a str,
    /// The slot.
    pub slot: u64,
    /// Free it even if it is held and not expired.
    pub force: bool,
    /// The repair form: set `hwm` to exactly this value.
    pub reset_hwm_ms: Option<u64>,
}

impl<'a> SlotReleaseRequest<'a> {
    /// `(space_key, slot, force, reset_hwm_ms)`.
    pub fn parts(&self) -> (&'a str, u64, bool, Option<u64>) {
        (self.space_key, self.slot, self.force, self.reset_hwm_ms)
    }
}

/// A claimed slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    /// Who holds it: the slot, this holder's random token, the claim counter.
    pub holder: Holder,
    /// `hwm` before this claim, Unix ms (0 for a slot never used): the
    /// generator starts strictly above its time unit.
    pub prev_hwm_ms: u64,
    /// `hwm` after this claim: the confirmed reservation, Unix ms
    /// (`max(prev_hwm_ms, store time + window_ms)`).
    pub hwm_ms: u64,
    /// When the claim expires without a renewal, store time (`None`: never
    /// while the holder lives, as the file store's lock).
    pub expires_ms: Option<u64>,
    /// Why `prev_hwm_ms` is above the slot record's own `hwm`: the store's
    /// fence after it may have forgotten claims (Redis); `None` when it is
    /// the record's (a previous holder's reservation).
    pub fence: Option<snowmint::FenceCause>,
}

/// What [`Store::init_fence`] found: the fence claims of spaces not yet
/// claimed on this server start above, and the store's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InitFence {
    /// The fence, Unix ms by the store's clock (passed once `now_ms` is
    /// above it).
    pub fence_ms: u64,
    /// The store's clock when it answered, Unix ms.
    pub now_ms: u64,
}

/// The identity of a claim, which renewals and the release are conditional on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    /// The slot: the value of the leased node field.
    pub slot: u64,
    /// This holder's random token (32 hex digits).
    pub token: String,
    /// The slot's claim counter after this claim (incremented by every claim).
    pub counter: u64,
}

impl Holder {
    /// The holder of `slot` with `token` after claim number `counter`.
    pub fn new(slot: u64, token: String, counter: u64) -> Holder {
        Holder {
            slot,
            token,
            counter,
        }
    }
}

/// A confirmed renewal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Renewal {
    /// The new `hwm` (never lower than before), Unix ms: the reservation.
    pub hwm_ms: u64,
    /// The new expiry, store time (`None` as in [`Claim::expires_ms`]).
    pub expires_ms: Option<u64>,
}

/// Why a store call failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreError {
    /// The store did not answer, refused, or failed to write (with the cause).
    /// Nothing is known about the slot; a holder keeps its reservation and
    /// tries again.
    Unreachable(String),
    /// Every slot is held.
    NoFreeSlot,
    /// The slot has another holder now (token or claim counter differ): stop
    /// issuing at once.
    Lost(String),
    /// The store holds something this version cannot read.
    BadRecord(String),
    /// The store, as configured, cannot keep the guarantees (the cause names
    /// the setting): nothing was written, and trying again does not help.
    Refused(String),
}

/// A lease store. Every method is one atomic step on the store; the driver
/// runs each on the lease's worker thread and waits at most `timeout_ms`
/// (an answer after that is handled as late), so an implementation may block,
/// and needs no timeout thread of its own.
///
/// Invariants every implementation keeps:
/// - `hwm` of a slot is never lowered, except by [`release`](Store::release)
///   (the holder has stopped issuing) to the last time unit it issued;
/// - a claim succeeds only on a free or expired slot (by the store's clock),
///   increments the claim counter and writes a fresh token in the same step;
/// - [`renew`](Store::renew) and [`release`](Store::release) change the slot
///   only if its token and claim counter are still the holder's;
/// - a returned `hwm` is durable (the write is confirmed) before the call returns;
/// - [`release_slot`](Store::release_slot) (an operator's) frees a slot whoever
///   holds it, but keeps its `hwm` and makes the holder's next renewal fail;
///   only its repair form sets `hwm`, and never on a live claim.
///
/// The operations methods ([`init`](Store::init), [`list`](Store::list),
/// [`release_slot`](Store::release_slot)) have defaults that fail, for stores
/// made outside this crate; every store of this crate implements them.
pub trait Store: Send + Sync {
    /// How messages name the store (`file:/var/lib/app/ids`).
    fn describe(&self) -> String;

    /// The store's clock, Unix ms.
    fn now_ms(&self) -> Result<u64, StoreError>;

    /// Atomically claims a free or expired slot of `space`: `req.prefer` if it
    /// is free, else preferably one whose `hwm` is behind the store's clock;
    /// refused, nothing written, outside `req`'s bounds.
    fn claim(&self, space: &SlotSpace, req: &ClaimRequest) -> Result<Claim, StoreError>;

    /// Extends the claim by `ttl_ms` and raises `hwm` to exactly
    /// `max(hwm, store time + window_ms)`, if `holder` still holds the slot.
    ///
    /// The driver reads the store's clock from this: an `hwm` that moved is
    /// store time + `window_ms` (it tracks the skew on every renewal without
    /// another call), so a store must not round or pad it.
    /// [`renew_within`](Store::renew_within) without a bound.
    fn renew(
        &self,
        space: &SlotSpace,
        holder: &Holder,
        ttl_ms: u64,
        window_ms: u64,
    ) -> Result<Renewal, StoreError> {
        let max_hwm_ms = u64::MAX;
        let req = RenewRequest {
            holder,
            ttl_ms,
            window_ms,
            max_hwm_ms,
        };
        self.renew_within(space, &req)
    }

    /// The renewal ([`renew`](Store::renew)), refused
    /// ([`StoreError::Refused`], nothing written) if store time + `window_ms`
    /// is above `max_hwm_ms`, as [`ClaimRequest::max_hwm_ms`].
    fn renew_within(&self, space: &SlotSpace, r: &RenewRequest<'_>) -> Result<Renewal, StoreError>;

    /// Sets `hwm` to `last_ms` (the start of the last time unit issued, or the
    /// claim's `prev_hwm_ms` if none was) and frees the slot, if `holder`
    /// still holds it.
    fn release(&self, space: &SlotSpace, holder: &Holder, last_ms: u64) -> Result<(), StoreError>;

    /// Operations: creates what the store needs (tables; nothing for the
    /// other stores) if it is missing, and checks that the store answers.
    /// Idempotent. The default (a store without operations) fails.
    fn init(&self) -> Result<(), StoreError> {
        Err(not_supported(&self.describe()))
    }

    /// Operations: [`init`](Store::init), and the fence a store that may
    /// forget (Redis) sets for the spaces claimed after it (`None`: none,
    /// the default for every other store).
    fn init_fence(&self) -> Result<Option<InitFence>, StoreError> {
        self.init().map(|()| None)
    }

    /// Operations: the store's clock and every slot space it holds with its
    /// slot records, each decided free, held or expired by that clock. Reads
    /// only (a store never initialized holds nothing).
    fn list(&self) -> Result<(u64, Vec<SpaceRecord>), StoreError> {
        Err(not_supported(&self.describe()))
    }

    /// Operations: frees slot `slot` of the space `space_key` in one atomic
    /// step. Without `reset_hwm_ms` it keeps the slot's `hwm` (never
    /// lowered): a slot held and not expired by the store's clock is freed
    /// only with `force` (the operator knows its holder is gone); its
    /// holder's next renewal then fails as *lost* and it stops issuing. A new
    /// holder starts above the kept `hwm`.
    ///
    /// With `reset_hwm_ms`, the repair of a slot whose `hwm` a store clock
    /// step poisoned: in the same atomic step the slot is freed (if it was
    /// held) and its `hwm` set to exactly that value, lowered or not. A slot
    /// held and not expired is refused even with `force`; a slot never
    /// claimed has nothing to repair (`WasFree`, nothing written). Checking
    /// that no ID of the slot was issued above the new value is the caller's
    /// part (see [`crate::ops::release`] and docs/LEASES.md, "Operations").
    fn release_slot(&self, req: &SlotReleaseRequest<'_>) -> Result<SlotRelease, StoreError> {
        let _ = req;
        Err(not_supported(&self.describe()))
    }
}

/// The highest `hwm` a claim or renewal sent at `sent_ms` by the holder's
/// clock may have a store write from its own clock: `sent_ms + timeout_ms +
/// max_skew_ms + window_ms`.
///
/// Why it never refuses a healthy store: the store reads its clock after the
/// call was sent and, for an answer the holder uses, before `sent_ms +
/// timeout_ms` (a later answer is dropped or released); a store clock within
/// `max_skew_ms` of the holder's therefore reads at most `sent_ms +
/// timeout_ms + max_skew_ms`. A store whose clock was stepped further ahead
/// than that can no longer write an `hwm` that would keep the slot unusable
/// until real time catches up. It bounds only what the store's clock adds
/// (store time + window): a `prev_hwm` or fence already written is kept.
pub fn hwm_bound(sent_ms: u64, timeout_ms: u64, max_skew_ms: u64, window_ms: u64) -> u64 {
    sent_ms
        .saturating_add(timeout_ms)
        .saturating_add(max_skew_ms)
        .saturating_add(window_ms)
}

/// The latency allowance: how far past `sent + window_ms + max_skew_ms`
/// a holder's issuing limit may reach, `sent` being its clock when it sent
/// the call that confirmed the reservation. 0: limits are counted from the
/// send time ([`crate::decide::limit`]), so a reply that took long adds
/// nothing. A store that fences after a loss (Redis) adds it to its fence
/// and records it with the fence's other settings, so that a holder that
/// counts otherwise (another version) is refused rather than overlapped.
pub const LIMIT_LATENCY_MS: u64 = 0;

/// `Ok` if a store whose clock reads `store_ms` may write `store_ms +
/// window_ms` under the bound `max_hwm_ms`, else the refusal every store
/// gives (before writing anything).
pub(crate) fn check_hwm_bound(
    store_ms: u64,
    window_ms: u64,
    max_hwm_ms: u64,
) -> Result<(), StoreError> {
    let hwm = store_ms.saturating_add(window_ms);
    if hwm <= max_hwm_ms {
        return Ok(());
    }
    Err(StoreError::Refused(hwm_refusal(hwm, store_ms, max_hwm_ms)))
}

/// The text of [`check_hwm_bound`]'s refusal (also built by the Redis script
/// from the same three numbers).
pub(crate) fn hwm_refusal(hwm_ms: u64, store_ms: u64, max_hwm_ms: u64) -> String {
    format!(
        "hwm_too_far: refused to write hwm {hwm_ms} ms (store time {store_ms} ms + window_ms): \
         above the bound {max_hwm_ms} ms (the holder's clock + timeout_ms + max_skew_ms + \
         window_ms) by {} ms, so the store's clock is that far ahead; nothing was written",
        hwm_ms - max_hwm_ms
    )
}

/// What an operator's release does with a slot found in `state`: the one
/// rule of [`Store::release_slot`] that every store applies.
// Without the file store (not unix) only the network stores' features use it.
#[cfg_attr(not(unix), allow(dead_code))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReleaseStep {
    /// Nothing to do: [`SlotRelease::WasFree`].
    Nothing,
    /// Held and not expired: [`SlotRelease::Refused`].
    Refuse,
    /// Write the slot free, with `hwm` kept or reset.
    Write,
}

#[cfg_attr(not(unix), allow(dead_code))]
impl ReleaseStep {
    /// The step for a slot in `state` (a slot never claimed counts as free).
    pub(crate) fn of(state: SlotState, force: bool, reset_hwm_ms: Option<u64>) -> ReleaseStep {
        match (state, reset_hwm_ms) {
            // A reset never overrides a live claim: its holder may be
            // issuing IDs above the new hwm right now.
            (SlotState::Held, Some(_)) => ReleaseStep::Refuse,
            (SlotState::Held, None) if !force => ReleaseStep::Refuse,
            (SlotState::Free, None) => ReleaseStep::Nothing,
            _ => ReleaseStep::Write,
        }
    }

    /// [`of`](Self::of) `record`: `Err` with what the release answers at
    /// once (nothing to do, or refused with the record), or `Ok` with the
    /// `hwm` to write with the token cleared and the counter kept (reset, or
    /// the record's).
    pub(crate) fn check(
        record: &SlotRecord,
        force: bool,
        reset_hwm_ms: Option<u64>,
    ) -> Result<u64, SlotRelease> {
        match Self::of(record.state, force, reset_hwm_ms) {
            ReleaseStep::Nothing => Err(SlotRelease::WasFree),
            ReleaseStep::Refuse => Err(SlotRelease::Refused(record.clone())),
            ReleaseStep::Write => Ok(reset_hwm_ms.unwrap_or(record.hwm_ms)),
        }
    }
}

/// A slot as the operations commands see it (`snowmint lease list`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotState {
    /// Nobody holds it (released, never claimed, or its holder's process
    /// ended: the file store).
    Free,
    /// Held, and not expired by the store's clock.
    Held,
    /// Its holder stopped renewing: the TTL ran out by the store's clock, and
    /// the next claim may take it.
    Expired,
}

impl SlotState {
    /// `free`, `held` or `expired`.
    pub fn name(self) -> &'static str {
        match self {
            SlotState::Free => "free",
            SlotState::Held => "held",
            SlotState::Expired => "expired",
        }
    }
}

/// One slot record of a store (slots never claimed have none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotRecord {
    /// The slot: the value of the leased node field.
    pub slot: u64,
    /// Free, held or expired, by the store's clock.
    pub state: SlotState,
    /// The last holder's token (empty once released).
    pub token: String,
    /// The claim counter (incremented by every claim).
    pub counter: u64,
    /// When the claim expires without a renewal, store time; `None` for a
    /// free slot and in the file store (held while the process lives).
    pub expires_ms: Option<u64>,
    /// `hwm`, Unix ms: no holder of the slot has issued or may still issue
    /// an ID in a time unit after the one holding it.
    pub hwm_ms: u64,
}

// etcd's records decide their state from its leases' expiry instead.
#[cfg(any(
    feature = "postgres",
    feature = "mysql",
    feature = "redis",
    feature = "zookeeper"
))]
impl SlotRecord {
    /// The record of a slot of a store whose claims expire (every store but
    /// the file store, whose claims last while their process does): free
    /// without a token; else held until the store's clock `now_ms` reaches
    /// `expires_ms`, then expired.
    pub(crate) fn expiring(
        slot: u64,
        token: String,
        counter: u64,
        expires_ms: u64,
        hwm_ms: u64,
        now_ms: u64,
    ) -> SlotRecord {
        let state = SlotState::of_expiring(!token.is_empty(), expires_ms, now_ms);
        SlotRecord {
            slot,
            state,
            token,
            counter,
            expires_ms: (state != SlotState::Free).then_some(expires_ms),
            hwm_ms,
        }
    }
}

// etcd's records decide their state from its leases' expiry instead.
#[cfg(any(
    feature = "postgres",
    feature = "mysql",
    feature = "redis",
    feature = "zookeeper"
))]
impl SlotState {
    /// A slot of a store whose claims expire, by the store's clock: free
    /// without a holder (token), held until `now_ms` reaches `expires_ms`,
    /// then expired.
    pub(crate) fn of_expiring(has_holder: bool, expires_ms: u64, now_ms: u64) -> SlotState {
        if !has_holder {
            SlotState::Free
        } else if expires_ms <= now_ms {
            SlotState::Expired
        } else {
            SlotState::Held
        }
    }
}

/// What [`Store::list`] returns: the store's clock and its spaces by key.
pub(crate) fn listing(now_ms: u64, mut spaces: Vec<SpaceRecord>) -> (u64, Vec<SpaceRecord>) {
    spaces.sort_by(|a, b| a.key.cmp(&b.key));
    (now_ms, spaces)
}

/// One slot space a store holds, with its slot records by slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpaceRecord {
    /// The space's key (`v1-` and 32 hex digits).
    pub key: String,
    /// The space's canonical text, as the store keeps it.
    pub text: String,
    /// The records of the slots ever claimed, by slot.
    pub slots: Vec<SlotRecord>,
    /// The space's marker (Redis only; `None` for the other stores).
    pub marker: Option<Marker>,
}

impl SpaceRecord {
    /// A space without a marker (every store but Redis).
    pub(crate) fn unmarked(key: String, text: String, slots: Vec<SlotRecord>) -> SpaceRecord {
        SpaceRecord {
            key,
            text,
            slots,
            marker: None,
        }
    }
}

/// A Redis (or SQL) space's marker as `list` reads it: whether claims are fenced, and
/// until when (docs/STORES.md, "Redis").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    /// Present (names this server), missing, or naming another server.
    pub state: MarkerState,
    /// The server the marker names (`run_id/master_replid`), if any.
    pub server: Option<String>,
    /// The marker's fence, Unix ms by the store's clock (0: none): every
    /// claim counts each slot's `hwm` as at least this. Active while it is
    /// above the store's clock.
    pub fence_ms: u64,
}

/// What a space's marker says about the server's data (see [`Marker`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkerState {
    /// It names this server with an epoch: no data loss seen since the
    /// last fence.
    Present,
    /// There is none (a wipe, an eviction, or a space never claimed): the
    /// next claim writes a new fence.
    Missing,
    /// It names another server (a restart, a failover): the next claim
    /// writes a new fence, and every older claim's renewal fails as lost.
    OtherServer,
}

impl MarkerState {
    /// `present`, `missing` or `other-server`.
    pub fn name(self) -> &'static str {
        match self {
            MarkerState::Present => "present",
            MarkerState::Missing => "missing",
            MarkerState::OtherServer => "other-server",
        }
    }
}

/// What [`Store::release_slot`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlotRelease {
    /// The slot was already free (or was never claimed): nothing written.
    WasFree,
    /// Freed; `hwm` kept (or reset, when asked). The record as it was before.
    Released(SlotRecord),
    /// Held and not expired, and `force` was not given (or a reset was
    /// asked): nothing written.
    /// The record as read.
    Refused(SlotRecord),
}

/// `Ok` if `key` is a space key (see [`is_space_key`]), else the error every
/// store's [`Store::release_slot`] gives before it uses the key.
pub(crate) fn check_space_key(key: &str) -> Result<(), StoreError> {
    if is_space_key(key) {
        Ok(())
    } else {
        Err(StoreError::BadRecord(format!("'{key}' is not a space key")))
    }
}

/// Whether `key` looks like a space key (`v1-` and 32 lowercase hex digits),
/// so that an operator's argument cannot name a path or a key pattern.
pub fn is_space_key(key: &str) -> bool {
    key.strip_prefix("v1-").is_some_and(|h| {
        h.len() == 32
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

fn not_supported(store: &str) -> StoreError {
    StoreError::Unreachable(format!(
        "{store} has no operations commands (init, list, release)"
    ))
}

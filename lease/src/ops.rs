//! Operations on a store, for an operator (`snowmint lease init|list|release`):
//! create the schema, list every slot space with its slots, free a slot whose
//! holder is gone, repair a slot whose `hwm` a store clock step poisoned. Each store call is one atomic step of the store (see
//! [`Store::init`], [`Store::list`], [`Store::release_slot`]) and runs under
//! the URL's `timeout_ms`, as the driver's calls do.

use std::fmt;
use std::sync::Arc;

use snowmint::Iso8601;

use crate::driver::{store_error, timed};
use crate::error::LeaseError;
use crate::store::{InitFence, Marker, SlotRecord, SlotRelease, SlotReleaseRequest, Store};
use crate::url::LeaseUrl;

/// Why an operation failed: the store's error (`lease_unavailable`, or
/// `invalid_option` for a bad URL), or a request the store's contents refuse
/// (an unknown or ambiguous space, a slot out of range, a held slot without
/// `force`), which is `invalid_option`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpsError {
    /// From the URL or the store.
    Lease(LeaseError),
    /// The request does not fit what the store holds (`invalid_option`).
    Refused(String),
}

impl OpsError {
    /// The stable code: the lease error's, or `invalid_option`.
    pub fn code(&self) -> &'static str {
        match self {
            OpsError::Lease(e) => e.code(),
            OpsError::Refused(_) => "invalid_option",
        }
    }
}

impl fmt::Display for OpsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpsError::Lease(e) => write!(f, "{e}"),
            OpsError::Refused(m) => write!(f, "{m} [invalid_option]"),
        }
    }
}

impl std::error::Error for OpsError {}

impl From<LeaseError> for OpsError {
    fn from(e: LeaseError) -> OpsError {
        OpsError::Lease(e)
    }
}

/// One slot space of a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpaceListing {
    /// The space's key (what `--space` takes).
    pub key: String,
    /// Its canonical text (docs/LEASES.md, "Vocabulary").
    pub text: String,
    /// The `namespace=` line of the text (`None` when empty).
    pub namespace: Option<String>,
    /// The leased field as `width@shift` (the `leased=` line).
    pub leased: String,
    /// How many slots the space has (2^width); `None` if the text has no
    /// readable `leased=` line.
    pub slots: Option<u64>,
    /// The records of the slots ever claimed, by slot.
    pub records: Vec<SlotRecord>,
    /// The space's marker and fence (Redis, PostgreSQL, MySQL/MariaDB).
    pub marker: Option<Marker>,
}

impl SpaceListing {
    fn new(
        key: String,
        text: String,
        records: Vec<SlotRecord>,
        marker: Option<Marker>,
    ) -> SpaceListing {
        let line = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
                .unwrap_or("")
                .to_string()
        };
        let namespace = Some(line("namespace")).filter(|n| !n.is_empty());
        let leased = line("leased");
        let slots = leased
            .split_once('@')
            .and_then(|(w, _)| w.parse::<u32>().ok())
            .and_then(|w| 1u64.checked_shl(w));
        SpaceListing {
            key,
            text,
            namespace,
            leased,
            slots,
            records,
            marker,
        }
    }
}

/// What `list` found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listing {
    /// The store as messages name it.
    pub store: String,
    /// The store's clock when it was read, Unix ms.
    pub now_ms: u64,
    /// The slot spaces (only the URL's namespace when it has one), by key.
    pub spaces: Vec<SpaceListing>,
}

/// What `release` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Released {
    /// The store as messages name it.
    pub store: String,
    /// The space's key.
    pub space: String,
    /// The slot.
    pub slot: u64,
    /// The slot's record before, or `None` if it was already free (nothing
    /// was written).
    pub before: Option<SlotRecord>,
    /// The `hwm` a [`reset_hwm`] wrote (`None`: kept, or nothing written).
    pub reset_hwm_ms: Option<u64>,
}

fn open(url: &str) -> Result<(LeaseUrl, Arc<dyn Store>), OpsError> {
    let url = LeaseUrl::parse(url)?;
    let store = url.open_store()?;
    Ok((url, store))
}

/// Creates what the store of `url` needs (the SQL tables; the file store's
/// directory) if it is missing, and checks that it answers. Returns the
/// store's name.
pub fn init(url: &str) -> Result<String, OpsError> {
    initialize(url).map(|i| i.store)
}

/// What [`initialize`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Initialized {
    /// The store as messages name it.
    pub store: String,
    /// The fence the store set for the spaces claimed after it, with its
    /// clock (Redis; `None` for the other stores, which need none): until
    /// the fence passes, a new lease's generator refuses with
    /// `lease_fenced`. Running `initialize` again reads it again.
    pub fence: Option<InitFence>,
}

/// [`init`], with the fence it leaves (see [`Initialized`]).
pub fn initialize(url: &str) -> Result<Initialized, OpsError> {
    let (url, store) = open(url)?;
    let name = store.describe();
    let s = Arc::clone(&store);
    let fence = timed(url.settings.timeout_ms, move || s.init_fence())
        .map_err(|e| store_error(&name, 0, e))?;
    Ok(Initialized { store: name, fence })
}

/// Every slot space of the store of `url` (only those of its namespace when
/// it has one) with its slot records.
pub fn list(url: &str) -> Result<Listing, OpsError> {
    let (url, store) = open(url)?;
    list_store(&url, &store)
}

fn list_store(url: &LeaseUrl, store: &Arc<dyn Store>) -> Result<Listing, OpsError> {
    let name = store.describe();
    let s = Arc::clone(store);
    let (now_ms, spaces) =
        timed(url.settings.timeout_ms, move || s.list()).map_err(|e| store_error(&name, 0, e))?;
    let ns = url.settings.namespace.as_deref();
    let mut spaces: Vec<SpaceListing> = spaces
        .into_iter()
        .map(|s| SpaceListing::new(s.key, s.text, s.slots, s.marker))
        .filter(|s| ns.is_none() || s.namespace.as_deref() == ns)
        .collect();
    spaces.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(Listing {
        store: name,
        now_ms,
        spaces,
    })
}

fn describe_spaces(spaces: &[SpaceListing]) -> String {
    spaces
        .iter()
        .map(|s| match &s.namespace {
            Some(ns) => format!("{} (namespace {ns})", s.key),
            None => format!("{} (no namespace)", s.key),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// How far past its lowest safe value [`reset_hwm`] accepts a new `hwm`: a
/// value further ahead would leave the slot as unusable as the one repaired.
pub const RESET_HWM_MAX_AHEAD_MS: u64 = 3_600_000;

/// Frees `slot` of a space of the store of `url`, keeping its `hwm`: the space
/// `space` (a key from [`list`]), or the only one the store holds (in the
/// URL's namespace, if it has one). A slot held and not expired by the store's
/// clock is refused unless `force` (the operator knows its holder is gone);
/// a forced release makes the holder's next renewal fail as lost.
pub fn release(
    url: &str,
    space: Option<&str>,
    slot: u64,
    force: bool,
) -> Result<Released, OpsError> {
    release_with(url, space, slot, force, None)
}

/// Repairs `slot` (chosen as by [`release`]) whose `hwm` is far ahead: frees
/// it and sets its `hwm` to `hwm_ms` in one atomic step of the store.
/// Refused while the slot is held and not expired (there is no `force`: a
/// live holder may be issuing IDs above `hwm_ms`), and unless `hwm_ms` is
/// in `[now + window_ms + max_skew_ms, that + RESET_HWM_MAX_AHEAD_MS]` by
/// this host's clock, with the URL's `window_ms` and `max_skew_ms`: a holder
/// whose clock is right never issued an ID above the lower end (its limit is
/// capped at its clock + window + skew), so the lowered `hwm` is safe if
/// every holder of the space used at most these settings and their clocks
/// and this host's are right. docs/LEASES.md, "Operations", says what the
/// operator checks.
pub fn reset_hwm(
    url: &str,
    space: Option<&str>,
    slot: u64,
    hwm_ms: u64,
) -> Result<Released, OpsError> {
    let settings = LeaseUrl::parse(url)?.settings;
    let lowest = crate::slot::system_ms()
        .saturating_add(settings.window_ms)
        .saturating_add(settings.max_skew_ms);
    let highest = lowest.saturating_add(RESET_HWM_MAX_AHEAD_MS);
    if hwm_ms < lowest {
        return Err(OpsError::Refused(format!(
            "--reset-hwm {} is below now + window_ms + max_skew_ms ({}): a holder \
             may have issued IDs up to there",
            Iso8601(hwm_ms),
            Iso8601(lowest)
        )));
    }
    if hwm_ms > highest {
        return Err(OpsError::Refused(format!(
            "--reset-hwm {} is more than {} s past now + window_ms + max_skew_ms ({}): \
             the slot would stay unusable",
            Iso8601(hwm_ms),
            RESET_HWM_MAX_AHEAD_MS / 1000,
            Iso8601(lowest)
        )));
    }
    release_with(url, space, slot, false, Some(hwm_ms))
}

fn release_with(
    url: &str,
    space: Option<&str>,
    slot: u64,
    force: bool,
    reset_hwm_ms: Option<u64>,
) -> Result<Released, OpsError> {
    let (url, store) = open(url)?;
    let listing = list_store(&url, &store)?;
    let name = listing.store.clone();
    let within = match url.settings.namespace.as_deref() {
        Some(ns) => format!("{name} (namespace {ns})"),
        None => name.clone(),
    };
    let chosen = match space {
        Some(key) => listing
            .spaces
            .iter()
            .find(|s| s.key == key)
            .ok_or_else(|| {
                OpsError::Refused(if listing.spaces.is_empty() {
                    format!("no slot space {key} in {within}: it holds none")
                } else {
                    format!(
                        "no slot space {key} in {within}; it holds {}",
                        describe_spaces(&listing.spaces)
                    )
                })
            })?,
        None => match listing.spaces.as_slice() {
            [one] => one,
            [] => return Err(OpsError::Refused(format!("{within} holds no slot space"))),
            many => {
                return Err(OpsError::Refused(format!(
                    "{within} holds {} slot spaces; name one with --space: {}",
                    many.len(),
                    describe_spaces(many)
                )))
            }
        },
    };
    if let Some(n) = chosen.slots {
        if slot >= n {
            return Err(OpsError::Refused(format!(
                "slot {slot} is outside space {} (slots 0 to {})",
                chosen.key,
                n - 1
            )));
        }
    }
    let key = chosen.key.clone();
    let (s, k) = (Arc::clone(&store), key.clone());
    let n = chosen.slots.unwrap_or(0);
    let outcome = timed(url.settings.timeout_ms, move || {
        s.release_slot(&SlotReleaseRequest {
            space_key: &k,
            slot,
            force,
            reset_hwm_ms,
        })
    })
    .map_err(|e| store_error(&name, n, e))?;
    match outcome {
        SlotRelease::WasFree => Ok(Released {
            store: name,
            space: key,
            slot,
            before: None,
            reset_hwm_ms: None,
        }),
        SlotRelease::Released(r) => Ok(Released {
            store: name,
            space: key,
            slot,
            before: Some(r),
            reset_hwm_ms,
        }),
        SlotRelease::Refused(r) => {
            let until = match r.expires_ms {
                Some(ms) => format!("held until {}", Iso8601(ms)),
                None => "held while its holder's process lives".to_string(),
            };
            let hint = if reset_hwm_ms.is_some() {
                "a reset waits until no holder lives, even with --force: stop the holder \
                 (or let its claim expire) first"
            } else {
                "pass --force if you know the holder is gone"
            };
            Err(OpsError::Refused(format!(
                "slot {slot} of {key} in {name} is {until} (claim {}); {hint}",
                r.counter
            )))
        }
    }
}

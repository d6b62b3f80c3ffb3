//! The thread-safe generator, the process-wide registry, and fork detection.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
#[cfg(unix)]
use std::sync::Once;
use std::vec::Vec;

use crate::clock::{Clock, SystemClock};
use crate::error::{Error, OptionProblem, Result};
use crate::generator::{Config, Next, Options, Step, FRESH, NO_LIMIT};
use crate::id::Id;
use crate::layout::{Layout, Nodes};

// The two words concurrent calls race on (the state and the reservation
// limit) are loom's atomics under `--cfg loom`, so `core/loom/tests/loom.rs` can
// explore every interleaving of the real code.
#[cfg(loom)]
use loom::sync::atomic::AtomicU64 as RaceU64;
#[cfg(not(loom))]
use std::sync::atomic::AtomicU64 as RaceU64;

/// The one mutable word of a generator, shared by every generator of the
/// process with the same ID space. Aligned to 128 bytes (two cache lines, the
/// unit x86's adjacent-line prefetcher moves) so that threads contending for
/// it do not also fight over the `Arc`'s counters or a neighbouring allocation.
#[repr(align(128))]
struct Shared {
    #[cfg(target_has_atomic = "64")]
    state: RaceU64,
    #[cfg(not(target_has_atomic = "64"))]
    state: std::sync::Mutex<u64>,
}

impl Shared {
    fn new(state: u64) -> Shared {
        Shared {
            #[cfg(target_has_atomic = "64")]
            state: RaceU64::new(state),
            #[cfg(not(target_has_atomic = "64"))]
            state: std::sync::Mutex::new(state),
        }
    }

    #[inline(always)]
    fn load(&self) -> u64 {
        #[cfg(target_has_atomic = "64")]
        return self.state.load(Ordering::Acquire);
        #[cfg(not(target_has_atomic = "64"))]
        return *self.state.lock().unwrap_or_else(|e| e.into_inner());
    }

    /// Replaces `current` by `new`; if another thread got there first, the
    /// state it left (as a fresh `load` would read it).
    #[inline(always)]
    fn swap_from(&self, current: u64, new: u64) -> core::result::Result<(), u64> {
        #[cfg(target_has_atomic = "64")]
        return self
            .state
            .compare_exchange(current, new, Ordering::AcqRel, Ordering::Acquire)
            .map(|_| ());
        #[cfg(not(target_has_atomic = "64"))]
        {
            let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            if *s == current {
                *s = new;
                Ok(())
            } else {
                Err(*s)
            }
        }
    }

    /// The state, read by a read-modify-write that changes nothing: it reads
    /// the latest value, and every later compare-and-swap synchronizes with
    /// it (see [`Generator::stop_issuing`]).
    fn load_latest(&self) -> u64 {
        #[cfg(target_has_atomic = "64")]
        return self.state.fetch_add(0, Ordering::AcqRel);
        #[cfg(not(target_has_atomic = "64"))]
        return self.load();
    }

    /// Moves the state to at least `floor` (used by `resume_after`).
    fn raise_to(&self, floor: u64) {
        if floor == FRESH {
            return;
        }
        loop {
            let cur = self.load();
            if cur != FRESH && cur >= floor {
                return;
            }
            if self.swap_from(cur, floor).is_ok() {
                return;
            }
        }
    }
}

/// What makes two generators' IDs collide: the time encoding, where the
/// sequence sits, and the node bits. Layout and field names do not matter, so
/// `twitter` with datacenter 1, worker 0 and `leaf` with worker 32 (the same
/// bits) have one key, and in one process share one state
/// ([`Config::state_key`]). Opaque: compare it, hash it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StateKey {
    epoch_ms: u64,
    unit_ms: u64,
    total_bits: u32,
    time_bits: u32,
    seq_bits: u32,
    seq_shift: u32,
    node_bits: u64,
}

impl Config {
    /// The key of the ID bits this configuration issues: two configurations
    /// with the same key issue the same IDs, and [`Generator`]s of one
    /// process with the same key share one state.
    pub fn state_key(&self) -> StateKey {
        let l = self.layout();
        StateKey {
            epoch_ms: l.epoch_ms(),
            unit_ms: l.time_unit_ms(),
            total_bits: l.total_bits(),
            time_bits: l.timestamp().bits(),
            seq_bits: l.sequence().bits(),
            seq_shift: l.sequence().shift(),
            node_bits: self.nodes().bits(),
        }
    }
}

/// Entries hold their state strongly and are never dropped (except in a
/// forked child): a generator created after the last one with the same key
/// was dropped must continue that state, or "a new generator per request"
/// would repeat the IDs of the current time unit. One entry per distinct
/// node configuration is a few dozen bytes.
struct Entry {
    key: StateKey,
    fork_gen: u64,
    shared: Arc<Shared>,
}

/// The registry. Its lock is a spin lock rather than a `Mutex` so that the
/// fork handlers can take it before `fork()` and release it on both sides:
/// a child forked while another thread held a `Mutex` would deadlock on it.
struct Registry {
    locked: AtomicBool,
    entries: UnsafeCell<Vec<Entry>>,
}

// SAFETY: `entries` is only touched while `locked` is held (see `with`).
unsafe impl Sync for Registry {}

static REGISTRY: Registry = Registry {
    locked: AtomicBool::new(false),
    entries: UnsafeCell::new(Vec::new()),
};

// The registry under loom: dropped at the end of every execution.
#[cfg(loom)]
loom::lazy_static! {
    static ref LOOM_ENTRIES: loom::sync::Mutex<Vec<(StateKey, Arc<Shared>)>> =
        loom::sync::Mutex::new(Vec::new());
}

/// Increased in the child process after every `fork()`.
static FORK_GEN: AtomicU64 = AtomicU64::new(0);

impl Registry {
    fn lock(&self) {
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
    }

    fn unlock(&self) {
        self.locked.store(false, Ordering::Release);
    }

    fn with<T>(&self, f: impl FnOnce(&mut Vec<Entry>) -> T) -> T {
        self.lock();
        struct Unlock<'a>(&'a Registry);
        impl Drop for Unlock<'_> {
            fn drop(&mut self) {
                self.0.unlock();
            }
        }
        let _guard = Unlock(self);
        // SAFETY: the lock is held until `_guard` drops.
        f(unsafe { &mut *self.entries.get() })
    }

    /// The shared state for `key`, created with `initial` if there is none.
    fn join(&self, key: StateKey, initial: u64) -> (Arc<Shared>, u64) {
        let fork_gen = FORK_GEN.load(Ordering::Acquire);
        // Each loom execution builds its own atomics: no state outlives one,
        // so the entries live in a registry loom resets per execution.
        #[cfg(loom)]
        if true {
            let mut entries = LOOM_ENTRIES.lock().unwrap();
            if let Some((_, shared)) = entries.iter().find(|(k, _)| *k == key) {
                shared.raise_to(initial);
                return (Arc::clone(shared), fork_gen);
            }
            let shared = Arc::new(Shared::new(initial));
            entries.push((key, Arc::clone(&shared)));
            return (shared, fork_gen);
        }
        self.with(|entries| {
            // Entries from before a fork belong to the parent's generators.
            entries.retain(|e| e.fork_gen == fork_gen);
            if let Some(e) = entries.iter().find(|e| e.key == key) {
                e.shared.raise_to(initial);
                return (Arc::clone(&e.shared), fork_gen);
            }
            let shared = Arc::new(Shared::new(initial));
            entries.push(Entry {
                key,
                fork_gen,
                shared: Arc::clone(&shared),
            });
            (shared, fork_gen)
        })
    }
}

/// Makes `fork()` detectable (`process_forked`) and the registry safe to
/// use in a forked child. Only unix has `fork()`: elsewhere there is nothing
/// to install.
fn install_fork_handlers() {
    #[cfg(unix)]
    {
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            extern "C" fn prepare() {
                REGISTRY.lock();
            }
            extern "C" fn parent() {
                REGISTRY.unlock();
            }
            extern "C" fn child() {
                FORK_GEN.fetch_add(1, Ordering::AcqRel);
                crate::clock::after_fork_in_child();
                REGISTRY.unlock();
            }
            // SAFETY: the handlers only touch atomics; registering can only
            // fail for lack of memory, and then forks go undetected, as
            // without this crate.
            unsafe {
                libc::pthread_atfork(Some(prepare), Some(parent), Some(child));
            }
        });
    }
}

/// Exponential backoff after a lost compare-and-swap: the losing thread
/// leaves the state's cache line alone for a moment, so the winner issues a
/// run of IDs without the line moving between cores on every one (without it,
/// two threads on one generator made less than half of one thread's IDs).
struct Backoff(u32);

impl Backoff {
    /// The longest pause, in `spin_loop` hints (2^8: a few microseconds). Measured
    /// on 2 cores (bench/RESULTS.md): 2^3 left two threads at 0.91x of one,
    /// 2^6 to 2^8 at 0.96x-1.01x, 2^10 no better.
    const MAX_STEP: u32 = 8;

    #[inline(always)]
    fn new() -> Backoff {
        Backoff(0)
    }

    #[inline]
    fn spin(&mut self) {
        // One yield under loom: its scheduler then runs the winning thread,
        // and a longer pause adds nothing but interleavings to explore.
        #[cfg(loom)]
        loom::hint::spin_loop();
        #[cfg(not(loom))]
        for _ in 0..1u32 << self.0 {
            std::hint::spin_loop();
        }
        if self.0 < Self::MAX_STEP {
            self.0 += 1;
        }
    }
}

/// The seed of `random:N` sequence starts when the options give none: std's
/// random hash keys (from the OS, once per process) over a counter, so each
/// generator of the process gets its own.
#[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
fn os_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.finish() | 1
}

/// On `wasm32-unknown-unknown` std has no source of randomness: its hash
/// keys are constants, so the seed above would be a fixed function of the
/// counter. This is one too (SplitMix64 of the counter), without SipHash's
/// code in the module (0.7 KB). Callers there pass a seed: the WebAssembly
/// binding takes one from `crypto.getRandomValues`.
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
fn os_seed() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    crate::generator::splitmix64(COUNTER.fetch_add(1, Ordering::Relaxed)) | 1
}

/// The thread-safe generator: reads its clock, waits when a policy says so,
/// and shares its state with every other generator of the process that has
/// the same layout and node values, so that "a new generator per request" or
/// one generator per worker thread can never repeat an ID.
///
/// Lock-free (one compare-and-swap per ID) where the target has 64-bit
/// atomics. After `fork()`, a generator created in the parent fails in the
/// child with `process_forked`.
///
/// ```
/// use snowmint::{Layout, Options, Generator};
/// let layout = Layout::preset("twitter").unwrap();
/// let nodes = layout.nodes_from_pairs([("datacenter", 1), ("worker", 3)]).unwrap();
/// let g = Generator::new(layout, nodes, Options::default()).unwrap();
/// let a = g.next_id().unwrap();
/// let b = g.next_id().unwrap();
/// assert!(b > a);
/// let mut batch = [0u64; 1000];
/// g.next_ids(&mut batch).unwrap();
/// assert!(batch.windows(2).all(|w| w[0] < w[1]) && batch[0] > b.get());
/// ```
pub struct Generator<C: Clock = SystemClock> {
    cfg: Config,
    shared: Arc<Shared>,
    fork_gen: u64,
    clock: C,
    /// The first time unit that may not be issued: a lease's confirmed
    /// reservation (`NO_LIMIT` without a lease). Every value it ever holds
    /// was confirmed by the store, so a call that read an older value still
    /// issues only inside a confirmed reservation.
    limit: RaceU64,
}

impl Generator<SystemClock> {
    /// A generator on the system clock.
    pub fn new(layout: Layout, nodes: Nodes, options: Options) -> Result<Self> {
        Self::with_clock(layout, nodes, options, SystemClock)
    }
}

impl<C: Clock> Generator<C> {
    /// A generator on `clock`. Fails with `invalid_layout` if the layout's
    /// epoch is later than the clock's reading. A seed of 0 is replaced with
    /// one from the operating system.
    pub fn with_clock(
        layout: Layout,
        nodes: Nodes,
        mut options: Options,
        clock: C,
    ) -> Result<Self> {
        if options.seed == 0 {
            options.seed = os_seed();
        }
        let cfg = Config::new(layout, nodes, options)?;
        layout.check_epoch(clock.now_ms())?;
        install_fork_handlers();
        let (shared, fork_gen) = REGISTRY.join(cfg.state_key(), cfg.initial_state());
        Ok(Generator {
            cfg,
            shared,
            fork_gen,
            clock,
            limit: RaceU64::new(NO_LIMIT),
        })
    }

    /// The configuration (layout, nodes, options with the seed in use).
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// Bounds the generator by a lease's confirmed reservation, as
    /// [`PureGenerator::reserve_until`](crate::PureGenerator::reserve_until):
    /// IDs only in time units up to the one holding `until_ms`, then
    /// `lease_expired`; `None` removes the bound. Calls already past their
    /// check may still issue inside the previous bound (which the store had
    /// confirmed too).
    pub fn reserve_until(&self, until_ms: Option<u64>) {
        self.limit
            .store(self.cfg.limit_of(until_ms), Ordering::Release);
    }

    /// Stops issuing for good (every later call fails with `lease_expired`)
    /// and returns the start of the last time unit issued, Unix ms (`None`
    /// before the first ID), as a lease's release writes it into `hwm`.
    ///
    /// The answer is final even while other threads are inside `next_id`.
    /// The limit is lowered first, then the state is read by a
    /// read-modify-write, and each call checks the limit again after its
    /// compare-and-swap took an ID. A call's swap either comes before that
    /// read-modify-write in the state's order (its ID is counted) or after
    /// it, and then synchronizes with it and reads the lowered limit (it
    /// fails, its ID never issued). `core/loom/tests/loom.rs` checks this in every
    /// interleaving.
    pub fn stop_issuing(&self) -> Option<u64> {
        self.limit.store(0, Ordering::Release);
        self.cfg.last_ms(self.shared.load_latest())
    }

    /// After a compare-and-swap took `state`: fails if the limit was lowered
    /// below it meanwhile (see [`stop_issuing`](Self::stop_issuing)).
    #[inline(always)]
    fn recheck(&self, state: u64) -> Result<()> {
        let limit = self.limit.load(Ordering::Acquire);
        if limit == NO_LIMIT {
            return Ok(());
        }
        self.cfg.within_limit(state, limit)
    }

    /// The first Unix millisecond the reservation does not cover (`None`
    /// without one).
    pub fn reserved_end_ms(&self) -> Option<u64> {
        self.cfg.end_of(self.limit.load(Ordering::Acquire))
    }

    /// The start of the time unit of the last ID issued by any generator
    /// sharing this one's state, Unix ms; `None` before the first.
    pub fn last_ms(&self) -> Option<u64> {
        self.cfg.last_ms(self.shared.load())
    }

    /// True when both generators draw from one shared state.
    pub fn shares_state_with<D: Clock>(&self, other: &Generator<D>) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    #[inline(always)]
    fn check_fork(&self) -> Result<()> {
        if FORK_GEN.load(Ordering::Relaxed) != self.fork_gen {
            return Err(Error::ProcessForked);
        }
        Ok(())
    }

    /// The next ID if one can be issued now, or when to ask again. Never
    /// blocks (bindings use it to release their interpreter lock only when
    /// they must wait).
    #[inline]
    pub fn try_next_id(&self) -> Result<Next> {
        self.check_fork()?;
        // Load the state before reading the clock: a reading taken first
        // could be older than an ID another thread issues in between, which
        // would look like the clock moving backwards.
        let mut state = self.shared.load();
        let mut backoff = Backoff::new();
        loop {
            let now = self.clock.now_ms();
            match self
                .cfg
                .step(state, now, self.limit.load(Ordering::Acquire))?
            {
                Step::Issue { state: new, id } => match self.shared.swap_from(state, new) {
                    Ok(()) => {
                        self.recheck(new)?;
                        return Ok(Next::Id(Id::new(id)));
                    }
                    // Lost to another thread: `seen` is the state it left,
                    // read (like the first load) before the clock. Retrying
                    // from it rather than from a fresh load after the backoff
                    // keeps the line with the winner: 2 threads made 0.99x of
                    // one thread's IDs this way, 0.40x with a reload.
                    Err(seen) => {
                        state = seen;
                        backoff.spin();
                    }
                },
                Step::RetryAt(at) => return Ok(Next::RetryAt(at)),
            }
        }
    }

    /// The next ID, waiting (sleeping) when a policy says to wait; fails
    /// with `clock_stalled` if the clock does not advance while it waits
    /// (see [`Clock::wait_until`]).
    #[inline]
    pub fn next_id(&self) -> Result<Id> {
        loop {
            match self.try_next_id()? {
                Next::Id(id) => return Ok(id),
                Next::RetryAt(at) => self.wait(at)?,
            }
        }
    }

    /// Waits for the clock to reach `at`: `clock_stalled` if it stands still.
    fn wait(&self, at: u64) -> Result<()> {
        if self.clock.wait_until(at) {
            return Ok(());
        }
        Err(self.stalled(at))
    }

    #[cold]
    fn stalled(&self, until_ms: u64) -> Error {
        Error::ClockStalled {
            now_ms: self.clock.now_ms(),
            until_ms,
        }
    }

    /// Fills `out` with increasing IDs, claiming each time unit's run of
    /// sequence values with one compare-and-swap. Waits when a policy says to.
    /// On error (`clock_stalled` among them) the whole call fails: IDs
    /// already claimed are skipped (never reissued), and the state stays
    /// past them, so the next call continues above them.
    pub fn next_ids(&self, out: &mut [u64]) -> Result<()> {
        self.check_fork()?;
        let mut done = 0;
        while done < out.len() {
            let state = self.shared.load();
            let now = self.clock.now_ms();
            let limit = self.limit.load(Ordering::Acquire);
            let (new, n, stop) = self.cfg.fill(state, now, limit, &mut out[done..]);
            if n > 0 {
                if self.shared.swap_from(state, new).is_err() {
                    continue;
                }
                self.recheck(new)?;
                done += n;
            }
            match stop {
                None => {}
                Some(Ok(at)) => self.wait(at)?,
                Some(Err(e)) => return Err(e),
            }
        }
        Ok(())
    }

    /// How many IDs a batch may ask for at most (2^32): bindings refuse
    /// larger counts with `invalid_option` before allocating.
    pub const MAX_BATCH: u64 = 1 << 32;

    /// Checks a batch size requested from another language.
    pub fn check_batch(n: u64) -> Result<usize> {
        // On a 32-bit target 2^32 itself does not fit a usize: refused too.
        match usize::try_from(n) {
            Ok(n) if n as u64 <= Self::MAX_BATCH => Ok(n),
            _ => Err(Error::InvalidOption(OptionProblem::Count)),
        }
    }
}

impl<C: Clock> core::fmt::Debug for Generator<C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Generator")
            .field("config", &self.cfg)
            .finish_non_exhaustive()
    }
}

/// A clock set by hand, for tests and for driving a [`Generator`] from
/// an outside time source. Waiting on it returns at once (a test advances it).
#[derive(Debug, Default)]
pub struct ManualClock {
    now: AtomicU64,
}

impl ManualClock {
    /// A clock reading `now_ms`.
    pub const fn new(now_ms: u64) -> Self {
        ManualClock {
            now: AtomicU64::new(now_ms),
        }
    }
    /// Sets the reading (it may go backwards, to test policies).
    pub fn set(&self, now_ms: u64) {
        self.now.store(now_ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }
    fn wait_until(&self, ms: u64) -> bool {
        // Nobody else moves a manual clock in the middle of a call: jump.
        self.now.fetch_max(ms, Ordering::SeqCst);
        true
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now_ms(&self) -> u64 {
        (**self).now_ms()
    }
    fn wait_until(&self, ms: u64) -> bool {
        (**self).wait_until(ms)
    }
}

//! The pure generator: a state machine that is handed the time.

use core::fmt;

use crate::error::{Error, OptionProblem, Result};
use crate::id::Id;
use crate::layout::{Layout, Nodes};

/// What to do when the clock reads earlier than the last ID's time unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClockBackwards {
    /// Fail with `clock_moved_backwards` (Twitter's choice). Spelled `fail`.
    Fail,
    /// Wait until the clock is back, if it is at most `max_units` behind;
    /// fail beyond that (Leaf waits up to 5 ms, ShardingSphere 10 ms).
    /// Spelled `wait:N`.
    Wait {
        /// The largest step back that is waited out, in time units.
        max_units: u64,
    },
    /// Keep issuing on the last time unit and borrow following units, running
    /// up to `max_units` ahead of the clock (Sonyflake and TSID style); fail
    /// when the clock is further behind. Spelled `borrow:N`.
    Borrow {
        /// How far the generator may run ahead of the clock, in time units.
        max_units: u64,
    },
}

/// What to do when the sequence of the current time unit is used up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SequenceExhausted {
    /// Wait for the next time unit (Twitter). Spelled `wait`.
    Wait,
    /// Take the next unit at once, running up to `max_units` ahead of the
    /// clock; wait beyond that. Spelled `borrow:N`.
    Borrow {
        /// How far the generator may run ahead of the clock, in time units.
        max_units: u64,
    },
}

/// The first sequence value of each new time unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SequenceStart {
    /// Always 0 (Twitter). Under low traffic every ID then ends in a zero
    /// sequence, so `id % 2` shards all land on one side. Spelled `zero`.
    Zero,
    /// A pseudo-random value below `below` (Leaf uses 100), derived from the
    /// seed and the time unit. Spelled `random:N`.
    Random {
        /// The exclusive bound (capped at the sequence's range).
        below: u64,
    },
    /// The time unit modulo `period`: a cycling offset like ShardingSphere's
    /// "vibration". Spelled `cycle:N`.
    Cycle {
        /// The cycle's length (capped at the sequence's range).
        period: u64,
    },
}

/// `n` when `s` is its decimal digits (at least one, nothing else) and it
/// fits a `u64`. (A loop of its own: `str::parse` brings an error type and
/// sign handling this does not need, about 0.6 KB of the WebAssembly module.)
fn digits(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let mut n: u64 = 0;
    for c in s.bytes() {
        if !c.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    Some(n)
}

/// Split `name:N` into the name and N.
fn split_policy(s: &str) -> (&str, Option<Option<u64>>) {
    match s.split_once(':') {
        None => (s, None),
        Some((name, n)) => (name, Some(digits(n))),
    }
}

impl ClockBackwards {
    /// Reads `fail`, `wait:N` or `borrow:N`.
    pub fn parse(s: &str) -> Result<Self> {
        let bad = Err(Error::InvalidOption(OptionProblem::ClockPolicy));
        match split_policy(s) {
            ("fail", None) => Ok(ClockBackwards::Fail),
            ("wait", Some(Some(max_units))) => Ok(ClockBackwards::Wait { max_units }),
            ("borrow", Some(Some(max_units))) => Ok(ClockBackwards::Borrow { max_units }),
            _ => bad,
        }
    }
}

impl SequenceExhausted {
    /// Reads `wait` or `borrow:N`.
    pub fn parse(s: &str) -> Result<Self> {
        match split_policy(s) {
            ("wait", None) => Ok(SequenceExhausted::Wait),
            ("borrow", Some(Some(max_units))) => Ok(SequenceExhausted::Borrow { max_units }),
            _ => Err(Error::InvalidOption(OptionProblem::ExhaustedPolicy)),
        }
    }
}

impl SequenceStart {
    /// Reads `zero`, `random:N` or `cycle:N` (N >= 1).
    pub fn parse(s: &str) -> Result<Self> {
        match split_policy(s) {
            ("zero", None) => Ok(SequenceStart::Zero),
            ("random", Some(Some(below))) if below >= 1 => Ok(SequenceStart::Random { below }),
            ("cycle", Some(Some(period))) if period >= 1 => Ok(SequenceStart::Cycle { period }),
            _ => Err(Error::InvalidOption(OptionProblem::StartPolicy)),
        }
    }
}

impl fmt::Display for ClockBackwards {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClockBackwards::Fail => f.write_str("fail"),
            ClockBackwards::Wait { max_units } => write!(f, "wait:{max_units}"),
            ClockBackwards::Borrow { max_units } => write!(f, "borrow:{max_units}"),
        }
    }
}

impl fmt::Display for SequenceExhausted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SequenceExhausted::Wait => f.write_str("wait"),
            SequenceExhausted::Borrow { max_units } => write!(f, "borrow:{max_units}"),
        }
    }
}

impl fmt::Display for SequenceStart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SequenceStart::Zero => f.write_str("zero"),
            SequenceStart::Random { below } => write!(f, "random:{below}"),
            SequenceStart::Cycle { period } => write!(f, "cycle:{period}"),
        }
    }
}

/// A generator's options. `Options::default()` gives the defaults below.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Options {
    /// Default `wait:5`: small steps back are waited out, larger ones fail.
    pub clock_backwards: ClockBackwards,
    /// Default `wait`: Twitter's behaviour, IDs never run ahead of the clock.
    pub sequence_exhausted: SequenceExhausted,
    /// Default `random:16`: spreads the low bits under low traffic at a cost
    /// of at most 15 sequence values per time unit.
    pub sequence_start: SequenceStart,
    /// Seed of `random:N`. The std generator replaces 0 with a seed from the
    /// operating system; the pure generator uses it as given.
    pub seed: u64,
    /// The last ID a previous run issued (for example, read back from the
    /// database at start-up): IDs continue strictly above it, and a clock now
    /// behind it is treated as a clock that moved backwards.
    pub resume_after: Option<Id>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            clock_backwards: ClockBackwards::Wait { max_units: 5 },
            sequence_exhausted: SequenceExhausted::Wait,
            sequence_start: SequenceStart::Random { below: 16 },
            seed: 0,
            resume_after: None,
        }
    }
}

impl Options {
    /// Options from the policy strings the bindings pass through unchanged
    /// (`None` keeps the default): `clock_backwards` (`fail`, `wait:N`,
    /// `borrow:N`), `sequence_exhausted` (`wait`, `borrow:N`), `sequence_start`
    /// (`zero`, `random:N`, `cycle:N`).
    ///
    /// ```
    /// use snowmint::{ClockBackwards, Options};
    /// let o = Options::from_policies(Some("borrow:10"), None, Some("zero")).unwrap();
    /// assert_eq!(o.clock_backwards, ClockBackwards::Borrow { max_units: 10 });
    /// assert_eq!(Options::from_policies(Some("sometimes"), None, None).unwrap_err().code(), "invalid_option");
    /// ```
    pub fn from_policies(
        clock_backwards: Option<&str>,
        sequence_exhausted: Option<&str>,
        sequence_start: Option<&str>,
    ) -> Result<Options> {
        let mut o = Options::default();
        if let Some(s) = clock_backwards {
            o.clock_backwards = ClockBackwards::parse(s)?;
        }
        if let Some(s) = sequence_exhausted {
            o.sequence_exhausted = SequenceExhausted::parse(s)?;
        }
        if let Some(s) = sequence_start {
            o.sequence_start = SequenceStart::parse(s)?;
        }
        Ok(o)
    }
}

/// The result of one step of the generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// The next ID.
    Id(Id),
    /// No ID can be issued before this Unix millisecond; ask again then.
    RetryAt(u64),
}

/// The state word of a generator that has issued nothing yet.
///
/// The state is `tick << sequence_bits | sequence` of the last ID. It cannot be
/// all ones for a real ID because [`Config::step`] refuses to issue that one
/// (the last sequence value of the last time unit of a 64-bit wide time and
/// sequence: one ID out of 2^64).
pub(crate) const FRESH: u64 = u64::MAX;

/// The reservation limit of a generator without a lease.
pub(crate) const NO_LIMIT: u64 = u64::MAX;

/// What one step decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Issue { state: u64, id: u64 },
    RetryAt(u64),
}

/// Everything fixed about a generator: the layout, its node values and its
/// policies, with the derived numbers the hot path needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    layout: Layout,
    nodes: Nodes,
    options: Options,
    seq_bits: u32,
    seq_max: u64,
    /// How far ahead of the clock the generator may issue, in units.
    lead: u64,
    /// The effective bound of the start policy (capped at the sequence range).
    start_bound: u64,
    initial: u64,
}

pub(crate) fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Config {
    /// Checks the options against the layout.
    pub fn new(layout: Layout, nodes: Nodes, options: Options) -> Result<Config> {
        // Node values may come from another layout: check them against this one.
        let nodes = layout.nodes_from_values(nodes.values())?;
        let seq = layout.sequence();
        let seq_range = seq.max().saturating_add(1);
        let start_bound = match options.sequence_start {
            SequenceStart::Zero => 1,
            SequenceStart::Random { below: n } | SequenceStart::Cycle { period: n } => {
                if n == 0 {
                    return Err(Error::InvalidOption(OptionProblem::StartPolicy));
                }
                n.min(seq_range)
            }
        };
        let lead_seq = match options.sequence_exhausted {
            SequenceExhausted::Wait => 0,
            SequenceExhausted::Borrow { max_units } => max_units,
        };
        let lead_clock = match options.clock_backwards {
            ClockBackwards::Borrow { max_units } => max_units,
            _ => 0,
        };
        let mut cfg = Config {
            layout,
            nodes,
            options,
            seq_bits: seq.bits(),
            seq_max: seq.max(),
            lead: lead_seq.max(lead_clock),
            start_bound,
            initial: FRESH,
        };
        if let Some(last) = options.resume_after {
            let p = layout
                .decompose(last)
                .map_err(|_| Error::InvalidOption(OptionProblem::ResumeAfter))?;
            cfg.initial = cfg.pack(p.tick(), p.sequence());
        }
        Ok(cfg)
    }

    /// The layout.
    pub const fn layout(&self) -> &Layout {
        &self.layout
    }
    /// The node values.
    pub const fn nodes(&self) -> &Nodes {
        &self.nodes
    }
    /// The options.
    pub const fn options(&self) -> &Options {
        &self.options
    }

    /// The reservation limit for a lease confirmed up to `until_ms`: the
    /// first time unit after the one holding it (0 when it is before the
    /// epoch: nothing may be issued; no limit past the time field's end).
    pub(crate) fn limit_of(&self, until_ms: Option<u64>) -> u64 {
        match until_ms.map(|ms| self.layout.tick_of(ms)) {
            None | Some(Err(Error::TimeOverflow { .. })) => NO_LIMIT,
            Some(Ok(tick)) => tick + 1,
            Some(Err(_)) => 0,
        }
    }

    /// `lease_expired` if the time unit of `state` (an ID just taken) is not
    /// below `limit`.
    #[cfg(feature = "std")]
    #[inline(always)]
    pub(crate) fn within_limit(&self, state: u64, limit: u64) -> Result<()> {
        let tick = self.unpack(state).0;
        if tick >= limit {
            return Err(self.past_limit(tick, limit));
        }
        Ok(())
    }

    #[cold]
    fn past_limit(&self, tick: u64, limit: u64) -> Error {
        Error::LeaseExpired {
            time_ms: self.layout.ms_of_tick(tick),
            reserved_end_ms: self.layout.ms_of_tick(limit),
            end: crate::error::LeaseEnd::Reservation,
        }
    }

    /// The first Unix millisecond a limit does not cover.
    pub(crate) fn end_of(&self, limit: u64) -> Option<u64> {
        (limit != NO_LIMIT).then(|| self.layout.ms_of_tick(limit))
    }

    /// The start of the last issued time unit in `state`.
    pub(crate) fn last_ms(&self, state: u64) -> Option<u64> {
        (state != FRESH).then(|| self.layout.ms_of_tick(self.unpack(state).0))
    }

    /// The state word before the first ID.
    pub(crate) const fn initial_state(&self) -> u64 {
        self.initial
    }

    /// How many time units ahead of the clock the policies let it issue.
    #[cfg(all(feature = "std", not(loom)))]
    pub(crate) const fn lead_units(&self) -> u64 {
        self.lead
    }

    /// The state word of the ID `(tick, seq)`.
    #[cfg(all(feature = "std", not(loom)))]
    pub(crate) fn pack_state(&self, tick: u64, seq: u64) -> u64 {
        self.pack(tick, seq)
    }

    #[inline(always)]
    fn pack(&self, tick: u64, seq: u64) -> u64 {
        // tick < 2^time_bits and time_bits + seq_bits <= 64.
        if self.seq_bits >= 64 {
            seq
        } else {
            (tick << self.seq_bits) | seq
        }
    }

    #[inline(always)]
    fn unpack(&self, state: u64) -> (u64, u64) {
        if self.seq_bits >= 64 {
            (0, state)
        } else {
            (state >> self.seq_bits, state & self.seq_max)
        }
    }

    fn start(&self, tick: u64) -> u64 {
        match self.options.sequence_start {
            SequenceStart::Zero => 0,
            SequenceStart::Random { .. } => {
                splitmix64(self.options.seed ^ tick.wrapping_mul(0xD1B5_4A32_D192_ED03))
                    % self.start_bound
            }
            SequenceStart::Cycle { .. } => tick % self.start_bound,
        }
    }

    #[inline(always)]
    fn issue(&self, tick: u64, seq: u64, limit: u64) -> Result<Step> {
        if tick >= limit {
            // Past the lease's confirmed reservation: never issued.
            return Err(self.past_limit(tick, limit));
        }
        let state = self.pack(tick, seq);
        if state == FRESH {
            return Err(Error::TimeOverflow {
                time_ms: self.layout.ms_of_tick(tick),
                end_ms: self.layout.time_end_ms(),
            });
        }
        Ok(Step::Issue {
            state,
            id: self.layout.compose_raw(tick, seq, self.nodes.bits()),
        })
    }

    /// One step: given the state word, the clock and the reservation
    /// `limit` (the first time unit that may not be issued; `u64::MAX`
    /// without a lease), the next ID (and state) or the time to retry at.
    /// This function is the whole of snowmint's generation semantics;
    /// `docs/SEMANTICS.md` describes it in prose.
    #[inline]
    pub(crate) fn step(&self, state: u64, now_ms: u64, limit: u64) -> Result<Step> {
        let now = self.layout.tick_of(now_ms)?;
        if state == FRESH {
            return self.issue(now, self.start(now), limit);
        }
        let (last, seq) = self.unpack(state);
        if now > last {
            return self.issue(now, self.start(now), limit);
        }
        let behind = last - now;
        if behind > self.lead {
            // The clock is further behind than borrowing can explain: it moved back.
            return match self.options.clock_backwards {
                ClockBackwards::Wait { max_units } if behind - self.lead <= max_units => {
                    Ok(Step::RetryAt(self.layout.ms_of_tick(last - self.lead)))
                }
                _ => Err(Error::ClockMovedBackwards {
                    now_ms,
                    last_ms: self.layout.ms_of_tick(last),
                }),
            };
        }
        if seq < self.seq_max {
            return self.issue(last, seq + 1, limit);
        }
        // The sequence of `last` is used up.
        let next = last + 1;
        if next > self.layout.timestamp().max() {
            return Err(Error::TimeOverflow {
                time_ms: now_ms,
                end_ms: self.layout.time_end_ms(),
            });
        }
        if next - now <= self.lead {
            self.issue(next, self.start(next), limit)
        } else {
            Ok(Step::RetryAt(self.layout.ms_of_tick(next - self.lead)))
        }
    }

    /// Fills `out` from `state` at clock reading `now_ms`, as far as possible
    /// without waiting. Returns the new state, how many IDs were written, and
    /// what stopped it early (a retry time or an error) if it did.
    pub(crate) fn fill(
        &self,
        mut state: u64,
        now_ms: u64,
        limit: u64,
        out: &mut [u64],
    ) -> (u64, usize, Option<Result<u64>>) {
        let seq_shift = self.layout.sequence().shift();
        let mut n = 0;
        while n < out.len() {
            match self.step(state, now_ms, limit) {
                Ok(Step::Issue { state: s, id }) => {
                    out[n] = id;
                    n += 1;
                    state = s;
                    // The rest of this unit's sequence: consecutive values.
                    let (_, seq) = self.unpack(state);
                    let k = ((self.seq_max - seq) as usize).min(out.len() - n);
                    for (i, slot) in out[n..n + k].iter_mut().enumerate() {
                        *slot = id + (((i as u64) + 1) << seq_shift);
                    }
                    n += k;
                    state += k as u64;
                }
                Ok(Step::RetryAt(at)) => return (state, n, Some(Ok(at))),
                Err(e) => return (state, n, Some(Err(e))),
            }
        }
        (state, n, None)
    }
}

/// The pure generator: no clock, no threads, no allocation. The caller passes
/// the time (Unix ms) to every call.
///
/// ```
/// use snowmint::{PureGenerator, Layout, Next, Options, SequenceStart};
/// let layout = Layout::preset("twitter").unwrap();
/// let nodes = layout.nodes_from_pairs([("datacenter", 1), ("worker", 3)]).unwrap();
/// let opts = Options { sequence_start: SequenceStart::Zero, ..Options::default() };
/// let mut g = PureGenerator::new(layout, nodes, opts).unwrap();
/// let Next::Id(a) = g.next(1656432460105).unwrap() else { panic!() };
/// let Next::Id(b) = g.next(1656432460105).unwrap() else { panic!() };
/// assert_eq!(b.get(), a.get() + 1);
/// ```
#[derive(Clone, Debug)]
pub struct PureGenerator {
    cfg: Config,
    state: u64,
    /// The first time unit that may not be issued (see [`Config::limit_of`]).
    limit: u64,
}

impl PureGenerator {
    /// A generator for `layout` with node values `nodes`.
    pub fn new(layout: Layout, nodes: Nodes, options: Options) -> Result<PureGenerator> {
        let cfg = Config::new(layout, nodes, options)?;
        Ok(PureGenerator {
            state: cfg.initial_state(),
            cfg,
            limit: NO_LIMIT,
        })
    }

    /// The generator's configuration.
    pub const fn config(&self) -> &Config {
        &self.cfg
    }

    /// Bounds the generator by a lease's confirmed reservation: from now on
    /// it issues IDs only in time units up to the one holding `until_ms`
    /// (Unix ms), and fails with `lease_expired` beyond it. The bound is set
    /// as given (a later call may lower it); `None` removes it.
    ///
    /// ```
    /// use snowmint::{Layout, Next, Options, PureGenerator};
    /// let layout = Layout::preset("mastodon").unwrap();
    /// let mut g = PureGenerator::new(layout, layout.nodes_from_pairs([]).unwrap(), Options::default()).unwrap();
    /// g.reserve_until(Some(1_000));
    /// assert!(matches!(g.next(1_000), Ok(Next::Id(_))));
    /// assert_eq!(g.next(1_001).unwrap_err().code(), "lease_expired");
    /// ```
    pub fn reserve_until(&mut self, until_ms: Option<u64>) {
        self.limit = self.cfg.limit_of(until_ms);
    }

    /// The first Unix millisecond the reservation does not cover (`None`
    /// without one).
    pub fn reserved_end_ms(&self) -> Option<u64> {
        self.cfg.end_of(self.limit)
    }

    /// The start of the time unit of the last ID issued (or of
    /// `resume_after`), Unix ms; `None` before the first.
    pub fn last_ms(&self) -> Option<u64> {
        self.cfg.last_ms(self.state)
    }

    /// The next ID at clock reading `now_ms`, or when to ask again.
    pub fn next(&mut self, now_ms: u64) -> Result<Next> {
        match self.cfg.step(self.state, now_ms, self.limit)? {
            Step::Issue { state, id } => {
                self.state = state;
                Ok(Next::Id(Id::new(id)))
            }
            Step::RetryAt(at) => Ok(Next::RetryAt(at)),
        }
    }

    /// Fills `out` with consecutive next IDs at clock reading `now_ms`, as far
    /// as possible without waiting. Returns how many were written; when fewer
    /// than `out.len()`, also the retry time (`Ok`) or the error that stopped it.
    pub fn fill(&mut self, now_ms: u64, out: &mut [u64]) -> (usize, Option<Result<u64>>) {
        let (state, n, stop) = self.cfg.fill(self.state, now_ms, self.limit, out);
        self.state = state;
        (n, stop)
    }
}

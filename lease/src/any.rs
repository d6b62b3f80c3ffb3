//! The generator every binding wraps: built from the values the binding
//! converted (layout, node values, options with an optional `lease` URL), a
//! plain `snowmint::Generator` or a leased one behind one type, so that a
//! binding adds the lease option with no logic of its own.

use std::ops::Deref;

use snowmint::{Config, Generator, Id, Layout, Next, StateKey, Value};

use crate::driver::{leased, LeaseInfo, LeasedGenerator};
use crate::error::LeaseError;

/// A thread-safe generator on the system clock, leased or not.
///
/// ```
/// use snowmint::{Layout, Value};
/// use snowmint_lease::AnyGenerator;
/// let dir = std::env::temp_dir().join(format!("snowmint-any-doc-{}", std::process::id()));
/// let nodes = Value::Map(vec![("datacenter".into(), 1u64.into())]);
/// let options = Value::Map(vec![("lease".into(), format!("file:{}", dir.display()).into())]);
/// let g = AnyGenerator::from_values(Layout::preset("twitter")?, &nodes, &options)?;
/// let id = g.next_id()?;
/// assert_eq!(g.config().nodes().values(), &[1, g.lease().unwrap().slot]);
/// g.close()?;
/// assert_eq!(g.next_id().unwrap_err().code(), "lease_expired");
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), snowmint_lease::LeaseError>(())
/// ```
#[derive(Debug)]
pub enum AnyGenerator {
    /// Node values fixed by the user.
    Plain(PlainGenerator),
    /// One node value from a lease.
    Leased(LeasedGenerator),
}

impl AnyGenerator {
    /// A generator for `layout` with the node values `nodes` (a map of
    /// field names to integers, or absent) and `options` (a map with the
    /// keys of [`snowmint::OPTION_KEYS`], or absent). With a `lease` option,
    /// `nodes` leaves out the one field the lease assigns. Without one, node
    /// values that a leased generator of this process holds are refused
    /// (`lease_unavailable`), and while this generator lives a lease of
    /// this process that claims its node values is refused too.
    pub fn from_values(
        layout: Layout,
        nodes: &Value,
        options: &Value,
    ) -> Result<AnyGenerator, LeaseError> {
        let (options, lease) = options.to_options_and_lease()?;
        Ok(match lease {
            None => {
                let g = Generator::new(layout, nodes.to_nodes(&layout)?, options)?;
                let key = leased::register_plain(g.config())?;
                AnyGenerator::Plain(PlainGenerator {
                    gen: Box::new(g),
                    key,
                })
            }
            Some(url) => {
                let pairs = nodes.to_node_pairs()?;
                let fixed: Vec<(&str, u64)> = pairs.iter().map(|(n, v)| (n.as_str(), *v)).collect();
                AnyGenerator::Leased(LeasedGenerator::open(&url, layout, &fixed, options)?)
            }
        })
    }

    /// The configuration: layout, node values in use (the leased one
    /// included), options.
    pub fn config(&self) -> &Config {
        match self {
            AnyGenerator::Plain(g) => g.config(),
            AnyGenerator::Leased(g) => g.config(),
        }
    }

    /// True when both generators draw from one shared state (the same ID
    /// bits in this process).
    pub fn shares_state_with(&self, other: &AnyGenerator) -> bool {
        match (self, other) {
            (AnyGenerator::Plain(a), AnyGenerator::Plain(b)) => a.shares_state_with(b),
            (AnyGenerator::Plain(a), AnyGenerator::Leased(b))
            | (AnyGenerator::Leased(b), AnyGenerator::Plain(a)) => b.shares_state_with(a),
            (AnyGenerator::Leased(a), AnyGenerator::Leased(b)) => a.shares_state_with_leased(b),
        }
    }

    /// The next ID (`lease_expired` past a lease's confirmed reservation or
    /// after [`close`](Self::close)).
    #[inline]
    pub fn next_id(&self) -> snowmint::Result<Id> {
        match self {
            AnyGenerator::Plain(g) => g.next_id(),
            AnyGenerator::Leased(g) => g.next_id(),
        }
    }

    /// The next ID if one can be issued now, or when to ask again.
    #[inline]
    pub fn try_next_id(&self) -> snowmint::Result<Next> {
        match self {
            AnyGenerator::Plain(g) => g.try_next_id(),
            AnyGenerator::Leased(g) => g.try_next_id(),
        }
    }

    /// Fills `out` with increasing IDs.
    pub fn next_ids(&self, out: &mut [u64]) -> snowmint::Result<()> {
        match self {
            AnyGenerator::Plain(g) => g.next_ids(out),
            AnyGenerator::Leased(g) => g.next_ids(out),
        }
    }

    /// The lease's state; `None` without a lease.
    pub fn lease(&self) -> Option<LeaseInfo> {
        match self {
            AnyGenerator::Plain(_) => None,
            AnyGenerator::Leased(g) => Some(g.info()),
        }
    }

    /// Releases the lease (see [`LeasedGenerator::close`]); without one,
    /// nothing happens and the generator keeps working.
    pub fn close(&self) -> Result<(), LeaseError> {
        match self {
            AnyGenerator::Plain(_) => Ok(()),
            AnyGenerator::Leased(g) => g.close(),
        }
    }
}

/// A generator without a lease, made by [`AnyGenerator::from_values`]: its
/// node values stay registered in this process until it is dropped, so that
/// no leased generator of the process takes them meanwhile. Dereferences to
/// the `snowmint::Generator`.
#[derive(Debug)]
pub struct PlainGenerator {
    gen: Box<Generator>,
    key: StateKey,
}

impl Deref for PlainGenerator {
    type Target = Generator;
    fn deref(&self) -> &Generator {
        &self.gen
    }
}

impl Drop for PlainGenerator {
    fn drop(&mut self) {
        leased::unregister_plain(self.key);
    }
}

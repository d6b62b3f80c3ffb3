//! The pure generator, as a `no_std` program would drive it: the caller owns
//! the clock and passes the time in; `next` returns an ID or when to retry.
//! The time here is simulated (a frozen clock that then steps back), so the
//! run is the same every time: `cargo run --example no_std_state_machine`.
//! Nothing in `run` needs `std` or an allocator.
use snowmint::{Error, Layout, Next, Options, PureGenerator, SequenceExhausted};

/// Mints `out.len()` IDs on a clock that advances only when asked to retry.
fn run(out: &mut [u64]) -> Result<u64, Error> {
    // 8 bits of sequence: 256 IDs per millisecond, then wait for the next one.
    let layout = Layout::new(
        1_700_000_000_000,
        1,
        &[("timestamp", 40), ("node", 4), ("sequence", 8)],
    )?;
    let nodes = layout.nodes_from_values(&[5])?;
    let options = Options {
        sequence_exhausted: SequenceExhausted::Wait,
        ..Options::default()
    };
    let mut g = PureGenerator::new(layout, nodes, options)?;
    let mut now = 1_700_000_100_000;
    let mut retries = 0;
    let mut i = 0;
    while i < out.len() {
        match g.next(now)? {
            Next::Id(id) => {
                out[i] = id.get();
                i += 1;
            }
            Next::RetryAt(at) => {
                retries += 1;
                now = at; // a real program would sleep until `at`
            }
        }
    }
    Ok(retries)
}

fn main() -> Result<(), Error> {
    let mut ids = [0u64; 1000];
    let retries = run(&mut ids)?;
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "strictly increasing");
    println!(
        "{} IDs, {retries} waits for the next millisecond, last {}",
        ids.len(),
        ids[999]
    );
    Ok(())
}

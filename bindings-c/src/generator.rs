//! Generators: options, the thread-safe generator (`snowmint::Generator`)
//! and the pure one (`snowmint::PureGenerator`).

use core::ffi::c_char;

use snowmint::{Generator, Layout, Next, Nodes, PureGenerator, Value, OPTION_KEYS};
use snowmint_lease::AnyGenerator;

use crate::ffi::{arg, boundary, boundary_value, cstr, free_handle, out_mut, write_text, R};
use crate::id::{nodes_by_name, nodes_by_value, value_by_name, value_by_position};
use crate::layout::snowmint_layout;
use crate::snowmint_status;

/// Generator options. A zeroed struct (`snowmint_options o = {0};`) or a
/// NULL pointer means every default.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct snowmint_options {
    /// "fail", "wait:N" or "borrow:N" (time units); NULL: the default "wait:5".
    pub clock_backwards: *const c_char,
    /// "wait" or "borrow:N"; NULL: the default "wait".
    pub sequence_exhausted: *const c_char,
    /// "zero", "random:N" or "cycle:N" (N >= 1); NULL: the default "random:16".
    pub sequence_start: *const c_char,
    /// Seed of "random:N". The thread-safe generator replaces 0 with a seed
    /// from the operating system; the pure generator uses it as given.
    pub seed: u64,
    /// When true, IDs continue strictly above `resume_after` (the last ID a
    /// previous run issued).
    pub has_resume_after: bool,
    /// See `has_resume_after`.
    pub resume_after: u64,
    /// A lease URL (`file:/var/lib/app/ids?namespace=orders`): the one node
    /// field not given is leased from that store (see docs/LEASES.md);
    /// NULL: no lease. Only `snowmint_generator_new*` take it.
    pub lease: *const c_char,
}

/// The options map of a C options pointer (NULL: the defaults), as every
/// language hands it to the core (`Value::to_options`, or with a lease
/// `AnyGenerator::from_values`); a NULL string or a false `has_resume_after`
/// is an absent option.
unsafe fn options_of(p: *const snowmint_options) -> R<Value> {
    // SAFETY: NULL or a valid pointer.
    let Some(o) = (unsafe { p.as_ref() }) else {
        return Ok(Value::Absent);
    };
    let text = |p: *const c_char| -> R<Value> {
        Ok(if p.is_null() {
            Value::Absent
        } else {
            // SAFETY: each string is NULL or NUL-terminated.
            unsafe { cstr(p) }?.into()
        })
    };
    // The struct's fields in the order of the core's keys; a key added to
    // the core fails the build here.
    let values: [Value; OPTION_KEYS.len()] = [
        text(o.clock_backwards)?,
        text(o.sequence_exhausted)?,
        text(o.sequence_start)?,
        o.seed.into(),
        o.has_resume_after
            .then_some(o.resume_after)
            .map_or(Value::Absent, Value::from),
        text(o.lease)?,
    ];
    let map = OPTION_KEYS.iter().map(|k| k.to_string()).zip(values);
    Ok(Value::Map(map.collect()))
}

/// A thread-safe, lock-free generator on the system clock. Share one pointer
/// between threads freely. Generators of one process with the same layout and
/// node values share one state, so they never repeat each other's IDs. After
/// `fork()`, the child gets `SNOWMINT_STATUS_PROCESS_FORKED`. With a `lease`
/// option, one node value comes from a lease (see `snowmint_options.lease`).
#[allow(non_camel_case_types)]
pub struct snowmint_generator {
    inner: AnyGenerator,
}

fn new_generator(
    out_ptr: *mut *const snowmint_generator,
    layout: *const snowmint_layout,
    options: *const snowmint_options,
    nodes: impl FnOnce(&Layout) -> R<Value>,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or valid pointers.
        let (out, l, opts) = unsafe { (out_mut(out_ptr)?, arg(layout)?, options_of(options)?) };
        // Options are read before node values, as for the pure generator.
        opts.to_options_and_lease()?;
        let nodes = nodes(&l.layout)?;
        let inner = AnyGenerator::from_values(l.layout, &nodes, &opts)?;
        *out = Box::into_raw(Box::new(snowmint_generator { inner }));
        Ok(())
    })
}

/// A generator for `layout` with node values in node-field order
/// (`node_count` of them; `nodes` may be NULL when 0) and `options` (NULL:
/// defaults). With a lease, give every node field but the last, which the
/// lease assigns. Free it with `snowmint_generator_free`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_new(
    layout: *const snowmint_layout,
    nodes: *const u64,
    node_count: usize,
    options: *const snowmint_options,
    out: *mut *const snowmint_generator,
) -> snowmint_status {
    // SAFETY: `nodes` has `node_count` elements.
    new_generator(out, layout, options, |l| unsafe {
        value_by_position(l, nodes, node_count)
    })
}

/// As `snowmint_generator_new`, with node values by name: `names[i]` has
/// value `values[i]`, for `count` entries in any order. With a lease, leave
/// out the one field the lease assigns.
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_new_by_name(
    layout: *const snowmint_layout,
    names: *const *const c_char,
    values: *const u64,
    count: usize,
    options: *const snowmint_options,
    out: *mut *const snowmint_generator,
) -> snowmint_status {
    // SAFETY: both arrays have `count` elements.
    new_generator(out, layout, options, |_| unsafe {
        value_by_name(names, values, count)
    })
}

/// Frees a generator, releasing its lease if it holds one (as
/// `snowmint_generator_close`, ignoring a failure). NULL does nothing. No
/// other thread may be using it.
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_free(generator: *const snowmint_generator) {
    // SAFETY: a pointer from a generator constructor, freed once.
    boundary_value((), || unsafe { free_handle(generator) })
}

/// Releases the generator's lease: writes the last time unit it issued into
/// the store and frees the slot; later calls fail with
/// `SNOWMINT_STATUS_LEASE_EXPIRED`. A second call, or a generator without a
/// lease, does nothing. `SNOWMINT_STATUS_LEASE_UNAVAILABLE` if the store
/// could not be written (the slot then frees when its lease runs out or the
/// process ends; `snowmint_last_error_message` says why). Other threads may
/// still be calling the generator: what they get is either counted in the
/// release or an error.
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_close(
    generator: *const snowmint_generator,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or a valid pointer.
        let g = unsafe { arg(generator) }?;
        Ok(g.inner.close()?)
    })
}

/// The generator's node values in node-field order (the leased one
/// included) into `buf` of `len` elements, and their number into `*count`.
/// `SNOWMINT_STATUS_BUFFER_TOO_SMALL` if `len` is below it
/// (`SNOWMINT_MAX_NODES` always suffices).
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_nodes(
    generator: *const snowmint_generator,
    buf: *mut u64,
    len: usize,
    count: *mut usize,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or valid pointers.
        let (g, count) = unsafe { (arg(generator)?, out_mut(count)?) };
        let values = g.inner.config().nodes().values();
        if values.len() > len {
            return Err(snowmint_status::BufferTooSmall);
        }
        if !values.is_empty() {
            // SAFETY: the caller promises `len` >= values.len() writable elements.
            let out = unsafe { core::slice::from_raw_parts_mut(buf, values.len()) };
            out.copy_from_slice(values);
        }
        *count = values.len();
        Ok(())
    })
}

/// The generator's lease as one line of JSON, NUL-terminated, into `buf` of
/// `len` bytes (its length without the NUL into `*written`): `null` without a
/// lease, else an object with the keys `store`, `field`, `slot`, `claim`,
/// `hwm_ms`, `reserved_until_ms`, `expires_ms` (null: held while the process
/// lives), `renewals`, `confirmed_at_ms`, `skew_ms`, `timeouts`, `lost`,
/// `last_error` and `space` (docs/LEASES.md). `SNOWMINT_STATUS_BUFFER_TOO_SMALL`
/// if it does not fit (1024 bytes hold it unless the store's name is long).
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_lease_json(
    generator: *const snowmint_generator,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or a valid pointer.
        let g = unsafe { arg(generator) }?;
        let json = g.inner.lease().map_or("null".into(), |i| i.to_json());
        // SAFETY: the caller promises `len` writable bytes at `buf`.
        unsafe { write_text(buf, len, written, &json) }
    })
}

/// The next ID. Waits (sleeps) when a policy says to wait: at most until the
/// next time unit when the sequence is used up, or a few units when the
/// clock stepped back under "wait:N".
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_next_id(
    generator: *const snowmint_generator,
    out: *mut u64,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or valid pointers.
        let (g, out) = unsafe { (arg(generator)?, out_mut(out)?) };
        *out = g.inner.next_id()?.get();
        Ok(())
    })
}

/// What `snowmint_next.value` holds.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum snowmint_next_kind {
    /// `value` is the next ID.
    Id = 0,
    /// No ID before Unix ms `value`; ask again then (nothing was consumed).
    RetryAt = 1,
}

/// One step of a generator that does not wait.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct snowmint_next {
    /// What `value` is.
    pub kind: snowmint_next_kind,
    /// The ID, or the Unix ms to retry at.
    pub value: u64,
}

fn next_of(n: Next) -> snowmint_next {
    let (kind, value) = match n {
        Next::Id(id) => (snowmint_next_kind::Id, id.get()),
        Next::RetryAt(ms) => (snowmint_next_kind::RetryAt, ms),
    };
    snowmint_next { kind, value }
}

/// The next ID if one can be issued now, else the time to retry at. Never
/// blocks (for event loops).
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_try_next_id(
    generator: *const snowmint_generator,
    out: *mut snowmint_next,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or valid pointers.
        let (g, out) = unsafe { (arg(generator)?, out_mut(out)?) };
        *out = next_of(g.inner.try_next_id()?);
        Ok(())
    })
}

/// Fills `buf` with `n` increasing IDs (one atomic operation per time unit's
/// run of IDs), waiting when a policy says to. `buf` may be NULL when `n` is
/// 0; `n` above 2^32 is `SNOWMINT_STATUS_INVALID_OPTION`. On an error the
/// contents of `buf` are unspecified and the IDs it holds must not be used.
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_next_ids(
    generator: *const snowmint_generator,
    buf: *mut u64,
    n: usize,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or a valid generator.
        let g = unsafe { arg(generator) }?;
        let n = Generator::<snowmint::SystemClock>::check_batch(n as u64)?;
        if n == 0 {
            return Ok(());
        }
        if buf.is_null() {
            return Err(snowmint_status::NullArgument);
        }
        // SAFETY: non-NULL, and the caller promises `n` writable elements.
        let buf = unsafe { core::slice::from_raw_parts_mut(buf, n) };
        Ok(g.inner.next_ids(buf)?)
    })
}

/// True when both generators draw from one shared state (same layout and
/// node values in one process). False when either is NULL.
#[no_mangle]
pub unsafe extern "C" fn snowmint_generator_shares_state(
    a: *const snowmint_generator,
    b: *const snowmint_generator,
) -> bool {
    boundary_value(false, || {
        // SAFETY: NULL or valid generators.
        match unsafe { (a.as_ref(), b.as_ref()) } {
            (Some(a), Some(b)) => a.inner.shares_state_with(&b.inner),
            _ => false,
        }
    })
}

/// The pure generator: a state machine that is handed the time, for tests,
/// simulations and your own clock. Not thread-safe (use one per thread, or
/// lock); it shares state with nothing.
#[allow(non_camel_case_types)]
pub struct snowmint_pure_generator {
    inner: PureGenerator,
}

fn new_pure(
    out_ptr: *mut *mut snowmint_pure_generator,
    layout: *const snowmint_layout,
    options: *const snowmint_options,
    nodes: impl FnOnce(&Layout) -> R<Nodes>,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or valid pointers.
        let (out, l, opts) = unsafe { (out_mut(out_ptr)?, arg(layout)?, options_of(options)?) };
        // Options are read before node values.
        let opts = opts.to_options()?;
        let nodes = nodes(&l.layout)?;
        let inner = PureGenerator::new(l.layout, nodes, opts)?;
        *out = Box::into_raw(Box::new(snowmint_pure_generator { inner }));
        Ok(())
    })
}

/// A pure generator for `layout`, node values in node-field order, and
/// `options` (NULL: defaults; the seed is used as given, 0 included).
#[no_mangle]
pub unsafe extern "C" fn snowmint_pure_generator_new(
    layout: *const snowmint_layout,
    nodes: *const u64,
    node_count: usize,
    options: *const snowmint_options,
    out: *mut *mut snowmint_pure_generator,
) -> snowmint_status {
    // SAFETY: `nodes` has `node_count` elements.
    new_pure(out, layout, options, |l| unsafe {
        nodes_by_value(l, nodes, node_count)
    })
}

/// As `snowmint_pure_generator_new`, with node values by name.
#[no_mangle]
pub unsafe extern "C" fn snowmint_pure_generator_new_by_name(
    layout: *const snowmint_layout,
    names: *const *const c_char,
    values: *const u64,
    count: usize,
    options: *const snowmint_options,
    out: *mut *mut snowmint_pure_generator,
) -> snowmint_status {
    // SAFETY: both arrays have `count` elements.
    new_pure(out, layout, options, |l| unsafe {
        nodes_by_name(l, names, values, count)
    })
}

/// The next ID at clock reading `now_ms` (Unix ms), or when to retry. On an
/// error (or a retry) the generator's state is unchanged.
#[no_mangle]
pub unsafe extern "C" fn snowmint_pure_generator_next(
    generator: *mut snowmint_pure_generator,
    now_ms: u64,
    out: *mut snowmint_next,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or valid pointers; the caller does not share `generator`.
        let (g, out) = unsafe { (generator.as_mut(), out_mut(out)?) };
        let g = g.ok_or(snowmint_status::NullArgument)?;
        *out = next_of(g.inner.next(now_ms)?);
        Ok(())
    })
}

/// Bounds the generator by a lease's confirmed reservation: IDs only in time
/// units up to the one holding `until_ms` (Unix ms), then
/// `SNOWMINT_STATUS_LEASE_EXPIRED`. With `has_until` false the bound is removed.
#[no_mangle]
pub unsafe extern "C" fn snowmint_pure_generator_reserve_until(
    generator: *mut snowmint_pure_generator,
    has_until: bool,
    until_ms: u64,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or a valid pointer the caller does not share.
        let g = unsafe { generator.as_mut() }.ok_or(snowmint_status::NullArgument)?;
        g.inner.reserve_until(has_until.then_some(until_ms));
        Ok(())
    })
}

/// Frees a pure generator. NULL does nothing.
#[no_mangle]
pub unsafe extern "C" fn snowmint_pure_generator_free(generator: *mut snowmint_pure_generator) {
    // SAFETY: a pointer from a pure generator constructor, freed once.
    boundary_value((), || unsafe { free_handle(generator.cast_const()) })
}

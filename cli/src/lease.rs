//! `lease init`, `lease list` and `lease release`: operating a lease store
//! (the work is `snowmint_lease::ops`; here only its output).

use std::io::Write;

use serde_json::{json, Value};
use snowmint_lease::ops::{self, Listing, OpsError, Released};
use snowmint_lease::{Marker, MarkerState, SlotRecord, SlotState};

use crate::args::LeaseCommand;
use crate::output::{date, Failure};

/// Runs one `lease` subcommand.
pub(crate) fn lease(
    command: LeaseCommand,
    json: bool,
    out: &mut impl Write,
) -> Result<(), Failure> {
    match command {
        LeaseCommand::Init { store, wait } => init(&store, wait, json, out)?,
        LeaseCommand::List { store } => {
            let l = ops::list(&store)?;
            if json {
                list_json(&l, out)?;
            } else {
                list_text(&l, out)?;
            }
        }
        LeaseCommand::Release {
            store,
            space,
            slot,
            force,
            reset_hwm,
        } => {
            let r = match reset_hwm {
                Some(time) => ops::reset_hwm(&store, space.as_deref(), slot, parse_time(&time)?)?,
                None => ops::release(&store, space.as_deref(), slot, force)?,
            };
            released(&r, json, out)?;
        }
    }
    Ok(())
}

/// `lease init`: ready, or fenced until when (Redis); with `wait`, waits
/// for the fence to pass (asking the store again: it may have restarted).
fn init(store: &str, wait: bool, json: bool, out: &mut impl Write) -> Result<(), Failure> {
    loop {
        let i = ops::initialize(store)?;
        let fenced = i.fence.filter(|f| f.fence_ms > f.now_ms);
        let fence_ms = i.fence.map(|f| f.fence_ms);
        if json {
            let v = json!({
                "store": i.store,
                "ready": fenced.is_none(),
                "fence_ms": fence_ms,
                "fence_until": fence_ms.filter(|&f| f > 0).map(date),
                "now_ms": i.fence.map(|f| f.now_ms),
            });
            writeln!(out, "{v}")?;
        } else if let Some(f) = fenced {
            writeln!(
                out,
                "{}: fenced until {} ({} ms from now): leases on this server issue IDs from \
                 then{}",
                i.store,
                date(f.fence_ms),
                f.fence_ms - f.now_ms,
                if wait {
                    "; waiting"
                } else {
                    " (--wait waits for it)"
                }
            )?;
        } else {
            writeln!(out, "{}: ready", i.store)?;
        }
        match fenced {
            Some(f) if wait => {
                out.flush()?;
                std::thread::sleep(std::time::Duration::from_millis(f.fence_ms - f.now_ms));
            }
            _ => return Ok(()),
        }
    }
}

/// What to do about a refusal, when the message alone does not say how
/// (printed after it by `main`).
pub(crate) fn hint(e: &snowmint::Error) -> Option<String> {
    let snowmint::Error::LeaseFenced {
        now_ms,
        resume_ms,
        cause,
    } = *e
    else {
        return None;
    };
    let left = resume_ms.saturating_sub(now_ms);
    let init = match cause {
        snowmint::FenceCause::StoreForgot | snowmint::FenceCause::StoreChanged => {
            "; or, when the store starts, run `snowmint lease init --store URL --wait` once \
             before the first lease"
        }
        _ => "",
    };
    Some(format!(
        "hint: IDs resume at {} ({left} ms from now): run again then, or pass \
         --clock-backwards wait:N to wait here (N in the layout's time units, covering those \
         ms){init}",
        date(resume_ms),
    ))
}

/// One slot as `list --json` (and `release --json`'s `before`) write it.
fn slot_json(space: &str, r: &SlotRecord) -> Value {
    json!({
        "type": "slot",
        "space": space,
        "slot": r.slot,
        "state": r.state.name(),
        // A free slot's record may keep its last holder's token: not shown.
        "holder": if r.state == SlotState::Free || r.token.is_empty() { Value::Null } else { json!(r.token) },
        "claim": r.counter,
        "expires_ms": r.expires_ms,
        "expires": r.expires_ms.map(date),
        "hwm_ms": r.hwm_ms,
        "reserved_until": date(r.hwm_ms),
    })
}

/// `list --json`: a "space" object, then one "slot" object per slot.
fn list_json(l: &Listing, out: &mut impl Write) -> Result<(), Failure> {
    for s in &l.spaces {
        let v = json!({
            "type": "space",
            "store": l.store,
            "space": s.key,
            "namespace": s.namespace,
            "leased": s.leased,
            "slots": s.slots,
            "now_ms": l.now_ms,
            "text": s.text,
        });
        // Redis and SQL: the marker and its fence (why claims may be fenced).
        let v = match &s.marker {
            Some(m) => {
                let mut v = v;
                v["marker"] = json!(m.state.name());
                v["marker_server"] = json!(m.server);
                v["fence_ms"] = json!(m.fence_ms);
                v["fence_until"] = json!((m.fence_ms > 0).then(|| date(m.fence_ms)));
                v["fence_active"] = json!(m.fence_ms > l.now_ms);
                v
            }
            None => v,
        };
        writeln!(out, "{v}")?;
        for r in &s.records {
            writeln!(out, "{}", slot_json(&s.key, r))?;
        }
    }
    Ok(())
}

/// `list`: each space's heading, then a table of its slots.
fn list_text(l: &Listing, out: &mut impl Write) -> Result<(), Failure> {
    writeln!(out, "store {}  (store clock {})", l.store, date(l.now_ms))?;
    if l.spaces.is_empty() {
        writeln!(out, "no slot spaces")?;
    }
    for s in &l.spaces {
        writeln!(out)?;
        writeln!(
            out,
            "space {}  namespace {}  leased {}  {} slots, {} claimed at some time",
            s.key,
            s.namespace.as_deref().unwrap_or("(none)"),
            s.leased,
            s.slots.map_or("?".to_string(), |n| n.to_string()),
            s.records.len()
        )?;
        if let Some(m) = &s.marker {
            writeln!(out, "{}", marker_text(m, l.now_ms))?;
        }
        writeln!(
            out,
            "{:>6}  {:<7}  {:>6}  {:<8}  {:<24}  reserved until (hwm)",
            "slot", "state", "claim", "holder", "expires"
        )?;
        for r in &s.records {
            let holder = if r.state == SlotState::Free || r.token.is_empty() {
                "-".to_string()
            } else {
                r.token.chars().take(8).collect()
            };
            let expires = match (r.state, r.expires_ms) {
                (SlotState::Free, _) => "-".to_string(),
                (_, Some(ms)) => date(ms),
                (_, None) => "while the process lives".to_string(),
            };
            writeln!(
                out,
                "{:>6}  {:<7}  {:>6}  {:<8}  {:<24}  {}",
                r.slot,
                r.state.name(),
                r.counter,
                holder,
                expires,
                date(r.hwm_ms)
            )?;
        }
    }
    Ok(())
}

/// A Redis or SQL space's marker line: its state, and the fence claims apply.
fn marker_text(m: &Marker, now_ms: u64) -> String {
    let state = match m.state {
        MarkerState::Present => "present (names this server)".to_string(),
        MarkerState::Missing => "missing (the next claim fences the space)".to_string(),
        MarkerState::OtherServer => format!(
            "names another server ({}): the store lost data since; the next claim fences \
             the space and older claims' renewals fail as lost",
            m.server.as_deref().unwrap_or("?")
        ),
    };
    let fence = if m.fence_ms > now_ms {
        format!(
            "fence active until {}: claims start every slot at or above it",
            date(m.fence_ms)
        )
    } else if m.fence_ms > 0 {
        format!("fence ended {}", date(m.fence_ms))
    } else {
        "no fence".to_string()
    };
    format!("marker {state}; {fence}")
}

/// `--reset-hwm`'s TIME: Unix ms (digits only) or an RFC 3339 date.
fn parse_time(s: &str) -> Result<u64, Failure> {
    let ms = if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse::<u64>().ok()
    } else {
        snowmint::time::parse_rfc3339(s).and_then(|ms| u64::try_from(ms).ok())
    };
    ms.ok_or_else(|| {
        Failure::Ops(OpsError::Refused(format!(
            "--reset-hwm takes an RFC 3339 date (2026-11-25T18:00:00Z) or Unix ms, not '{}'",
            s.chars().take(64).collect::<String>()
        )))
    })
}

/// `release`: what was freed, or that the slot was free already.
fn released(r: &Released, json: bool, out: &mut impl Write) -> Result<(), Failure> {
    if json {
        let v = json!({
            "store": r.store,
            "space": r.space,
            "slot": r.slot,
            "released": r.before.is_some(),
            "reset_hwm_ms": r.reset_hwm_ms,
            "before": r.before.as_ref().map(|b| slot_json(&r.space, b)),
        });
        writeln!(out, "{v}")?;
        return Ok(());
    }
    match &r.before {
        Some(b) if r.reset_hwm_ms.is_some() => writeln!(
            out,
            "slot {} of {} released (was {}, claim {}); hwm reset from {} to {}",
            r.slot,
            r.space,
            b.state.name(),
            b.counter,
            date(b.hwm_ms),
            date(r.reset_hwm_ms.unwrap_or(b.hwm_ms))
        )?,
        Some(b) => writeln!(
            out,
            "slot {} of {} released (was {}, claim {}); hwm kept: reserved until {}",
            r.slot,
            r.space,
            b.state.name(),
            b.counter,
            date(b.hwm_ms)
        )?,
        None => writeln!(
            out,
            "slot {} of {} is free: nothing to release",
            r.slot, r.space
        )?,
    }
    Ok(())
}

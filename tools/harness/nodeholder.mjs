// A lease holder on the Node package (docs/HARNESS.md, "Clients"), as
// pyholder.py is on the Python binding: a leased snowmint Generator issuing
// flat out, writing what a CLI holder writes with --on-demand --lease-lines,
// so check.py reads it the same way: after each burst, its IDs one per line,
// then {"lease": ...} (the lease as it stands once the burst was issued, its
// fields named as the CLI and the Python binding name them). Before it writes
// a burst, it appends it to its record of issued IDs (--issued-log: one line
// of decimal IDs separated by spaces, one write(2)), as the CLI does: the
// record holds every ID issued, written or not. Reads nothing.
// Refusals it can wait out, it waits out with the same generator, as an
// application would (pyholder.py does the same): `lease_fenced` (the slot's
// previous holder reserved past the clock) for the time the error names, and
// `lease_expired` while renewals fail (the store unreachable, or this process
// stopped), until a renewal is confirmed, for at most the lease's TTL (the
// URL's ttl_ms): past it the slot may be another holder's, and a store this
// URL no longer reaches as it was (a primary demoted to a replica after a
// promotion) may never confirm one. Any other snowmint error (no free
// slot, the lease lost): it closes the generator (releasing its slot) and
// exits 1, and the harness's supervisor restarts it. An earlier version
// exited on every refusal without closing: a restarted holder was fenced by
// its predecessor's unreleased reservation, exited again, and so on.
//
//   node nodeholder.mjs --project DIR --lease URL --layout JSON --datacenter N \
//     --issued-log FILE [--burst N]
//
// DIR is the project the harness installed the packed tarballs into
// (target/harness/node): `snowmint` is required from there, as a user's
// project requires it. Run in a client host's namespace; under libfaketime
// for holder-clock-step, which then steps the addon's clock too.

import { createRequire } from 'node:module';
import { openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values: a } = parseArgs({
  options: {
    project: { type: 'string' },
    lease: { type: 'string' },
    layout: { type: 'string' },
    datacenter: { type: 'string' },
    'issued-log': { type: 'string' },
    burst: { type: 'string', default: '100' },
  },
});
for (const k of ['project', 'lease', 'layout', 'datacenter', 'issued-log']) {
  if (!a[k]) {
    process.stderr.write(`nodeholder: --${k} is required\n`);
    process.exit(2);
  }
}
const { Generator, Layout, __backend } = createRequire(join(a.project, 'package.json'))('snowmint');
if (__backend !== 'native') {
  // The WebAssembly fallback has no lease stores.
  process.stderr.write(`nodeholder: the native addon did not load (${__backend})\n`);
  process.exit(2);
}

// LeaseInfo's camelCase names as the CLI's lease lines spell them.
const snake = (info) =>
  Object.fromEntries(Object.entries(info).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]));

// Synchronous writes to the holder's output file (fd 1): each burst and its
// lease line are on disk before the next burst is issued.
const out = (text) => {
  const buf = Buffer.from(text);
  for (let off = 0; off < buf.length; ) off += writeSync(1, buf, off);
};

// The record: appended with one write(2) per burst (a regular file writes
// it all, else it throws), before the burst is written.
const record = openSync(a['issued-log'], 'a', 0o600);
const recordIds = (ids) => {
  const buf = Buffer.from(`${ids.join(' ')}\n`);
  if (writeSync(record, buf) !== buf.length) throw new Error(`a short write to ${a['issued-log']}`);
};

// The lease URL's ttl_ms (the lease's default, 30 s, without it).
const ttlMs = Number(/[?&]ttl_ms=(\d+)/.exec(a.lease)?.[1] ?? 30_000);

// How long to wait before asking again after a refusal, in ms, or null for
// a refusal that ends this generator (see the header); `expiredForMs`: how
// long the lease has been expired. Each wait is logged with the refusal's
// message (check.py reads `no ID before T ms` there).
const waitFor = (e, expiredForMs) => {
  if (e?.code === 'lease_fenced') {
    const left = /\((?:now \d+ ms, )?(\d+) ms to go\)/.exec(e.message);
    return Math.min(Number(left ? left[1] : 100), 30_000) + 1;
  }
  if (e?.code === 'lease_expired' && e.message.startsWith('lease expired:') && expiredForMs < ttlMs) {
    return 100;
  }
  return null;
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let gen;
try {
  // The CLI holder's options: the same layout, node and clock policy.
  gen = new Generator(Layout.fromJson(a.layout), { datacenter: Number(a.datacenter) }, {
    lease: a.lease,
    clockBackwards: 'wait:5',
  });
  const burst = Number(a.burst);
  let waiting = null; // the code of the refusal being waited out
  let since = 0; // when that refusal was first seen (performance.now())
  for (;;) {
    let ids;
    try {
      ids = gen.nextIds(burst);
    } catch (e) {
      const now = performance.now();
      if (waiting !== e?.code) since = now;
      const ms = waitFor(e, now - since);
      if (ms === null) throw e;
      // A fence is logged each time (its time moves); expiry once per spell.
      if (e.code === 'lease_fenced' || waiting !== e.code) {
        process.stderr.write(`nodeholder: ${e.code}: ${e.message}; waiting\n`);
      }
      waiting = e.code;
      await sleep(ms);
      continue;
    }
    if (waiting !== null) process.stderr.write(`nodeholder: issuing again after ${waiting}\n`);
    waiting = null;
    recordIds(ids);
    // Read after the burst: the confirmation it shows (renewals,
    // confirmedAtMs) is the one in force at the burst's IDs or a later one.
    out(`${ids.join('\n')}\n${JSON.stringify({ lease: snake(gen.lease) })}\n`);
    // The CLI holder's feeder's pace: a burst every 10 ms at most.
    await sleep(10);
  }
} catch (e) {
  process.stderr.write(`nodeholder: ${e && e.code ? `${e.code}: ` : ''}${e && e.message}\n`);
  try {
    gen?.close();
  } catch (c) {
    process.stderr.write(`nodeholder: close: ${c && c.message}\n`);
  }
  process.exit(1);
}

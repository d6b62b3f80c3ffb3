// A Node client of the HTTP API with fetch (no dependencies): 100 IDs from
// /v1/ids, increasing, printed one a line. `cargo xtask test server` runs it
// with BASE (http://HOST:PORT) and TOKEN in the environment.
const headers = { Authorization: `Bearer ${process.env.TOKEN}` };
try {
  const r = await fetch(`${process.env.BASE}/v1/ids?count=100`, { headers, signal: AbortSignal.timeout(10000) });
  if (r.status !== 200) throw new Error(`status ${r.status}`);
  const body = await r.json();
  if (body.ids.length !== 100) throw new Error("wrong count");
  // IDs are strings: BigInt keeps all 64 bits.
  const ids = body.ids.map(BigInt);
  for (let i = 1; i < ids.length; i++) if (ids[i] <= ids[i - 1]) throw new Error("not increasing");
  console.log(body.ids.join("\n"));
} catch (e) {
  console.error(e);
  process.exit(1);
}

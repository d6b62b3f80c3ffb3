// Every case of every file in vectors/, as checks on a package's public API,
// without a test framework: tests/js/vectors.test.mjs registers them with
// node:test, tests/js/check-vectors.mjs runs them on any JavaScript runtime
// (Node, Bun, Deno: the js part, xtask/src/part_js.rs). Only node:assert is
// imported, which every one of them has.
import assert from 'node:assert/strict'

import { argument, jsOptions, throwsCode } from './helpers.mjs'

const str = (xs) => Array.from(xs, (x) => x.toString())

/**
 * The checks: `[{ group, name, run }]`, `group` the vector file, `run` a
 * function that throws on a failure. `pkg` is the package's module object,
 * `vectors(name)` one parsed file of vectors/.
 */
export function vectorCases(pkg, vectors) {
  const { Layout, Generator, PureGenerator } = pkg
  const cases = []
  let group = ''
  const describe = (name, body) => {
    group = name
    body()
  }
  const test = (name, run) => cases.push({ group, name, run })

  describe('layouts.json', () => {
    const { cases } = vectors('layouts')
    test('has cases', () => assert.ok(cases.length > 0))
    for (const c of cases) {
      test(c.name, () => {
        if (c.error && c.now_ms !== undefined) {
          // The layout reads, but a generator refuses an epoch later than the
          // clock. The system clock stands in for `now_ms`: both are before
          // the epoch.
          const layout = Layout.parse(c.layout)
          assert.ok(Date.now() < layout.epochMs, 'the case needs an epoch in the future')
          throwsCode(() => new Generator(layout, {}), c.error)
          throwsCode(() => new Generator(c.layout, {}), c.error)
          return
        }
        if (c.error) {
          throwsCode(() => Layout.parse(c.layout), c.error)
          return
        }
        const e = c.expect
        for (const layout of [Layout.parse(c.layout), Layout.fromJson(e.json), Layout.parse(e.json)]) {
          assert.equal(layout.toJson(), e.json)
          assert.equal(layout.epochMs, e.epoch_ms)
          assert.equal(layout.timeUnitMs, e.time_unit_ms)
          assert.equal(layout.totalBits, e.total_bits)
          assert.equal(layout.maxId, BigInt(e.max_id))
          assert.equal(layout.timeEndMs, e.time_end_ms)
          assert.equal(layout.i64EndMs, e.i64_end_ms)
          assert.equal(layout.jsSafeEndMs, e.js_safe_end_ms)
          assert.deepEqual(layout.fields.map((f) => ({ ...f })), e.fields)
          assert.equal(layout.presetName, e.preset_name)
        }
        if (e.preset_name !== null) {
          assert.equal(Layout.preset(e.preset_name).toJson(), e.json)
        }
      })
    }
  })

  describe('ids.json', () => {
    const v = vectors('ids')

    test('decode', () => {
      assert.ok(v.decode.length > 0)
      for (const c of v.decode) {
        const layout = Layout.parse(c.layout)
        const ids = [BigInt(c.id), c.id]
        if (Number.isSafeInteger(Number(c.id))) ids.push(Number(c.id))
        for (const id of ids) {
          const via = [() => pkg.decode(id, c.layout), () => pkg.decode(id, layout), () => layout.decode(id)]
          for (const run of via) {
            if (c.error) {
              throwsCode(run, c.error)
              continue
            }
            const p = run()
            const e = c.expect
            const at = `${c.layout} ${c.id}`
            assert.equal(p.id, BigInt(c.id), at)
            assert.equal(p.timestampMs, e.timestamp_ms, at)
            assert.ok(p.date instanceof Date, at)
            assert.equal(p.date.getTime(), e.timestamp_ms, at)
            assert.equal(p.sequence, e.sequence, at)
            assert.deepEqual({ ...p.nodes }, e.nodes, at)
            for (const [name, value] of Object.entries(e.nodes)) assert.equal(p[name], value, at)
          }
        }
        if (c.error) continue
        assert.equal(pkg.toBase32(BigInt(c.id)), c.expect.base32)
        assert.deepEqual(str(pkg.idBounds(c.layout, c.expect.timestamp_ms)), c.expect.bounds)
        assert.deepEqual(str(layout.idBounds(c.expect.timestamp_ms)), c.expect.bounds)
      }
    })

    test('compose', () => {
      assert.ok(v.compose.length > 0)
      for (const c of v.compose) {
        const layout = Layout.parse(c.layout)
        const via = [
          () => pkg.compose(c.layout, c.timestamp_ms, c.sequence, c.nodes),
          () => pkg.compose(layout, c.timestamp_ms, c.sequence, c.nodes),
          () => layout.compose(c.timestamp_ms, c.sequence, c.nodes),
        ]
        for (const run of via) {
          if (c.error) throwsCode(run, c.error)
          else assert.equal(run(), BigInt(c.expect), JSON.stringify(c))
        }
      }
    })

    test('bounds', () => {
      assert.ok(v.bounds.length > 0)
      for (const c of v.bounds) {
        const layout = Layout.parse(c.layout)
        const via = [() => pkg.idBounds(c.layout, c.timestamp_ms), () => layout.idBounds(c.timestamp_ms)]
        for (const run of via) {
          if (c.error) {
            throwsCode(run, c.error)
            continue
          }
          const b = run()
          assert.ok(Array.isArray(b) && b.length === 2)
          assert.equal(typeof b[0], 'bigint')
          assert.deepEqual(str(b), c.expect, JSON.stringify(c))
        }
      }
    })

    test('fits', () => {
      assert.ok(v.fits.length > 0)
      for (const c of v.fits) {
        for (const id of [BigInt(c.id), c.id]) {
          const names = Layout.presets().filter((n) => Layout.preset(n).isPlausible(id, c.now_ms))
          assert.deepEqual(names, c.expect, c.id)
        }
      }
    })
  })

  describe('strings.json', () => {
    const v = vectors('strings')

    test('encode', () => {
      assert.ok(v.encode.length > 0)
      for (const c of v.encode) {
        const id = BigInt(c.id)
        for (const format of ['decimal', 'base32', 'base62']) {
          assert.equal(pkg.formatId(id, format), c[format])
          assert.equal(pkg.formatId(c.id, format), c[format])
          assert.equal(pkg.parseId(c[format], format), id)
        }
        assert.equal(pkg.toBase32(id), c.base32)
        assert.equal(pkg.toBase62(id), c.base62)
        assert.equal(pkg.fromBase32(c.base32), id)
        assert.equal(pkg.fromBase62(c.base62), id)
      }
    })

    test('parse', () => {
      assert.ok(v.parse.length > 0)
      for (const c of v.parse) {
        const via = [() => pkg.parseId(c.input, c.format)]
        if (c.format === 'base32') via.push(() => pkg.fromBase32(c.input))
        if (c.format === 'base62') via.push(() => pkg.fromBase62(c.input))
        if (c.format === 'decimal') via.push(() => pkg.parseId(pkg.formatId(c.input, 'decimal'), 'decimal'))
        for (const run of via) {
          if (c.error) throwsCode(run, c.error)
          else assert.equal(run(), BigInt(c.expect), JSON.stringify(c))
        }
      }
    })

    test('js_numbers', () => {
      assert.ok(v.js_numbers.length > 0)
      for (const c of v.js_numbers) {
        // The vector holds JavaScript source text for a number literal.
        const n = Number(c.number)
        assert.equal(typeof n, 'number')
        const runs = [() => pkg.formatId(n, 'decimal'), () => pkg.toBase32(n), () => pkg.decode(n, 'mastodon').id]
        if (c.error) {
          for (const run of runs) throwsCode(run, c.error, RangeError)
        } else {
          assert.equal(pkg.formatId(n, 'decimal'), c.expect)
          assert.equal(pkg.toBase32(n), pkg.toBase32(BigInt(c.expect)))
          assert.equal(pkg.decode(n, 'mastodon').id, BigInt(c.expect))
        }
      }
    })
  })

  describe('arguments.json', () => {
    // Each ID argument decoded under a 64-bit layout: the same ID or the same
    // error as formatting it (tests/js/arguments.test.mjs, on Node). Run on
    // every runtime, as each may reach the core its own way (on Deno, a
    // bigint goes through Deno.dlopen, which would wrap one outside 0..2^64).
    const ids = vectors('arguments').cases.filter((c) => c.arg === 'id')
    test('has id cases', () => assert.ok(ids.length > 0))
    const CLASSES = { type: TypeError, range: RangeError }
    for (const c of ids) {
      test(`decode ${JSON.stringify(c.value)}`, () => {
        const layout = Layout.preset('mastodon')
        const via = [() => layout.decode(argument(c.value)), () => pkg.decode(argument(c.value), 'mastodon')]
        for (const run of via) {
          if (c.error) throwsCode(run, c.error, CLASSES[c.class] ?? Error)
          else assert.equal(run().id, BigInt(c.expect))
        }
      })
    }
  })

  describe('generate.json', () => {
    const { cases } = vectors('generate')
    test('has cases', () => assert.ok(cases.length > 0))
    for (const c of cases) {
      test(c.name, () => {
        const make = () => new PureGenerator(c.layout, c.nodes, jsOptions(c.options))
        if (c.error) {
          throwsCode(make, c.error)
          throwsCode(() => new PureGenerator(Layout.parse(c.layout), c.nodes, jsOptions(c.options)), c.error)
          return
        }
        const g = make()
        c.steps.forEach((s, i) => {
          const at = `step ${i} at ${s.now_ms}`
          if ('reserve_until_ms' in s) {
            g.reserveUntil(s.reserve_until_ms)
            return
          }
          if (s.error) {
            throwsCode(() => g.next(s.now_ms), s.error)
            return
          }
          const r = g.next(s.now_ms)
          if (s.id !== undefined) assert.deepEqual(r, { id: BigInt(s.id) }, at)
          else assert.deepEqual(r, { retryAt: s.retry_at }, at)
        })
      })
    }
  })

  describe('codes.json', () => {
    const { codes } = vectors('codes')
    const twitter = { datacenter: 1, worker: 1 }
    // One call per code that must fail with it, through the public API.
    const triggers = {
      invalid_layout: () => Layout.parse('{"epoch_ms":0,"fields":[["timestamp",60],["sequence",12]]}'),
      unknown_preset: () => Layout.preset('nope'),
      unknown_field: () => pkg.compose('twitter', 1763812800000, 0, { ...twitter, rack: 1 }),
      missing_node: () => pkg.compose('twitter', 1763812800000, 0, { worker: 1 }),
      node_out_of_range: () => pkg.compose('twitter', 1763812800000, 0, { datacenter: 32, worker: 1 }),
      invalid_option: () => new Generator('twitter', twitter, { clockBackwards: 'sometimes' }),
      time_before_epoch: () => pkg.compose('twitter', 0, 0, twitter),
      time_overflow: () => pkg.idBounds('baidu', 1763812800000),
      clock_moved_backwards: () => {
        const g = new PureGenerator('twitter', twitter, { clockBackwards: 'fail' })
        g.next(1763812800000)
        g.next(1763812799000)
      },
      invalid_id: () => pkg.parseId('x', 'decimal'),
      lease_expired: () => {
        const g = new PureGenerator('twitter', twitter)
        g.reserveUntil(1763812800000)
        g.next(1763812800001)
      },
    }
    // Codes no JavaScript call can produce, and why.
    const unreachable = {
      // Node has no fork(): child processes load the addon afresh, so a
      // generator is never inherited across a fork.
      process_forked: 'no fork() in JavaScript',
      // Leases come with their stores; until then no call can fail to get one.
      lease_unavailable: 'no lease store yet',
      // Only a leased generator whose store fenced its slot (a Redis server
      // that may have forgotten, a previous holder's reservation) raises it:
      // cli/tests/lease_stores.rs and lease/tests/in_process.rs test it.
      lease_fenced: 'needs a lease store that fences',
      // Only a clock that stands still (Date.now() inside a Cloudflare
      // Worker's request) raises it: the js part's workerd test and
      // core/tests/sync.rs test it.
      clock_stalled: 'needs a clock that stands still (workerd)',
    }
    for (const code of codes) {
      test(code, () => {
        if (unreachable[code]) return
        assert.ok(triggers[code], `no trigger for code ${code}: add one to tests/js/vector-cases.mjs`)
        throwsCode(triggers[code], code)
      })
    }
    test('every trigger is a known code', () => {
      for (const code of [...Object.keys(triggers), ...Object.keys(unreachable)]) assert.ok(codes.includes(code), code)
    })
  })

  return cases
}

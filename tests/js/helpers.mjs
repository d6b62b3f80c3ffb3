// Small assertions shared by the suite.
import assert from 'node:assert/strict'

/**
 * Asserts that `fn` throws a real `Error` (of class `cls` when given) whose
 * `code` is `code`: the cross-language error contract.
 */
export function throwsCode(fn, code, cls = Error) {
  let thrown = false
  try {
    fn()
  } catch (e) {
    thrown = true
    assert.ok(e instanceof Error, `expected an Error object, got ${typeof e}: ${String(e)}`)
    assert.ok(e instanceof cls, `expected a ${cls.name}, got ${e.constructor?.name}: ${e.message}`)
    assert.equal(e.code, code, `wrong code (message: ${e.message})`)
  }
  assert.ok(thrown, `expected an error with code ${code}, nothing was thrown`)
}

/** The policy options of a generate.json case, in the JavaScript spelling. */
export function jsOptions(o = {}) {
  const out = {}
  if (o.clock_backwards !== undefined) out.clockBackwards = o.clock_backwards
  if (o.sequence_exhausted !== undefined) out.sequenceExhausted = o.sequence_exhausted
  if (o.sequence_start !== undefined) out.sequenceStart = o.sequence_start
  if (o.seed !== undefined) out.seed = o.seed
  if (o.resume_after !== undefined) out.resumeAfter = o.resume_after
  return out
}

const FLOATS = { NaN: NaN, Infinity: Infinity, '-Infinity': -Infinity, '-0': -0 }

/** The `value` of a vectors/arguments.json case, as a JavaScript caller has it. */
export function argument(v) {
  if ('int' in v) return BigInt(v.int)
  if ('float' in v) return typeof v.float === 'string' ? FLOATS[v.float] : v.float
  if ('str' in v) return v.str
  if ('bool' in v) return v.bool
  if ('absent' in v) return undefined
  if ('map' in v) return Object.fromEntries(v.map.map(([k, x]) => [k, argument(x)]))
  return [] // "other": an array
}

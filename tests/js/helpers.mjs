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

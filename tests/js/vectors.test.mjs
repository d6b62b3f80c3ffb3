// Every case of every file in vectors/, run through the package's public API
// (the checks are tests/js/vector-cases.mjs's, one test each, one describe
// per vector file).
import { describe, test } from 'node:test'

import pkg, { vectors } from './pkg.mjs'
import { vectorCases } from './vector-cases.mjs'

const groups = new Map()
for (const c of vectorCases(pkg, vectors)) {
  if (!groups.has(c.group)) groups.set(c.group, [])
  groups.get(c.group).push(c)
}
for (const [group, cases] of groups) {
  describe(group, () => {
    for (const c of cases) test(c.name, c.run)
  })
}

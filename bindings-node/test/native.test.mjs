// Native-only details: the raw N-API fast paths (src/fast.rs) keep the same
// safety and errors as the napi-rs glue.
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

import pkg, { pkgEntryUrl } from './pkg-native.mjs'
import { throwsCode } from '../../tests/js/helpers.mjs'

const { Layout, Generator } = pkg

test('decode with a wrong receiver is a TypeError, never a crash', () => {
  throwsCode(() => Layout.prototype.decode.call({}, 1n), 'invalid_layout', TypeError)
  throwsCode(() => Layout.prototype.decode.call(new Generator('mastodon'), 1n), 'invalid_layout', TypeError)
  throwsCode(() => Layout.prototype.decode.call(undefined, 1n), 'invalid_layout', TypeError)
  const spoof = Object.create(Layout.prototype)
  throwsCode(() => spoof.decode(1n), 'invalid_layout', TypeError)
})

test('generator methods with a wrong receiver throw', () => {
  const proto = Object.getPrototypeOf(new Generator('mastodon'))
  assert.throws(() => proto.nextId.call(Layout.preset('twitter')))
  assert.throws(() => proto.nextIds.call({}, 3))
})

test('bound generator methods are not enumerable', () => {
  const g = new Generator('mastodon')
  assert.deepEqual(Object.keys(g), [])
  assert.equal(typeof g.nextId, 'function')
  // Detached, they still draw from their generator (they are bound to it).
  const { nextId, nextIds, nextIdString } = g
  const a = nextId()
  assert.ok(BigInt(nextIdString()) > a)
  assert.ok(nextIds(2)[0] > a)
})

test('many short-lived generators and decoders are released', () => {
  for (let i = 0; i < 20000; i++) {
    const g = new Generator('mastodon')
    g.nextId()
    Layout.preset('mastodon').decode(1n)
  }
  if (global.gc) global.gc()
})

test('the internal decoder checks its scratch array', () => {
  const binding = createRequire(fileURLToPath(pkgEntryUrl))('./binding.js')
  throwsCode(() => binding.__decoder('twitter', new Float64Array(2)), 'invalid_option', TypeError)
  throwsCode(() => binding.__decoder('twitter', [0, 0, 0, 0, 0, 0, 0, 0]), 'invalid_option', TypeError)
  const d = binding.__decoder('twitter', new Float64Array(8))
  assert.equal(d(135168n), 135168n)
  assert.equal(path.basename(fileURLToPath(pkgEntryUrl)), 'index.js')
})

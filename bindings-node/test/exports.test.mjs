// Both JavaScript packages have one API: the native package (`snowmint`) and
// the WebAssembly package (`snowmint-wasm`, installed beside it as its
// fallback) export the same names, and their classes the same members,
// except what only one of them has. That list, and why, is written in
// bindings-node/api-common.js; this test holds it to the packages.
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import path from 'node:path'
import { test } from 'node:test'

import { consumerDir } from './pkg-native.mjs'

const needConsumer = { skip: consumerDir ? false : 'SNOWMINT_CONSUMER_DIR is not set (cargo xtask test node sets it)' }

// What only one package has (api-common.js), by export and by class member.
const ONLY = {
  native: { exports: ['IdMask'], Generator: ['lease', 'close'] },
  wasm: { exports: [], Layout: ['decodeMany', 'free'], Generator: ['free'], PureGenerator: ['free'] },
}

const internal = (n) => n.startsWith('__') || ['constructor', 'length', 'name', 'prototype', 'arguments', 'caller'].includes(n)

/** A class's public member names: instance ones, then `static` ones. */
function members(cls) {
  const names = new Set()
  for (let o = cls.prototype; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const n of Object.getOwnPropertyNames(o)) if (!internal(n)) names.add(n)
  }
  for (const n of Object.getOwnPropertyNames(cls)) if (!internal(n)) names.add(`static ${n}`)
  return names
}

const minus = (a, b) => [...a].filter((x) => !b.has(x)).sort()

test('the native and the WebAssembly packages differ only by the documented list', needConsumer, () => {
  const load = createRequire(path.join(consumerDir, 'noop.js'))
  const native = load('snowmint')
  const wasm = load('snowmint-wasm')
  assert.equal(native.__backend, 'native')
  const names = (pkg) => new Set(Object.keys(pkg).filter((n) => !internal(n)))
  assert.deepEqual(minus(names(native), names(wasm)), ONLY.native.exports.sort())
  assert.deepEqual(minus(names(wasm), names(native)), ONLY.wasm.exports.sort())
  for (const name of names(wasm)) {
    if (typeof wasm[name] !== 'function' || !/^[A-Z]/.test(name)) continue
    const n = members(native[name])
    const w = members(wasm[name])
    assert.deepEqual(minus(n, w), (ONLY.native[name] ?? []).sort(), `${name}: native only`)
    assert.deepEqual(minus(w, n), (ONLY.wasm[name] ?? []).sort(), `${name}: WebAssembly only`)
  }
  // The functions both have are the same kind of value in both.
  for (const name of names(wasm)) assert.equal(typeof native[name], typeof wasm[name], name)
})

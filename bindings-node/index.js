// The package entry point (CommonJS). It loads, in this order:
//   1. the native addon: main.js, on binding.js (napi-rs's loader, which
//      requires the per-platform package `snowmint-<platform>` that npm
//      installed from optionalDependencies: linux x64/arm64, glibc/musl, and
//      the macOS and Windows ones built by the release workflow);
//   2. else the WebAssembly build of the same Rust core (the `snowmint-wasm`
//      package, a dependency), behind the same API, so that the package works
//      wherever Node does, more slowly where no addon exists.
// SNOWMINT_FORCE_WASM=1 skips the addon. If neither loads, the error names the
// platform and what was tried.
//
// What the WebAssembly fallback lacks (README, "Platforms"; the list of what
// only one package has is in api-common.js): the `lease` option of Generator
// throws the core's `invalid_option` (the WebAssembly build has no lease
// stores: no file locks, no network clients); `new IdMask()` throws
// `invalid_option` too (this file's error: the core has none for it);
// generators share state only within one thread (the addon shares it across
// worker_threads); `close()` does nothing and `lease` is `null`, as for an
// addon generator made without a lease. Which platforms run the fallback is
// this package's to say (README, "Packages and platforms"), not the core's:
// its errors name no package.
'use strict'

const tried = []
let api = null
let backend = null

function platformName() {
  let libc = ''
  if (process.platform === 'linux') {
    try {
      const header = process.report.getReport().header
      libc = header.glibcVersionRuntime ? `glibc ${header.glibcVersionRuntime}` : 'musl or another libc'
    } catch {
      libc = 'libc unknown'
    }
  }
  return `${process.platform}-${process.arch}${libc ? ` (${libc})` : ''}, Node ${process.version}`
}

// The first line of an error, and of each error it wraps (napi-rs's loader
// chains one per file or package it tried, last first), without napi-rs's
// advice about npm and its tries of a WASI build (this package has none).
function reasons(e) {
  const out = []
  for (let c = e; c && out.length < 8; c = c.cause) {
    const line = String(c.message ?? c).split('\n')[0]
    if (!/^Cannot find native binding|wasm32-wasi|\.wasi\.cjs/.test(line)) out.unshift(line)
  }
  return out.join('; ') || String(e)
}

if (process.env.SNOWMINT_FORCE_WASM === '1') {
  tried.push('the native addon: skipped (SNOWMINT_FORCE_WASM=1)')
} else {
  try {
    api = require('./main.js')
    backend = 'native'
  } catch (e) {
    tried.push(`the native addon (binding.js, package snowmint-<platform>): ${reasons(e)}`)
  }
}

if (api === null) {
  try {
    api = fallback(require('snowmint-wasm'))
    backend = 'wasm'
  } catch (e) {
    tried.push(`the WebAssembly fallback (package snowmint-wasm): ${reasons(e)}`)
  }
}

if (api === null) {
  const error = new Error(
    `snowmint: no binding loads on ${platformName()}. Tried:\n${tried.map((t) => `  - ${t}`).join('\n')}\n` +
      'Reinstall the package (npm install snowmint) so that npm adds its dependencies, or report the platform.',
  )
  error.code = 'binding_unavailable'
  throw error
}

// The WebAssembly package's API, with the addon Generator's members it lacks.
function fallback(wasm) {
  const { Layout, compose, decode } = wasm
  const NODES = Symbol('snowmint.nodes')
  class Generator extends wasm.Generator {
    constructor(layout, nodes, options) {
      // A `lease` option: the core's invalid_option (this build has no lease stores).
      super(layout, nodes, options)
      this[NODES] = nodes
    }

    /** The node values by field name (no lease here). */
    get nodes() {
      const layout = this.layout
      return { ...decode(compose(layout, layout.epochMs, 0, this[NODES]), layout).nodes }
    }

    /** Always `null`: the fallback has no leases. */
    get lease() {
      return null
    }

    /** Does nothing: a generator without a lease holds nothing to release. */
    close() {}
  }
  if (typeof Symbol.dispose === 'symbol') {
    Object.defineProperty(Generator.prototype, Symbol.dispose, {
      value: function dispose() {},
      writable: true,
      configurable: true,
    })
  }
  // IdMask needs the addon: the WebAssembly package leaves it out (README,
  // "Public IDs"). The core has no error for a class a build leaves out, so
  // this refusal is the package's own, with the core's code and message form.
  class IdMask {
    constructor() {
      const error = new Error('invalid option: IdMask is not in the WebAssembly build [invalid_option]')
      error.code = 'invalid_option'
      throw error
    }
  }
  return { ...wasm, Generator, Layout, IdMask }
}

module.exports = { ...api }
// Which core this process runs: 'native' (the addon) or 'wasm' (the fallback).
Object.defineProperty(module.exports, '__backend', { value: backend, enumerable: false })

// The package entry point (written by bindings-wasm/build.sh): the API that
// api.js (js/api.js in the repository) builds on the wasm-bindgen module.
import * as raw from './snowmint_wasm.js'
import { install } from './api.js'
export { default, initSync } from './snowmint_wasm.js'
export const { Generator, Layout, PureGenerator, compose, decode, formatId, fromBase32, fromBase62, idBounds, parseId, toBase32, toBase62 } = install(raw)

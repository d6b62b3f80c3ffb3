// The package entry point (written by bindings-wasm/build.sh): the wasm-bindgen
// module (snowmint_wasm.js) plus decode from api.js (js/api.js in the repository).
import * as raw from './snowmint_wasm.js'
import { install } from './api.js'
export { default, initSync, Generator, Layout, PureGenerator, compose, formatId, fromBase32, fromBase62, idBounds, parseId, toBase32, toBase62 } from './snowmint_wasm.js'
export const { decode } = install(raw)

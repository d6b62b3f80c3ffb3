// The ESM entry point: the same module object as `require('snowmint')`.
// A static import of the CommonJS entry (its module.exports is the default
// export), so that bundlers follow it: `createRequire(import.meta.url)`
// left esbuild's and Vite's server bundles requiring a missing ./index.js.
import binding from './index.js'

export const { Layout, Generator, PureGenerator, IdMask, decode, compose, idBounds } = binding
export const { toBase32, fromBase32, toBase62, fromBase62, formatId, parseId } = binding
export const { __backend } = binding
export default binding

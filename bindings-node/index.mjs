// The ESM entry point: the same module object as `require('snowmint')`.
import { createRequire } from 'node:module'

const binding = createRequire(import.meta.url)('./index.js')

export const { Layout, Generator, PureGenerator, IdMask, decode, compose, idBounds } = binding
export const { toBase32, fromBase32, toBase62, fromBase62, formatId, parseId } = binding
export const { __backend } = binding
export default binding

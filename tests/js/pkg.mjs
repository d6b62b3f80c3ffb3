// Loads the package under test, so one suite drives the native (napi-rs) and
// the WebAssembly packages alike.
//
//   SNOWMINT_JS_PKG   what to load: an absolute path (a file, or a package
//                     folder whose package.json names the entry point) or a
//                     package name resolved from the current directory.
//                     Default: `snowmint`.
//   SNOWMINT_VECTORS  the folder of the shared vectors. Default: ../../vectors.
import { existsSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const spec = process.env.SNOWMINT_JS_PKG || 'snowmint'

function entryUrl(spec) {
  if (path.isAbsolute(spec) && statSync(spec).isFile()) return pathToFileURL(spec).href
  // A folder or a package name: resolve it the way `require` would from the
  // current directory (a folder's package.json `main`, or node_modules).
  const require = createRequire(path.join(process.cwd(), 'noop.js'))
  return pathToFileURL(require.resolve(spec)).href
}

const url = entryUrl(spec)
const mod = await import(url)
// A CommonJS package imported from ESM arrives as `default`; an ESM package
// has its names at the top level.
const pkg = mod.default && typeof mod.default.Layout === 'function' ? mod.default : mod

export default pkg
export const pkgSpec = spec

/** The package's folder: the nearest one above its entry point with a package.json. */
export const pkgDir = (() => {
  let dir = path.dirname(fileURLToPath(url))
  while (!existsSync(path.join(dir, 'package.json')) && dir !== path.dirname(dir)) dir = path.dirname(dir)
  return dir
})()

const vectorsDir = process.env.SNOWMINT_VECTORS
  ? path.resolve(process.env.SNOWMINT_VECTORS)
  : new URL('../../vectors/', import.meta.url).pathname

/** One vector file, parsed. */
export function vectors(name) {
  return JSON.parse(readFileSync(path.join(vectorsDir, `${name}.json`), 'utf8'))
}

/** The names the package exports at run time, the same in every package. */
export const EXPORTS = [
  'Generator',
  'Layout',
  'PureGenerator',
  'compose',
  'decode',
  'formatId',
  'fromBase32',
  'fromBase62',
  'idBounds',
  'parseId',
  'toBase32',
  'toBase62',
]

/** Names only the native package exports: `IdMask` (public IDs) needs a
 * secret key, and a key does not belong in a page, so the WebAssembly
 * package leaves it out. */
export const NATIVE_ONLY = ['IdMask']

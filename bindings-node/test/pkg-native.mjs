// The shared loader, plus what the native-only tests need to know about it.
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

import pkg, { pkgSpec } from '../../tests/js/pkg.mjs'

export default pkg
export { pkgSpec }

/** The URL of the package's CommonJS entry point, for workers to import. */
export const pkgEntryUrl = pathToFileURL(
  createRequire(path.join(process.cwd(), 'noop.js')).resolve(pkgSpec),
).href

/** The consumer project the packed package is installed into (cargo xtask test node). */
export const consumerDir = process.env.SNOWMINT_CONSUMER_DIR

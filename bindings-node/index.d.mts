// The declarations of the ESM entry point (index.mjs): the same names as
// index.d.ts (the CommonJS entry point's, which `napi build` generates), as
// an ES module, and the default export index.mjs has (the CommonJS module
// object). Its own file, so that TypeScript and the linters see the import
// condition's types as ESM, as index.mjs is.
import * as snowmint from './index.js'

export * from './index.js'
export default snowmint

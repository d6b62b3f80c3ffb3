// Assembles the two WebAssembly packages after wasm-bindgen and wasm-opt
// (cargo xtask build-wasm runs it: `node bindings-wasm/assemble.cjs`):
//   pkg-node/  CommonJS, for Node: `require('./pkg-node')`
//   pkg-web/   ES modules, for browsers: `import init, {...} from './pkg-web/index.js'`
//
// js/api.js is an ES module; the Node package is CommonJS, so its copy there
// becomes CommonJS (the file is only imports of names and `export function`
// declarations: removing `export ` and listing the names is the whole
// conversion). bindings-node/parts.js and api-common.js (CommonJS, the
// JavaScript layer shared with the native package) become ES modules for
// the web package. Then each package's entry point, index.js (what
// js/api.js's `install` returns, on the wasm-bindgen module), and the
// TypeScript declarations (bindings-node/types-header.d.ts's shared part and
// js/index.d.ts; wasm-bindgen's own describe the module's exports).
'use strict'
const fs = require('node:fs')
const path = require('node:path')
const here = __dirname
// `import { a, b } from './x.js'` lines become `const { a, b } = require('./x.js')`.
function toCommonJs(src, file) {
  const names = [...src.matchAll(/^export (?:function|class) (\w+)/gm)].map((m) => m[1])
  const imports = /^import (\{[\w\s,]+\}) from ('\.\/[\w.-]+')$/gm
  if (names.length === 0 || /^\s*(import|export) (?!function|class)/m.test(src.replace(imports, ''))) {
    throw new Error(`${file}: expected only imports of names and export function/class declarations`)
  }
  const cjs = src.replace(imports, 'const $1 = require($2)').replace(/^export (function|class) /gm, '$1 ')
  return `'use strict'\n${cjs}\nmodule.exports = { ${names.join(', ')} }\n`
}
// A file of bindings-node (CommonJS: 'use strict', `const { a, b } =
// require('./x.js')` lines, declarations, one `module.exports = { names }`
// line) as an ES module.
function toModule(src, file) {
  const exportsLine = /^module\.exports = (\{[\w\s,]+\})\n?$/m
  const requires = /^const (\{[\w\s,]+\}) = require\(('\.\/[\w.-]+')\)$/gm
  const rest = src.replace(requires, '')
  if (!exportsLine.test(src) || /\brequire\(|^exports\./m.test(rest) || !src.includes("'use strict'\n")) {
    throw new Error(`${file}: expected 'use strict', require lines of names, declarations and one module.exports = { names } line`)
  }
  return src.replace("'use strict'\n", '').replace(requires, 'import $1 from $2').replace(exportsLine, 'export $1\n')
}
const nodePkg = path.join(here, 'pkg-node')
const webPkg = path.join(here, 'pkg-web')
const api = fs.readFileSync(path.join(here, 'js', 'api.js'), 'utf8')
fs.writeFileSync(path.join(nodePkg, 'api.js'), toCommonJs(api, 'js/api.js'))
fs.writeFileSync(path.join(webPkg, 'api.js'), api)
for (const f of ['parts.js', 'api-common.js']) {
  const src = fs.readFileSync(path.join(here, '..', 'bindings-node', f), 'utf8')
  fs.writeFileSync(path.join(nodePkg, f), src)
  fs.writeFileSync(path.join(webPkg, f), toModule(src, `bindings-node/${f}`))
}
const names = Object.keys(require(path.join(nodePkg, 'api.js')).install(require(path.join(nodePkg, 'snowmint_wasm.js'))))
const head = '// The package entry point (written by bindings-wasm/assemble.cjs): what\n' +
  '// api.js (js/api.js in the repository) builds on the wasm-bindgen module.\n'
// `exports.X =` lines, so that Node's ESM import sees the names.
fs.writeFileSync(path.join(nodePkg, 'index.js'), head + `'use strict'
const api = require('./api.js').install(require('./snowmint_wasm.js'))
${names.map((n) => `exports.${n} = api.${n}\n`).join('')}`)
fs.writeFileSync(path.join(webPkg, 'index.js'), head + `import * as raw from './snowmint_wasm.js'
import { install } from './api.js'
export { default, initSync } from './snowmint_wasm.js'
export const { ${names.join(', ')} } = install(raw)
`)
// The declarations: those both JavaScript packages share (the native
// package's napi-rs header, without its first comment and its native-only
// blocks), then this package's own (js/index.d.ts).
function sharedDeclarations(src, file) {
  const blocks = /^[ \t]*\/\/ <native-only>\n[\s\S]*?^[ \t]*\/\/ <\/native-only>\n/gm
  const first = /^\/\*[\s\S]*?\*\/\n/
  const shared = src.replace(first, '').replace(blocks, '')
  if (!first.test(src) || /<\/?native-only>\n/.test(shared.replace(/`<native-only>`/g, ''))) {
    throw new Error(`${file}: expected a first comment and balanced <native-only> blocks`)
  }
  return shared
}
const header = fs.readFileSync(path.join(here, '..', 'bindings-node', 'types-header.d.ts'), 'utf8')
const shared = sharedDeclarations(header, 'bindings-node/types-header.d.ts')
const own = fs.readFileSync(path.join(here, 'js', 'index.d.ts'), 'utf8')
// Declared once: what the shared part declares is not declared again here
// (TypeScript would take a second function as an overload and merge a
// second interface). Its interfaces may merge into this package's classes.
const declaredAs = (src, kinds) => [...src.matchAll(new RegExp(`^export (?:declare )?(?:${kinds}) (\\w+)`, 'gm'))].map((m) => m[1])
const values = 'function|type|const|class'
const again = [
  ...declaredAs(own, values).filter((n) => declaredAs(shared, values).includes(n)),
  ...declaredAs(own, 'interface').filter((n) => declaredAs(shared, 'interface').includes(n)),
]
if (again.length) throw new Error(`js/index.d.ts declares again what types-header.d.ts declares: ${again.join(', ')}`)
const dts = shared + '\n' + own
fs.writeFileSync(path.join(nodePkg, 'index.d.ts'), dts)
fs.writeFileSync(path.join(webPkg, 'index.d.ts'), dts + "\nexport { default, initSync } from './snowmint_wasm.js';\n")

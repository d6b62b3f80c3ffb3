#!/usr/bin/env bash
# Builds the WebAssembly packages from the crate in this folder:
#   pkg-node/  wasm-bindgen --target nodejs (CommonJS): `require('./pkg-node')`
#   pkg-web/   wasm-bindgen --target web (ESM): `import init, {...} from './pkg-web/index.js'`
# and refreshes the copy of the web package that the decoder page imports
# (www/pkg/, committed so the page needs no build step).
#
#   bindings-wasm/build.sh            # build everything
#   bindings-wasm/build.sh --check    # also fail if www/pkg/ differs from the fresh build
#
# Needs: the wasm32-unknown-unknown target, wasm-bindgen 0.2.130 on PATH (the
# same version as the pinned crate, built from tools/wasm-bindgen's lock file:
# `cargo install --path tools/wasm-bindgen --locked`), and `npm install` in this folder
# (npm's binaryen for wasm-opt: Debian's binaryen 108 silently breaks the
# module; terser). cargo xtask test wasm installs all of them.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target/wasm}"
check=0
[ "${1:-}" = "--check" ] && check=1

# Optimised for size (the module is downloaded by every page that uses it),
# on the stable toolchain as it is. The root Cargo.toml's release profile
# (lto, one codegen unit) stays; only the optimisation level is overridden,
# here, for this build (OPT_LEVEL=z to compare).
export CARGO_PROFILE_RELEASE_OPT_LEVEL="${OPT_LEVEL:-s}"
# Always as it ships, whoever calls: the release check builds the wheels and
# addons without fat LTO (CARGO_PROFILE_RELEASE_LTO, _CODEGEN_UNITS), and the
# module built here is compared byte for byte with the committed www/pkg/.
unset CARGO_PROFILE_RELEASE_LTO CARGO_PROFILE_RELEASE_CODEGEN_UNITS
# Panic messages name source files; the registry's folder (a path of this
# machine, 0.2 KB gzipped) is shortened to `crates`.
registry="${CARGO_HOME:-$HOME/.cargo}/registry/src"
# LLVM's inlining threshold is lowered from the 50 of opt-level `s` to 25 (a
# stable codegen flag): the browser package was 36,957 against 37,418 bytes
# gzipped with 50 (20 and 30 were larger than 25 too);
# `layout.decode(bigint)` stayed at 0.6x of sapphire's deconstruct.
# INLINE=50 to compare.
export RUSTFLAGS="--remap-path-prefix=$registry=crates -Cllvm-args=-inline-threshold=${INLINE:-25}"
# rustc itself, not the test command's clippy wrapper (bench/lib.sh): the
# module is compared byte for byte with the committed one (--check).
export RUSTC_WORKSPACE_WRAPPER=''
cargo build --quiet -p snowmint-wasm --target wasm32-unknown-unknown --release
wasm="$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/snowmint_wasm.wasm"

# The features rustc enables by default for wasm32-unknown-unknown; wasm-opt
# must know them to read the module, and uses nothing beyond them.
features=(--enable-bulk-memory --enable-multivalue --enable-mutable-globals
  --enable-nontrapping-float-to-int --enable-reference-types --enable-sign-ext)

# -Oz until nothing changes (--converge). --low-memory-unused: the module
# never touches the first 1 KB of its memory (Rust places its stack and data
# from 1 MB up, and no pointer it follows is null), so wasm-opt may fold
# constant offsets into addresses; together about 0.5 KB. The custom sections
# no engine reads go: names and debug info, `producers` (toolchain versions)
# and `target_features` (the list above, for linkers; 151 bytes).
for target in nodejs web; do
  case $target in nodejs) out="$HERE/pkg-node" ;; web) out="$HERE/pkg-web" ;; esac
  rm -rf "$out"
  wasm-bindgen --target "$target" --out-dir "$out" --out-name snowmint_wasm "$wasm"
  "$HERE/node_modules/.bin/wasm-opt" -Oz --converge --low-memory-unused "${features[@]}" --strip-debug --strip-producers --strip-target-features \
    -o "$out/snowmint_wasm_bg.wasm" "$out/snowmint_wasm_bg.wasm"
done

# js/api.js is an ES module; the Node package is CommonJS, so its copy there
# becomes CommonJS (the file is only imports of names and `export function`
# declarations: removing `export ` and listing the names is the whole
# conversion). bindings-node/parts.js and api-common.js (CommonJS, the
# JavaScript layer shared with the native package) become ES modules for
# the web package. Then each package's entry point, index.js (what
# js/api.js's `install` returns, on the wasm-bindgen module), and the
# TypeScript declarations (bindings-node/types-header.d.ts's shared part and
# js/index.d.ts; wasm-bindgen's own describe the module's exports).
node - "$HERE" <<'JS'
const fs = require('node:fs')
const path = require('node:path')
const here = process.argv[2]
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
const head = '// The package entry point (written by bindings-wasm/build.sh): what\n' +
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
JS

# Browsers download the web package: its JavaScript is minified (terser,
# three compression passes; class names and the Parts constructor's name
# kept, as consoles show them). The Node package stays readable.
for f in index.js api.js api-common.js parts.js snowmint_wasm.js; do
  "$HERE/node_modules/.bin/terser" "$HERE/pkg-web/$f" --module --compress passes=3 \
    --mangle 'reserved=[Parts]' --keep-classnames -o "$HERE/pkg-web/$f"
done

# package.json files of the two packages. pkg-node is CommonJS ("type":
# "commonjs", said rather than left to Node's detection; no "type": "module"
# in any package.json above it) and needs the Node lines snowmint does.
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$ROOT/Cargo.toml" | head -n 1)
cat > "$HERE/pkg-node/package.json" <<JSON
{
  "name": "snowmint-wasm",
  "version": "$version",
  "description": "snowmint (Snowflake-style 64-bit IDs) as WebAssembly, for Node (CommonJS)",
  "license": "MIT OR Apache-2.0",
  "type": "commonjs",
  "main": "index.js",
  "types": "index.d.ts",
  "files": ["index.js", "index.d.ts", "api.js", "api-common.js", "parts.js", "snowmint_wasm.js", "snowmint_wasm.d.ts", "snowmint_wasm_bg.wasm", "snowmint_wasm_bg.wasm.d.ts", "LICENSE-MIT", "LICENSE-APACHE"],
  "engines": { "node": ">= 18" }
}
JSON
cat > "$HERE/pkg-web/package.json" <<JSON
{
  "name": "snowmint-wasm-web",
  "version": "$version",
  "description": "snowmint (Snowflake-style 64-bit IDs) as WebAssembly, for browsers (ES module; call the default export init() first)",
  "license": "MIT OR Apache-2.0",
  "type": "module",
  "main": "index.js",
  "types": "index.d.ts",
  "files": ["index.js", "index.d.ts", "api.js", "api-common.js", "parts.js", "snowmint_wasm.js", "snowmint_wasm.d.ts", "snowmint_wasm_bg.wasm", "snowmint_wasm_bg.wasm.d.ts", "LICENSE-MIT", "LICENSE-APACHE"]
}
JSON

# The licences, in both packages.
for pkg in pkg-node pkg-web; do cp "$ROOT/LICENSE-MIT" "$ROOT/LICENSE-APACHE" "$HERE/$pkg/"; done

# The decoder page's copy: only what a browser loads.
fresh="$(mktemp -d)"
trap 'rm -rf "$fresh"' EXIT
cp "$HERE/pkg-web/index.js" "$HERE/pkg-web/api.js" "$HERE/pkg-web/api-common.js" "$HERE/pkg-web/parts.js" \
  "$HERE/pkg-web/snowmint_wasm.js" \
  "$HERE/pkg-web/snowmint_wasm_bg.wasm" "$fresh/"
if ((check)); then
  if ! diff -r "$fresh" "$HERE/www/pkg" >/dev/null; then
    diff -rq "$fresh" "$HERE/www/pkg" >&2 || true
    echo "bindings-wasm/www/pkg/ is stale: run bindings-wasm/build.sh and commit www/pkg/" >&2
    exit 1
  fi
else
  rm -rf "$HERE/www/pkg"
  cp -r "$fresh" "$HERE/www/pkg"
  chmod 755 "$HERE/www/pkg"
fi

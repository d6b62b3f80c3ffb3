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
# Needs: the wasm32-unknown-unknown target, the rust-src component, wasm-bindgen-cli 0.2.130 on PATH
# (the same version as the pinned crate), and `npm install` in this folder
# (npm's binaryen for wasm-opt: Debian's binaryen 108 silently breaks the
# module; terser). scripts/test-wasm installs all of them.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target/wasm}"
check=0
[ "${1:-}" = "--check" ] && check=1

# Optimised for size (the module is downloaded by every page that uses it),
# at `s`, not `z`: with `z` the decode hot path (the raw `__decode` export)
# took twice as long (~64 ns against ~30 ns per call here) for 1% less size
# (62.8 against 63.4 KB after wasm-opt -Oz below; gzipped, `z` was larger). The root Cargo.toml's
# release profile (lto, one codegen unit) stays as it is; only the
# optimisation level is overridden, here, for this build.
export CARGO_PROFILE_RELEASE_OPT_LEVEL=s
# The standard library is rebuilt for this module (-Zbuild-std; needs the
# rust-src component) with the `immediate-abort` panic strategy: a panic is
# an `unreachable` trap at once, with none of the panic machinery (message
# formatting, the hook, `core::fmt` pulled in by them), about 6 KB of the
# module. Nothing changes for users: on this target a panic already aborted
# the module, its message going nowhere (the binding avoids panics; see
# src/lib.rs). Panic locations (file, line, column) are left out too
# (-Zlocation-detail=none), so that moving a line in core/ or src/ does not
# change the committed www/pkg/ copy. These flags are unstable:
# RUSTC_BOOTSTRAP=1 lets the stable compiler accept them, for this build only.
export RUSTC_BOOTSTRAP=1
#
# LLVM's inlining threshold is lowered from the 50 of opt-level `s` to 25
# (-Cllvm-args=-inline-threshold): the operations are mostly called from one
# dispatch export, where inlining each helper into each caller cost 3 KB
# (46.1 against 43.0 KB; 20, 30 and 40 all gave more than 25). The hot
# paths keep their inlining: `decode_into` is `#[inline(always)]`.
export RUSTFLAGS="-Zlocation-detail=none -Zunstable-options -Cpanic=immediate-abort -Cllvm-args=-inline-threshold=25"
cargo build --quiet -p snowmint-wasm --target wasm32-unknown-unknown --release \
  -Zbuild-std=std,panic_abort
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
# becomes CommonJS (the file is only `export function` declarations, so
# removing `export ` and listing the names is the whole conversion). Node >= 20.19 could require() an ES
# module, older ones not. Then each package's entry point, index.js: what
# js/api.js builds on the wasm-bindgen module, and the TypeScript
# declarations (js/index.d.ts; wasm-bindgen's own declare only the raw
# exports).
node - "$HERE" <<'JS'
const fs = require('node:fs')
const path = require('node:path')
const here = process.argv[2]
// `import { a, b } from './x.js'` lines become `const { a, b } = require('./x.js')`.
function toCommonJs(src, file) {
  const names = [...src.matchAll(/^export (?:function|class) (\w+)/gm)].map((m) => m[1])
  const imports = /^import (\{[\w\s,]+\}) from ('\.\/[\w.]+')$/gm
  if (names.length === 0 || /^\s*(import|export) (?!function|class)/m.test(src.replace(imports, ''))) {
    throw new Error(`${file}: expected only imports of names and export function/class declarations`)
  }
  const cjs = src.replace(imports, 'const $1 = require($2)').replace(/^export (function|class) /gm, '$1 ')
  return `'use strict'\n${cjs}\nmodule.exports = { ${names.join(', ')} }\n`
}
// bindings-node/parts.js (CommonJS: 'use strict', declarations, one
// `module.exports = { names }` line) as an ES module.
function toModule(src, file) {
  const exportsLine = /^module\.exports = (\{[\w\s,]+\})\n?$/m
  if (!exportsLine.test(src) || /\brequire\(|^exports\./m.test(src) || !src.includes("'use strict'\n")) {
    throw new Error(`${file}: expected 'use strict', declarations and one module.exports = { names } line`)
  }
  return src.replace("'use strict'\n", '').replace(exportsLine, 'export $1\n')
}
const nodePkg = path.join(here, 'pkg-node')
const webPkg = path.join(here, 'pkg-web')
// api.js reads the module's memory (the instance's `memory` export). The web
// glue's init() and initSync() return the exports (index.js below keeps
// them); the Node glue instantiates the module when required and keeps the
// exports to itself, so one line after that instantiation exports the
// memory as `__memory`. (An export of the module returning its memory cost
// 0.6 KB of the .wasm; see src/lib.rs.)
const glue = path.join(nodePkg, 'snowmint_wasm.js')
const instance = 'let wasm = wasmInstance.exports;\n'
const glueSrc = fs.readFileSync(glue, 'utf8')
if (glueSrc.split(instance).length !== 2) throw new Error(`${glue}: expected one line '${instance.trim()}'`)
fs.writeFileSync(glue, glueSrc.replace(instance, instance + 'exports.__memory = wasm.memory;\n'))
const api = fs.readFileSync(path.join(here, 'js', 'api.js'), 'utf8')
fs.writeFileSync(path.join(nodePkg, 'api.js'), toCommonJs(api, 'js/api.js'))
fs.writeFileSync(path.join(webPkg, 'api.js'), api)
const parts = fs.readFileSync(path.join(here, '..', 'bindings-node', 'parts.js'), 'utf8')
fs.writeFileSync(path.join(nodePkg, 'parts.js'), parts)
fs.writeFileSync(path.join(webPkg, 'parts.js'), toModule(parts, 'bindings-node/parts.js'))
const names = Object.keys(require(path.join(nodePkg, 'api.js')).install(require(glue), () => null))
const head = '// The package entry point (written by bindings-wasm/build.sh): the API that\n' +
  '// api.js (js/api.js in the repository) builds on the wasm-bindgen module.\n'
// `exports.X =` lines, so that Node's ESM import sees the names.
fs.writeFileSync(path.join(nodePkg, 'index.js'), head + `'use strict'
const raw = require('./snowmint_wasm.js')
const api = require('./api.js').install(raw, () => raw.__memory)
${names.map((n) => `exports.${n} = api.${n}\n`).join('')}`)
fs.writeFileSync(path.join(webPkg, 'index.js'), head + `import * as raw from './snowmint_wasm.js'
import { install } from './api.js'
// The instance's exports, as init() and initSync() return them (api.js
// reads its memory).
let exports
export default async function init(moduleOrPath) {
  return (exports = await raw.default(moduleOrPath))
}
export function initSync(module) {
  return (exports = raw.initSync(module))
}
export const { ${names.join(', ')} } = install(raw, () => exports.memory)
`)
const dts = fs.readFileSync(path.join(here, 'js', 'index.d.ts'), 'utf8')
fs.writeFileSync(path.join(nodePkg, 'index.d.ts'), dts)
fs.writeFileSync(path.join(webPkg, 'index.d.ts'), dts + "\nexport { default, initSync } from './snowmint_wasm.js';\n")
JS

# Browsers download the web package: its JavaScript is minified (terser,
# keeping class and function names). The Node package stays readable.
for f in index.js api.js parts.js snowmint_wasm.js; do
  "$HERE/node_modules/.bin/terser" "$HERE/pkg-web/$f" --module --compress --mangle \
    --keep-classnames --keep-fnames -o "$HERE/pkg-web/$f"
done

# package.json files of the two packages. pkg-node is CommonJS: no "type"
# field, and none in any package.json above it.
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$ROOT/Cargo.toml" | head -n 1)
cat > "$HERE/pkg-node/package.json" <<JSON
{
  "name": "snowmint-wasm",
  "version": "$version",
  "description": "snowmint (Snowflake-style 64-bit IDs) as WebAssembly, for Node (CommonJS)",
  "license": "MIT OR Apache-2.0",
  "main": "index.js",
  "types": "index.d.ts",
  "files": ["index.js", "index.d.ts", "api.js", "parts.js", "snowmint_wasm.js", "snowmint_wasm.d.ts", "snowmint_wasm_bg.wasm", "snowmint_wasm_bg.wasm.d.ts"]
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
  "files": ["index.js", "index.d.ts", "api.js", "parts.js", "snowmint_wasm.js", "snowmint_wasm.d.ts", "snowmint_wasm_bg.wasm", "snowmint_wasm_bg.wasm.d.ts"]
}
JSON

# The decoder page's copy: only what a browser loads.
fresh="$(mktemp -d)"
trap 'rm -rf "$fresh"' EXIT
cp "$HERE/pkg-web/index.js" "$HERE/pkg-web/api.js" "$HERE/pkg-web/parts.js" "$HERE/pkg-web/snowmint_wasm.js" \
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

#!/usr/bin/env bash
# Builds decoder.wasm, the package's decoding fast path (the crate in
# decoder/: the core's decoder for wasm32-unknown-unknown; why, in
# decoder/src/lib.rs). `npm run build` runs it after the napi build.
# Needs the wasm32-unknown-unknown target (scripts/test-node adds it).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
target_dir="${CARGO_TARGET_DIR:-$ROOT/target}"
cargo build --quiet --release -p snowmint-node-decoder --target wasm32-unknown-unknown
cp "$target_dir/wasm32-unknown-unknown/release/snowmint_node_decoder.wasm" "$HERE/decoder.wasm"

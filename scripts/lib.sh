# shellcheck shell=bash
# Shared helpers for the scripts/test-* parts. Source it; do not run it.
#
# Tools are installed into the repository's ignored folders (.venv/ for Python,
# node_modules/ beside each package.json) and, for the pinned cargo tools, into
# one folder per crate and version under $SNOWMINT_TOOLS (default
# ~/.cache/snowmint/tools), shared by every checkout on the machine, unless the
# machine already has the right version on PATH.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ROOT
TOOLS="${SNOWMINT_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/snowmint/tools}"
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TERM_COLOR=never
# Cargo's intermediate files (compiled dependencies, test executables, build
# script outputs) go to one build directory per machine, shared by every
# checkout: a fresh clone on a machine that has run the tests once compiles
# only the workspace's own crates, not the ~900 dependency units again. The
# final artifacts (binaries, libraries, wheels' and addons' inputs) stay in
# each checkout's target/. Cargo locks the build directory while it
# compiles, so two checkouts building at once take turns. But cargo names a
# workspace crate's units by its path inside the workspace, not by the
# checkout's: checkouts share them, and a checkout whose sources are older
# than the last build of another reuses that build. A fresh clone's files are
# new, so its first build is its own; to work in two checkouts at once give
# the second a directory of its own (SNOWMINT_BUILD_DIR=DIR). An explicit
# CARGO_BUILD_BUILD_DIR wins; SNOWMINT_BUILD_DIR=target keeps everything in
# the checkout's target/ (the old layout).
if [ -z "${CARGO_BUILD_BUILD_DIR:-}" ]; then
  case "${SNOWMINT_BUILD_DIR:-}" in
    target) ;;
    "") export CARGO_BUILD_BUILD_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/snowmint/build" ;;
    *) export CARGO_BUILD_BUILD_DIR="$SNOWMINT_BUILD_DIR" ;;
  esac
  # Units of checkouts since removed stay behind: past 30 GiB the directory is
  # emptied (once per run of the calling command), and the next build fills it;
  # so is the fuzz part's beside it (<dir>-fuzz: scripts/test-fuzz).
  # (None with SNOWMINT_BUILD_DIR=target: CARGO_BUILD_BUILD_DIR stays unset.)
  if [ -z "${SNOWMINT_BUILD_DIR_CHECKED:-}" ] && [ -n "${CARGO_BUILD_BUILD_DIR:-}" ]; then
    for build_dir in "$CARGO_BUILD_BUILD_DIR" "$CARGO_BUILD_BUILD_DIR-fuzz"; do
      [ -d "$build_dir" ] || continue
      if [ "$(du -sm "$build_dir" 2>/dev/null | cut -f1)" -gt 30720 ]; then
        echo "the shared build directory $build_dir is over 30 GiB: emptied" >&2
        rm -rf "$build_dir"
      fi
    done
    unset build_dir
  fi
  export SNOWMINT_BUILD_DIR_CHECKED=1
fi

# Clippy lints the workspace's crates while the parts build them
# (scripts/lint-rustc): a part's `cargo test`, `cargo build`, maturin's or
# cargo-fuzz's build fails on a lint as `cargo clippy -D warnings` would,
# without a check-mode build of every dependency beside the real one.
# Set RUSTC_WORKSPACE_WRAPPER (empty: none) to choose otherwise;
# scripts/release-check builds without it.
if [ -z "${RUSTC_WORKSPACE_WRAPPER+set}" ]; then
  export RUSTC_WORKSPACE_WRAPPER="$ROOT/scripts/lint-rustc"
fi

# A step's heading, with the seconds since the script started (the step
# before it took the difference): where a slow run spends its time.
say() { printf '\n==> [%ss] %s\n' "$SECONDS" "$*"; }

# ensure_cargo_tool BINARY VERSION CRATE [extra cargo install args...]
# Puts CRATE@VERSION's BINARY first on PATH: the one on PATH if its --version
# says VERSION, else $TOOLS/CRATE-VERSION/bin, installed there by cargo install
# unless an earlier run (of any checkout) did.
# ensure_cargo_tool BINARY VERSION NAME --path DIR [args...] : the same for a
# tool built from this repository's folder DIR (`cargo install --path`),
# always that build, in $TOOLS/NAME-VERSION: never another copy on PATH. Its
# own code is ours, so clippy lints it as it builds (scripts/lint-rustc).
ensure_cargo_tool() {
  local bin=$1 version=$2 crate=$3
  shift 3
  local dir="$TOOLS/$crate-$version" from=("$crate" --version "$version") lint=''
  if [ "${1:-}" = --path ]; then
    from=(--path "$2")
    lint="$ROOT/scripts/lint-rustc"
    shift 2
  fi
  if [ -x "$dir/bin/$bin" ]; then
    export PATH="$dir/bin:$PATH"
  fi
  # Another copy on PATH does for a registry crate, never for a tool of ours.
  if { [ "${from[0]}" != --path ] || [ -x "$dir/bin/$bin" ]; } &&
    command -v "$bin" >/dev/null 2>&1 && "$bin" --version 2>/dev/null | grep -qF "$version"; then
    return 0
  fi
  # One install of a tool at a time: the test command's prefetch
  # (scripts/prefetch) may be installing it in the background; waiting for it
  # and then finding its copy is quicker than compiling a second one.
  mkdir -p "$TOOLS"
  local lock
  exec {lock}>"$TOOLS/.$crate-$version.lock"
  flock "$lock"
  if [ -x "$dir/bin/$bin" ] && "$dir/bin/$bin" --version 2>/dev/null | grep -qF "$version"; then
    exec {lock}>&-
    export PATH="$dir/bin:$PATH"
    return 0
  fi
  say "installing $crate $version into $dir (cargo install)"
  # Into a temporary root of this run's own first: an interrupted install
  # leaves no half folder behind (and a checkout without the lock above, an
  # older one, installing the same tool at once does not delete ours: the
  # first to finish keeps its copy).
  local partial
  partial=$(mktemp -d "$dir.partial-XXXXXX")
  # Without the crate's own release LTO and single codegen unit (cargo-deny
  # asks for fat LTO), and not optimised (opt-level 0, no debug info, no
  # debug assertions): a tool is built once per machine and its speed hardly
  # matters (wasm-bindgen, cbindgen and cargo-deny read a few megabytes), its
  # build time does, on CI's fresh machine most of all. SNOWMINT_TOOL_OPT_LEVEL
  # sets another level: 3 for oha, the benchmarks' load generator
  # (bench/server/install).
  # No lint wrapper (above) for a crate of the registry: a tool is the only
  # member of its own workspace.
  CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    CARGO_PROFILE_RELEASE_OPT_LEVEL="${SNOWMINT_TOOL_OPT_LEVEL:-0}" RUSTC_WORKSPACE_WRAPPER="$lint" \
    cargo install --quiet --root "$partial" "${from[@]}" "$@" || {
    rm -rf "$partial" # a failed build leaves no folder behind either
    return 1
  }
  # A folder without the binary is a broken one: replace it. rename(2) onto
  # a complete folder (another checkout's, finished meanwhile) fails: keep that one.
  [ -x "$dir/bin/$bin" ] || rm -rf "$dir"
  mv -T "$partial" "$dir" 2>/dev/null || rm -rf "$partial"
  exec {lock}>&-
  export PATH="$dir/bin:$PATH"
}

# test_bins ARGS... : builds the tests `cargo test --no-run ARGS` would build
# and prints "NAME<TAB>EXECUTABLE" for each. Cargo holds the build
# directory's lock while `cargo test` runs the tests, so a part whose tests
# take minutes (scripts/test-stores, scripts/test-server) builds them with
# this and runs the executables itself: other builds (another checkout's, in
# the shared build folder) need not wait for its tests.
test_bins() {
  cargo test --quiet --profile ci --no-run --message-format=json-render-diagnostics "$@" | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["target"]["name"] + "\t" + m["executable"])'
}

# ensure_apt PACKAGE... : installs Debian packages that are missing (needs root).
ensure_apt() {
  local missing
  apt_missing "$@"
  ((${#missing[@]})) || return 0
  # One apt run of this project's scripts at a time (the test command's
  # prefetch installs the later parts' packages in the background while a
  # part may need some): wait for the other, then look again, since it may
  # have installed these. /tmp, not $TMPDIR: every checkout and every user
  # must find the same file. (An apt run of another program is waited for by
  # apt's own lock timeout below.)
  local lock
  exec {lock}>>/tmp/snowmint-apt.lock
  flock "$lock"
  apt_missing "$@"
  if ((${#missing[@]})); then
    say "installing Debian packages: ${missing[*]}"
    apt_update_once
    # Another apt run (a package manager, a parallel test) holds the lock for a while: wait for it.
    DEBIAN_FRONTEND=noninteractive $(as_root) apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
      --no-install-recommends "${missing[@]}" >/dev/null
  fi
  exec {lock}>&-
}

# apt_missing PACKAGE... : sets the caller's `missing` to those not installed.
apt_missing() {
  missing=()
  local p want native
  native=$(dpkg --print-architecture)
  for p in "$@"; do
    # A name without :ARCH is the machine's own architecture's package (or an
    # architecture-independent one): a foreign copy alone (the release check
    # installs arm64 libraries such as libcjson-dev:arm64) does not count.
    want="$native|all"
    [[ $p != *:* ]] || want=${p##*:}
    dpkg-query -W -f='${Status} ${Architecture}\n' "$p" 2>/dev/null |
      grep -qE "^install ok installed ($want)\$" || missing+=("$p")
  done
}

# as_root : prints "sudo" unless this is root already.
as_root() { [ "$(id -u)" -eq 0 ] || echo sudo; }

# apt_update_once : refreshes the package lists once per script (a fresh
# machine has none).
apt_update_once() {
  [ -z "${SNOWMINT_APT_UPDATED:-}" ] || return 0
  $(as_root) apt-get -o DPkg::Lock::Timeout=600 update -qq
  export SNOWMINT_APT_UPDATED=1
}

# ensure_arm64_dpkg : dpkg and apt take arm64 packages too (multiarch), with
# their package lists.
ensure_arm64_dpkg() {
  dpkg --print-foreign-architectures | grep -qx arm64 && return 0
  $(as_root) dpkg --add-architecture arm64
  unset SNOWMINT_APT_UPDATED # the arm64 package lists are new
  apt_update_once
}

# ensure_rust_target TRIPLE
ensure_rust_target() {
  rustup target list --installed 2>/dev/null | grep -qx "$1" || rustup target add "$1"
}

# ensure_uv : sets UV to uv UV_VERSION (from PyPI, pinned), installed with
# pip into $TOOLS/uv-UV_VERSION once per machine. The venvs' packages are
# installed with it: from its cache, a venv's packages are linked in a second
# or two, where pip unpacked them again for every checkout (the python
# part's test venv, Django and mypy among them: 18 CPU s, 47 s wall beside a
# build, against 1.6 s with uv). Like pip, it reads PyPI; a mirror is
# UV_DEFAULT_INDEX (pip's PIP_INDEX_URL is not read).
UV_VERSION=0.13.9
ensure_uv() {
  local dir="$TOOLS/uv-$UV_VERSION" lock partial
  UV="$dir/bin/uv"
  [ -x "$UV" ] && return 0
  mkdir -p "$TOOLS"
  exec {lock}>"$TOOLS/.uv-$UV_VERSION.lock"
  flock "$lock"
  if [ ! -x "$UV" ]; then
    say "installing uv $UV_VERSION into $dir (pip install --target)"
    partial=$(mktemp -d "$dir.partial-XXXXXX")
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
      --target "$partial" "uv==$UV_VERSION"
    mv -T "$partial" "$dir" 2>/dev/null || rm -rf "$partial"
  fi
  exec {lock}>&-
}

# make_venv DIR : a new venv at DIR with pip (pinned: PIP_VERSION) for the
# scripts that call it, installed by uv: python3 -m venv's own pip install
# (ensurepip) took 13 s of the 14 beside a build.
PIP_VERSION=23.2.1
make_venv() {
  ensure_uv
  python3 -m venv --without-pip "$1"
  "$UV" pip install --quiet --python "$1/bin/python" "pip==$PIP_VERSION"
}

# venv_pip VENV REQUIREMENT... : installs the requirements into the venv VENV
# with uv (ensure_uv), the venv made first when missing (make_venv), holding
# a lock on its folder: the prefetch and the lint, python and server parts
# all install into .venv; two installs of the same dependency into one venv
# at once can leave it half written.
venv_pip() {
  local venv=$1 lock
  shift
  ensure_uv
  mkdir -p "$venv"
  exec {lock}<"$venv"
  flock "$lock"
  if [ ! -x "$venv/bin/python" ]; then
    say "creating ${venv#"$ROOT"/}"
    make_venv "$venv"
  fi
  "$UV" pip install --quiet --python "$venv/bin/python" "$@"
  exec {lock}<&-
}

# ensure_venv : the build venv at .venv with maturin and pytest.
ensure_venv() {
  venv_pip "$ROOT/.venv" "maturin==$MATURIN_VERSION" "pytest==$PYTEST_VERSION"
}

# free_port : a TCP port on 127.0.0.1 that nothing accepts connections on,
# for a throwaway server (scripts/stores/*.sh). Below the kernel's ephemeral
# range (ip_local_port_range, 32768-60999 by default): a port in it may be
# the local end of a client's connection, where nothing listens, and the
# server then fails to bind it (an etcd member did: "bind: address already in
# use", 2026-11-27). Each probe has 2 s: a stopped process's listener answers
# no connection.
free_port() {
  local low p i
  read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || low=32768
  # A range starting too low to leave room below it: the default's start.
  ((low >= 12000)) || low=32768
  for ((i = 0; i < 200; i++)); do
    p=$((10000 + RANDOM % (low - 10000)))
    # shellcheck disable=SC2016
    if ! timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$p" 2>/dev/null; then
      echo "$p"
      return 0
    fi
  done
  echo "no free port found" >&2
  return 1
}

# use_stores NAME... : the lease stores NAME (postgres mysql redis etcd) for this
# script's run, each from scripts/stores/NAME.sh: the server already answering
# on its standard port (with a database or namespace of this run's own), else a
# throwaway instance from Debian's packages. Each exports
# SNOWMINT_TEST_<NAME>_URL; everything started is stopped at exit. A store that
# can be neither reached nor started fails the run. The store tests also get
# the dedicated servers they restart and the etcd member with authentication;
# STORES_EXTRA=0 skips those (the interop part, the benchmarks).
use_stores() {
  RUN_DIR=$(mktemp -d /tmp/snowmint-stores-XXXXXX)
  chmod 755 "$RUN_DIR"
  CLEANUPS=(${CLEANUPS[@]+"${CLEANUPS[@]}"}) # the caller's, if any, are kept
  STOPS=()
  trap stop_stores EXIT
  local s
  for s in "$@"; do
    # shellcheck source=/dev/null
    source "$ROOT/scripts/stores/$s.sh"
    say "stores: $s"
    "start_$s" # exports SNOWMINT_TEST_<STORE>_URL, adds to STOPS
  done
}

# stores_fence_wait : sleeps until STORES_READY_AT (epoch seconds, set by
# scripts/stores/redis.sh when `lease init` fenced new spaces on a Redis
# server started since the last run), if it is still ahead. A part that
# builds after use_stores sets STORES_DEFER_FENCE=1 before it and calls this
# after its builds: the wait (40 s with the default settings) overlaps them.
stores_fence_wait() {
  local left=$((${STORES_READY_AT:-0} - $(date +%s)))
  if ((left > 0)); then
    say "stores: waiting ${left}s more for the Redis init fence"
    sleep "$left"
  fi
}

# stop_stores : use_stores' exit trap. First CLEANUPS, last in, first out:
# what the caller started (its test processes, its servers on the stores)
# stops before the stores do. Then STOPS, what scripts/stores/*.sh started or
# created (a throwaway server's stop, a database's drop), all at once: each
# is its own server's or database's, and a MariaDB stop alone takes 2 s.
stop_stores() {
  local i stop pids=()
  for ((i = ${#CLEANUPS[@]} - 1; i >= 0; i--)); do eval "${CLEANUPS[$i]}" || true; done
  for stop in ${STOPS[@]+"${STOPS[@]}"}; do
    eval "$stop" &
    pids+=($!)
  done
  wait ${pids[@]+"${pids[@]}"} || true
  rm -rf "$RUN_DIR"
}

# ensure_zig : zig (PyPI's `ziglang`, in .venv) on PATH, for maturin --zig and
# cargo-zigbuild (napi build -x); and cargo-zigbuild itself, the binary its
# author publishes on PyPI (a wheel: no 3-minute `cargo install`).
ensure_zig() {
  ensure_venv
  venv_pip "$ROOT/.venv" "ziglang==0.17.1" "cargo-zigbuild==0.24.1"
  local dir
  dir=$("$ROOT/.venv/bin/python" -c 'import os, ziglang; print(os.path.dirname(ziglang.__file__))')
  export PATH="$dir:$ROOT/.venv/bin:$PATH"
}

# Pinned versions of the Python suite's packages (scripts/test-python,
# scripts/release-python), of the Python tools the parts install into .venv
# (scripts/test-lint, scripts/test-server, scripts/test-server-grpc), here so
# that scripts/prefetch downloads the same ones.
MATURIN_VERSION=1.16.0
# shellcheck disable=SC2034 # read by scripts/test-lint and scripts/prefetch
RUFF_VERSION=0.17.6
# shellcheck disable=SC2034 # read by scripts/test-server and scripts/prefetch
SCHEMATHESIS_VERSION=4.32.5
# shellcheck disable=SC2034 # read by scripts/test-server-grpc and scripts/prefetch
GRPC_PY_PACKAGES=("grpcio==1.85.3" "grpcio-tools==1.85.1" "grpcio-health-checking==1.85.1"
  "grpcio-reflection==1.85.1" "protobuf==7.36.2")
PYTEST_VERSION=9.2.0
MYPY_VERSION=2.4.1
DJANGO_VERSION=5.2.19
SQLALCHEMY_VERSION=2.1.9
PSYCOPG_VERSION=3.3.9

# python_test_venv DIR [--fresh] : a venv at DIR with pytest, mypy and the
# recipes' ORMs at their pinned versions (uv skips what is there already);
# --fresh recreates it first. Sets UV (ensure_uv) for the caller's installs.
python_test_venv() {
  local dir=$1
  ensure_uv
  if [ "${2:-}" = --fresh ] || [ ! -x "$dir/bin/python" ]; then
    rm -rf "$dir"
    make_venv "$dir"
  fi
  "$UV" pip install --quiet --python "$dir/bin/python" \
    "pytest==$PYTEST_VERSION" "mypy==$MYPY_VERSION" \
    "Django==$DJANGO_VERSION" "SQLAlchemy==$SQLALCHEMY_VERSION" "psycopg[binary]==$PSYCOPG_VERSION"
}

# python_suite VENV RUN_DIR : bindings-python/tests against the package
# installed in VENV, run from RUN_DIR (where the source tree is not
# importable); needs SNOWMINT_TEST_POSTGRES_URL (use_stores postgres).
python_suite() {
  local venv=$1 run_dir=$2 status
  export SNOWMINT_ROOT="$ROOT"
  export SNOWMINT_VECTORS="$ROOT/vectors"
  set +e
  (cd "$run_dir" && "$venv/bin/python" -m pytest -q -p no:cacheprovider \
    --rootdir "$ROOT/bindings-python/tests" "$ROOT/bindings-python/tests")
  status=$?
  set -e
  if [ "$status" -ne 0 ]; then
    echo "pytest failed (exit status $status)" >&2
    exit "$status"
  fi
}

# The Node packages' common steps (scripts/test-node, scripts/release-node).
# shellcheck disable=SC2034 # read by scripts/test-node and scripts/release-node
TYPESCRIPT_VERSION=5.9.3
WASM_BINDGEN_VERSION=0.2.130
# ensure_wasm_bindgen : wasm-bindgen $WASM_BINDGEN_VERSION first on PATH, built
# from tools/wasm-bindgen's lock file (its Cargo.toml says why); the folder's
# name carries the hash of that folder's files, so a change builds anew.
ensure_wasm_bindgen() {
  local hash
  hash=$(cat "$ROOT"/tools/wasm-bindgen/{Cargo.toml,Cargo.lock,main.rs} | sha256sum | cut -c1-12)
  ensure_cargo_tool wasm-bindgen "$WASM_BINDGEN_VERSION" "wasm-bindgen-$hash" \
    --path "$ROOT/tools/wasm-bindgen" --locked
}
NPM_TARBALLS="$ROOT/target/npm"

# node_wasm_fallback : the WebAssembly fallback (bindings-wasm/pkg-node, npm
# name snowmint-wasm), a dependency of snowmint; then `npm install` in
# bindings-node with that fresh build (not saved to package.json: the
# published one exists only after a release). `npm install`, not `npm ci`:
# the registry serves only the linux-x64 variants of the CLI's optional
# platform packages (see TOOLCHAIN.md).
node_wasm_fallback() {
  say "node: the WebAssembly fallback (bindings-wasm/build.sh: wasm32 target, wasm-bindgen $WASM_BINDGEN_VERSION (tools/wasm-bindgen), npm binaryen)"
  ensure_rust_target wasm32-unknown-unknown
  ensure_wasm_bindgen
  (cd "$ROOT/bindings-wasm" && npm ci --no-audit --no-fund --loglevel=error)
  # --check: the decoder page's committed www/pkg/ is compared, not
  # overwritten (written here, the wasm part's check compared the fresh build
  # with itself, and a stale module got committed unnoticed).
  CARGO_TARGET_DIR="$ROOT/target" "$ROOT/bindings-wasm/build.sh" --check
  say "node: npm install (bindings-node)"
  (cd "$ROOT/bindings-node" && npm install --no-audit --no-fund --loglevel=error --no-save ../bindings-wasm/pkg-node)
}

# node_binding_fresh : fails if the committed binding.js and index.d.ts are
# not what the last `napi build --js binding.js` generated.
node_binding_fresh() {
  say "node: the committed binding.js and index.d.ts are what the build generates"
  if ! git -C "$ROOT" ls-files --error-unmatch bindings-node/binding.js bindings-node/index.d.ts >/dev/null ||
    ! git -C "$ROOT" diff --exit-code -- bindings-node/binding.js bindings-node/index.d.ts; then
    echo "bindings-node/binding.js or index.d.ts is stale: commit the regenerated files" >&2
    exit 1
  fi
}

# node_pack PLATFORM... : `npm pack` of snowmint, snowmint-wasm and the
# platform packages (bindings-node/npm/PLATFORM, with their .node file
# already copied in) into $NPM_TARBALLS; checks what every tarball carries.
# Sets NODE_MAIN_TGZ and NODE_WASM_TGZ.
node_pack() {
  say "node: npm pack: snowmint, snowmint-wasm and the platform packages $* (into $NPM_TARBALLS)"
  rm -rf "$NPM_TARBALLS"
  mkdir -p "$NPM_TARBALLS"
  NODE_MAIN_TGZ=$(node_pack_one "$ROOT/bindings-node")
  NODE_WASM_TGZ=$(node_pack_one "$ROOT/bindings-wasm/pkg-node")
  local p tgz f
  for p in "$@"; do node_pack_one "$ROOT/bindings-node/npm/$p" >/dev/null; done
  tar -tzf "$NPM_TARBALLS/$NODE_MAIN_TGZ" | sort
  if tar -tzf "$NPM_TARBALLS/$NODE_MAIN_TGZ" | grep -E '\.(node|wasm)$'; then
    echo "the main package must ship no binary: the addons are in the platform packages, the WebAssembly in snowmint-wasm" >&2
    exit 1
  fi
  # Every tarball carries the licences (copies: npm pack skips symlinks), the
  # main one its README too.
  for tgz in "$NPM_TARBALLS"/*.tgz; do
    for f in LICENSE-MIT LICENSE-APACHE; do
      tar -xzOf "$tgz" "package/$f" | cmp - "$ROOT/$f" || { echo "$(basename "$tgz") has no $f" >&2; exit 1; }
    done
  done
  tar -xzOf "$NPM_TARBALLS/$NODE_MAIN_TGZ" package/README.md | cmp - "$ROOT/bindings-node/README.md"
  ls -l "$NPM_TARBALLS"
}
node_pack_one() { (cd "$1" && npm pack --silent --pack-destination "$NPM_TARBALLS" | tail -n 1); }

# node_consumer DIR TARBALL... : a fresh consumer project in DIR that installs
# snowmint's and snowmint-wasm's tarballs and TARBALL... (in $NPM_TARBALLS)
# as users install the published packages, plus the npm specs in NPM_EXTRA;
# --omit=optional: the other platform packages are not published.
node_consumer() {
  local dir=$1 t
  shift
  mkdir -p "$dir"
  printf '{ "name": "snowmint-consumer", "private": true, "type": "commonjs" }\n' > "$dir/package.json"
  local specs=("$NPM_TARBALLS/$NODE_MAIN_TGZ" "$NPM_TARBALLS/$NODE_WASM_TGZ")
  for t in "$@"; do specs+=("$NPM_TARBALLS/$t"); done
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error --omit=optional "${specs[@]}" ${NPM_EXTRA[@]+"${NPM_EXTRA[@]}"})
}

# package_core_crate : `cargo package -p snowmint` (no verify build) into
# target/package, and checks what the .crate carries (the licences, the
# README, an example and the test data its tests read). Sets CORE_CRATE (its
# path) and CORE_VERSION. Used by scripts/test-core and scripts/release-crate.
package_core_crate() {
  (cd "$ROOT" && cargo package --quiet -p snowmint --no-verify --allow-dirty)
  CORE_VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' "$ROOT/Cargo.toml" | head -n 1)
  CORE_CRATE="$ROOT/target/package/snowmint-$CORE_VERSION.crate"
  local listing f
  listing=$(tar tzf "$CORE_CRATE")
  for f in LICENSE-MIT LICENSE-APACHE README.md examples/mask.rs tests/data/ids.json; do
    grep -qx "snowmint-$CORE_VERSION/$f" <<<"$listing" || { echo "$CORE_CRATE has no $f" >&2; exit 1; }
  done
  for f in LICENSE-MIT LICENSE-APACHE; do tar xzOf "$CORE_CRATE" "snowmint-$CORE_VERSION/$f" | cmp - "$ROOT/$f"; done
}

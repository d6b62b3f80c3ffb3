# shellcheck shell=bash
# Shared helpers of the benchmarks' scripts (bench/*): the tools and venvs the
# test runner (xtask/) installs, the same way and under the same locks. Source
# it; do not run it.
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
  # so is the fuzz part's beside it (<dir>-fuzz: the fuzz part).
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







# ---- for the benchmarks' scripts (bench/*): the parts have these in Rust
# (xtask/src/tools.rs, venv.rs) ----

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
  # (xtask/src/prefetch.rs) may be installing it in the background; waiting for it
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

# ensure_rust_target TRIPLE
ensure_rust_target() {
  rustup target list --installed 2>/dev/null | grep -qx "$1" || rustup target add "$1"
}

# ensure_venv : the build venv at .venv with maturin and pytest (the
# versions of xtask/src/venv.rs: its test compares them).
MATURIN_VERSION=1.16.0
PYTEST_VERSION=9.2.0
ensure_venv() {
  venv_pip "$ROOT/.venv" "maturin==$MATURIN_VERSION" "pytest==$PYTEST_VERSION"
}

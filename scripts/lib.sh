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

# A step's heading, with the seconds since the script started (the step
# before it took the difference): where a slow run spends its time.
say() { printf '\n==> [%ss] %s\n' "$SECONDS" "$*"; }

# ensure_cargo_tool BINARY VERSION CRATE [extra cargo install args...]
# Puts CRATE@VERSION's BINARY first on PATH: the one on PATH if its --version
# says VERSION, else $TOOLS/CRATE-VERSION/bin, installed there by cargo install
# unless an earlier run (of any checkout) did.
ensure_cargo_tool() {
  local bin=$1 version=$2 crate=$3
  shift 3
  local dir="$TOOLS/$crate-$version"
  if [ -x "$dir/bin/$bin" ]; then
    export PATH="$dir/bin:$PATH"
  fi
  if command -v "$bin" >/dev/null 2>&1 && "$bin" --version 2>/dev/null | grep -qF "$version"; then
    return 0
  fi
  say "installing $crate $version into $dir (cargo install)"
  # Into a temporary root first: an interrupted install leaves no half folder behind.
  rm -rf "$dir.partial"
  cargo install --quiet --root "$dir.partial" "$crate" --version "$version" "$@"
  rm -rf "$dir"
  mv "$dir.partial" "$dir"
  export PATH="$dir/bin:$PATH"
}

# ensure_apt PACKAGE... : installs Debian packages that are missing (needs root).
ensure_apt() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  say "installing Debian packages: ${missing[*]}"
  apt_update_once
  # Another apt run (a package manager, a parallel test) holds the lock for a while: wait for it.
  DEBIAN_FRONTEND=noninteractive $(as_root) apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null
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

# ensure_venv : the build venv at .venv with maturin and pytest.
ensure_venv() {
  if [ ! -x "$ROOT/.venv/bin/python" ]; then
    say "creating .venv"
    python3 -m venv "$ROOT/.venv"
  fi
  "$ROOT/.venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "maturin==1.16.0" "pytest==9.2.0"
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
  CLEANUPS=()
  trap stop_stores EXIT
  local s
  for s in "$@"; do
    # shellcheck source=/dev/null
    source "$ROOT/scripts/stores/$s.sh"
    say "stores: $s"
    "start_$s" # exports SNOWMINT_TEST_<STORE>_URL, adds to CLEANUPS
  done
}

stop_stores() {
  local i
  for ((i = ${#CLEANUPS[@]} - 1; i >= 0; i--)); do eval "${CLEANUPS[$i]}" || true; done
  rm -rf "$RUN_DIR"
}

# ensure_zig : zig (PyPI's `ziglang`, in .venv) on PATH, for maturin --zig and
# cargo-zigbuild (napi build -x); and cargo-zigbuild itself (ensure_cargo_tool).
ensure_zig() {
  ensure_venv
  "$ROOT/.venv/bin/python" -m pip install --quiet --disable-pip-version-check "ziglang==0.17.1"
  local dir
  dir=$("$ROOT/.venv/bin/python" -c 'import os, ziglang; print(os.path.dirname(ziglang.__file__))')
  export PATH="$dir:$ROOT/.venv/bin:$PATH"
  ensure_cargo_tool cargo-zigbuild 0.24.1 cargo-zigbuild --locked
}

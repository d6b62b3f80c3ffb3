# Shared helpers for the scripts/test-* parts. Source it; do not run it.
#
# Tools are installed into the repository's ignored folders (.tools/ for cargo
# binaries, .venv/ for Python, node_modules/ beside each package.json) unless
# the machine already has the right version on PATH.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ROOT
TOOLS="$ROOT/.tools"
export PATH="$TOOLS/bin:$HOME/.cargo/bin:$PATH"
export CARGO_TERM_COLOR=never

# A step's heading, with the seconds since the script started (the step
# before it took the difference): where a slow run spends its time.
say() { printf '\n==> [%ss] %s\n' "$SECONDS" "$*"; }

# ensure_cargo_tool BINARY VERSION CRATE [extra cargo install args...]
# Installs CRATE@VERSION into .tools/ unless BINARY --version already says VERSION.
ensure_cargo_tool() {
  local bin=$1 version=$2 crate=$3
  shift 3
  if command -v "$bin" >/dev/null 2>&1 && "$bin" --version 2>/dev/null | grep -qF "$version"; then
    return 0
  fi
  say "installing $crate $version into .tools/ (cargo install)"
  cargo install --quiet --root "$TOOLS" "$crate" --version "$version" "$@"
}

# ensure_apt PACKAGE... : installs Debian packages that are missing (needs root).
ensure_apt() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  say "installing Debian packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  # Refresh the package lists once per run (a fresh machine has none).
  if [ -z "${SNOWMINT_APT_UPDATED:-}" ]; then
    $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
    export SNOWMINT_APT_UPDATED=1
  fi
  # Another apt run (a package manager, a parallel test) holds the lock for a while: wait for it.
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null
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
# cargo-zigbuild (napi build -x); and cargo-zigbuild itself in .tools/.
ensure_zig() {
  ensure_venv
  "$ROOT/.venv/bin/python" -m pip install --quiet --disable-pip-version-check "ziglang==0.17.1"
  local dir
  dir=$("$ROOT/.venv/bin/python" -c 'import os, ziglang; print(os.path.dirname(ziglang.__file__))')
  export PATH="$dir:$ROOT/.venv/bin:$PATH"
  ensure_cargo_tool cargo-zigbuild 0.24.1 cargo-zigbuild --locked
}

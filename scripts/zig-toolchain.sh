# Sourced, not run: puts cargo-zigbuild (and the zig it drives, which gives `ring` a C
# compiler and links for macOS, Windows and other Linux targets) on PATH, installing both
# from PyPI into a venv cached at $ROBOTA_ZIG_VENV (default ~/.cache/robota-ci/zig) the
# first time. Used by .ci/run (cross-target clippy) and scripts/release.sh.
robota_zig_toolchain() {
  local venv=${ROBOTA_ZIG_VENV:-${ROBOTA_CI_CACHE:-$HOME/.cache/robota-ci}/zig}
  if [[ ! -x $venv/bin/cargo-zigbuild || ! -x $venv/bin/python-zig ]]; then
    echo "installing ziglang and cargo-zigbuild into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv" &&
      "$venv/bin/pip" install --quiet --disable-pip-version-check ziglang cargo-zigbuild || return 1
  fi
  export PATH=$venv/bin:$PATH
}

# Adds the Rust standard libraries of the targets named.
robota_rust_targets() {
  local installed
  installed=$(rustup target list --installed)
  local missing=()
  for target in "$@"; do
    grep -qx "$target" <<<"$installed" || missing+=("$target")
  done
  if ((${#missing[@]})); then
    rustup target add "${missing[@]}"
  fi
}

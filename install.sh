#!/usr/bin/env bash
# Installs robota on the PATH.
#   ./install.sh                            builds from source (release mode) and installs
#   ./install.sh robota-<target>.tar.gz     installs a downloaded release archive, after
#                                           checking it against robota-<target>.tar.gz.sha256
#                                           beside it (scripts/release.sh makes both)
# Installs to $ROBOTA_BIN_DIR, else ~/.cargo/bin (rustup puts it on PATH). Safe to re-run:
# it replaces the installed binary; a failed check installs nothing.
set -euo pipefail

fail() {
  echo "install.sh: $*" >&2
  exit 1
}

bin_dir=${ROBOTA_BIN_DIR:-${CARGO_HOME:-$HOME/.cargo}/bin}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | awk '{print $1}'
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | awk '{print $1}'
  else
    fail "neither sha256sum nor shasum is installed, so the archive cannot be checked"
  fi
}

# Checks the archive against its .sha256 file and unpacks its binary into $1.
unpack_checked_archive() {
  local archive=$1 into=$2
  [[ -f $archive ]] || fail "$archive: no such file"
  local sums=$archive.sha256
  [[ -f $sums ]] || fail "$sums is missing: download it with the archive (the archive is not installed unchecked)"
  local expected actual
  expected=$(awk '{print $1; exit}' "$sums")
  actual=$(sha256_of "$archive")
  [[ -n $expected && $expected == "$actual" ]] ||
    fail "$archive does not match $sums (SHA-256 $actual, expected ${expected:-nothing}): download it again; nothing was installed"
  tar -xzf "$archive" -C "$into" robota || fail "$archive has no robota binary"
}

if (($# > 0)); then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  unpack_checked_archive "$1" "$work"
  binary=$work/robota
else
  cd "$(dirname "$0")"
  if ! command -v cargo >/dev/null 2>&1; then
    fail "cargo is required (https://rustup.rs), then run ./install.sh again"
  fi
  cargo build --release --locked
  binary=${CARGO_TARGET_DIR:-target}/release/robota
fi

mkdir -p "$bin_dir"
install -m 0755 "$binary" "$bin_dir/robota.new"
mv -f "$bin_dir/robota.new" "$bin_dir/robota"
echo "installed $("$bin_dir/robota" --version) to $bin_dir/robota"
case ":$PATH:" in
  *":$bin_dir:"*) ;;
  *) echo "note: $bin_dir is not on your PATH; add it, e.g. export PATH=\"$bin_dir:\$PATH\"" ;;
esac

#!/usr/bin/env bash
# Builds robota in release mode and installs the binary on the PATH.
#   ./install.sh            installs to $ROBOTA_BIN_DIR, else ~/.cargo/bin (rustup puts it on PATH)
# Safe to re-run: it rebuilds what changed and replaces the installed binary.
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v cargo >/dev/null 2>&1; then
  echo "install.sh: cargo is required (https://rustup.rs), then run ./install.sh again" >&2
  exit 1
fi

cargo build --release --locked
bin_dir=${ROBOTA_BIN_DIR:-${CARGO_HOME:-$HOME/.cargo}/bin}
mkdir -p "$bin_dir"
install -m 0755 target/release/robota "$bin_dir/robota.new"
mv -f "$bin_dir/robota.new" "$bin_dir/robota"
echo "installed $("$bin_dir/robota" --version) to $bin_dir/robota"
case ":$PATH:" in
  *":$bin_dir:"*) ;;
  *) echo "note: $bin_dir is not on your PATH; add it, e.g. export PATH=\"$bin_dir:\$PATH\"" ;;
esac

#!/usr/bin/env bash
# Builds robota's release archives with cargo-zigbuild: for each target a stripped
# release binary (the release profile: fat LTO, one codegen unit, `strip = true`) packed
# with the README into dist/robota-<target>.tar.gz, its SHA-256 sum in
# dist/robota-<target>.tar.gz.sha256 (`sha256sum -c` reads it), and all sums in
# dist/SHA256SUMS.
#   scripts/release.sh                 all targets below
#   scripts/release.sh TARGET...       only those
# ROBOTA_DIST_DIR changes where the archives go; ROBOTA_ZIG_VENV where zig is cached. The
# Linux musl binary is static; the gnu ones link glibc dynamically; the macOS ones are
# linked by zig against its bundled SDK stubs (no Xcode needed) and cannot be run here.
set -euo pipefail
cd "$(dirname "$0")/.."

ALL_TARGETS=(
  x86_64-unknown-linux-gnu
  aarch64-unknown-linux-gnu
  x86_64-unknown-linux-musl
  aarch64-apple-darwin
  x86_64-apple-darwin
)
targets=("$@")
((${#targets[@]})) || targets=("${ALL_TARGETS[@]}")
dist=${ROBOTA_DIST_DIR:-dist}
mkdir -p "$dist"
dist=$(cd "$dist" && pwd)

# shellcheck source=zig-toolchain.sh
source scripts/zig-toolchain.sh
robota_rust_targets "${targets[@]}"
robota_zig_toolchain

sha256() {
  if command -v sha256sum >/dev/null; then sha256sum "$@"; else shasum -a 256 "$@"; fi
}

target_dir=${CARGO_TARGET_DIR:-target}
for target in "${targets[@]}"; do
  echo "== $target"
  started=$SECONDS
  cargo zigbuild --release --locked --target "$target"
  binary=$target_dir/$target/release/robota
  stage=$(mktemp -d)
  install -m 0755 "$binary" "$stage/robota"
  cp README.md "$stage/"
  archive=robota-$target.tar.gz
  tar -C "$stage" -czf "$dist/$archive" robota README.md
  rm -rf "$stage"
  (cd "$dist" && sha256 "$archive" >"$archive.sha256")
  echo "$archive: binary $(wc -c <"$binary") bytes, archive $(wc -c <"$dist/$archive") bytes, $((SECONDS - started)) s"
done
(cd "$dist" && cat robota-*.tar.gz.sha256 >SHA256SUMS)
echo "archives and SHA256SUMS in $dist"

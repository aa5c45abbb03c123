#!/usr/bin/env bash
# make check: what a change must pass before anything slower runs, in under
# two minutes here: Go's formatting (gofmt -l), go vet, staticcheck, Rust's
# formatting (cargo fmt --check) and lints (cargo clippy -D warnings) for
# servers/, and the unit tests of the pure packages (no root, no
# namespaces, no servers; report's layout test uses Chromium when it is
# there; h3server's test of odd paths starts the built HTTP/3 servers for a
# moment, found through QUICBENCH_BIN). make deps installs staticcheck into
# .cache/bin.
set -euo pipefail
cd "$(dirname "$0")/.."
export QUICBENCH_BIN="$PWD/bin"

cargo=$(command -v cargo || echo "$HOME/.cargo/bin/cargo")
CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$(scripts/cache-dir.sh cargo-target)}
export CARGO_TARGET_DIR
manifest=servers/Cargo.toml

unformatted=$(gofmt -l cmd internal)
if [ -n "$unformatted" ]; then
	echo "check: gofmt would change these files (run gofmt -w on them):" >&2
	echo "$unformatted" >&2
	exit 1
fi
go vet ./...
.cache/bin/staticcheck ./...
"$cargo" fmt --all --check --manifest-path "$manifest"
"$cargo" clippy --quiet --release --locked --all-targets --manifest-path "$manifest" -- -D warnings

# The pure packages (scripts/pure-packages): logic, parsers, statistics,
# the store and the report.
mapfile -t pure < <(grep -v '^#' scripts/pure-packages)
go test -count=1 "${pure[@]/#/./internal/}"

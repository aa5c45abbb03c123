#!/usr/bin/env bash
# Runs every fuzz target of the module for FUZZTIME each (default 20s), one
# after another; a failing input is saved under the package's
# testdata/fuzz/<target>/ and the script stops with its status.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-20s}
for pkg in $(go list ./...); do
	for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
		echo "== $pkg $target ($fuzztime)"
		go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"
	done
done

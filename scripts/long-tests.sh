#!/usr/bin/env bash
# Prints the tests scripts/long-tests lists as one alternation for go
# test's -run and -skip (TestA|TestB|...), after checking that each is
# defined once in the whole tree, in the package the list names: a name
# that matched nothing, or a second test of that name elsewhere, would
# move tests between make test and make test-long unseen.
set -euo pipefail
cd "$(dirname "$0")/.."
names=()
while read -r dir name _; do
	case $dir in '' | '#'*) continue ;; esac
	here=$(grep -l "^func $name(t \*testing.T)" "$dir"/*_test.go 2>/dev/null | wc -l)
	everywhere=$(grep -rl --include='*_test.go' "^func $name(" cmd internal | wc -l)
	if [ "$here" -ne 1 ] || [ "$everywhere" -ne 1 ]; then
		echo "long-tests: scripts/long-tests names $name in $dir, defined $here times there and $everywhere times in all: name a test that exists once" >&2
		exit 2
	fi
	names+=("$name")
done <scripts/long-tests
(IFS='|' && echo "${names[*]}")

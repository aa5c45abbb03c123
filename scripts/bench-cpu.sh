#!/usr/bin/env bash
# The CPU accounting's cost per load (issue 30's target: at most 1 ms):
# two readings of a meter with a browser's and two servers' groups, by
# cgroup v2 and by /proc's process trees. Needs root (cgroups).
#   bash scripts/bench-cpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# The tests find the HTTP/3 servers in bin/ through QUICBENCH_BIN (never the working directory).
export QUICBENCH_BIN="$PWD/bin"
go test -run '^$' -bench 'BenchmarkReadPerLoad' -benchtime 3000x -count 3 ./internal/cpuuse |
	awk '/^BenchmarkReadPerLoad/ { split($1, name, "/"); sub(/-[0-9]+$/, "", name[2]); printf "%-8s %8.1f µs per load (two readings)\n", name[2], $3 / 1000 }'

#!/usr/bin/env bash
# The CPU accounting's cost per load (issue 30's target: at most 1 ms):
# two readings of a meter with a browser's and two servers' groups, by
# cgroup v2 and by /proc's process trees; and one sample of a load's
# lanes (quicbench's process, a browser's and a server's group), which a
# load takes every 50 ms. Needs root (cgroups).
#   bash scripts/bench-cpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# The tests find the HTTP/3 servers in bin/ through QUICBENCH_BIN (never the working directory).
export QUICBENCH_BIN="$PWD/bin"
go test -run '^$' -bench 'BenchmarkReadPerLoad|BenchmarkSnapshot' -benchtime 3000x -count 3 ./internal/cpuuse |
	awk '/^BenchmarkReadPerLoad/ { split($1, name, "/"); sub(/-[0-9]+$/, "", name[2]); printf "%-8s %8.1f µs per load (two readings)\n", name[2], $3 / 1000 }
	/^BenchmarkSnapshot/ { split($1, name, "/"); sub(/-[0-9]+$/, "", name[2]); printf "%-8s %8.1f µs per lane sample\n", name[2], $3 / 1000 }'

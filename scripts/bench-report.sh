#!/usr/bin/env bash
# Builds the full report of a generated 150,000-trial results database and
# prints its time and the process's peak memory (issue 6's target: ≤ 20 s,
# ≤ 1 GB). Filling the database takes a few minutes first.
set -euo pipefail
cd "$(dirname "$0")/.."
go test -run '^$' -bench BenchmarkReport150k -benchtime 1x -timeout 60m -v ./internal/report | grep -E 'filled|report of|Benchmark|ok'

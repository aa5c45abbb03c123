#!/usr/bin/env bash
# Builds the full report of a generated 150,000-trial results database and
# prints its time, the process's peak memory and its HTML's size (issue 6's
# target: ≤ 20 s, ≤ 1 GB); then the report of a 1,000-setting run and its
# HTML's size (issue 31's: ≤ 5 MB). Filling the database takes a few
# minutes first.
set -euo pipefail
cd "$(dirname "$0")/.."
# The tests find the HTTP/3 servers in bin/ through QUICBENCH_BIN (never the working directory).
export QUICBENCH_BIN="$PWD/bin"
go test -run '^$' -bench 'BenchmarkReport150k|BenchmarkReportHTML1000Settings' -benchtime 1x -timeout 60m -v ./internal/report | grep -E 'filled|report of|Benchmark|ok'

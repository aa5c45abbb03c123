#!/usr/bin/env bash
# Fills results databases with 150,000 trials (10 resources each, seed
# 000's scale) and times what `quicbench run --resume` does before its first
# trial, and `quicbench merge` of the same trials from 20 shards. Prints the
# fill times, the database size and ns per resume start and per merge.
set -euo pipefail
cd "$(dirname "$0")/.."
# The tests find the HTTP/3 servers in bin/ through QUICBENCH_BIN (never the working directory).
export QUICBENCH_BIN="$PWD/bin"
go test -run '^$' -bench 'BenchmarkResumeStart150k|BenchmarkMerge150k' -benchtime 3x -timeout 90m -v ./internal/experiment | grep -E 'filled|database|Benchmark|ok'

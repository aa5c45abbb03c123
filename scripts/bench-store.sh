#!/usr/bin/env bash
# Fills a results database with 150,000 trials (10 resources each, seed
# 000's scale) and times what `quicbench run --resume` does before its first
# trial. Prints the fill time, the database size and ns per resume start.
set -euo pipefail
cd "$(dirname "$0")/.."
go test -run '^$' -bench BenchmarkResumeStart150k -benchtime 5x -timeout 60m -v ./internal/experiment | grep -E 'filled|database|Benchmark|ok'

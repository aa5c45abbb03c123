#!/usr/bin/env bash
# Issue 45's protected network path: netcheck's idle-RTT probes across the
# demo's 100 ms RTT (no rate limit: no queue) while fresh Chromium loads the demo's page again and again,
# with the browser as before (equal CPU weight, no cap), yielding to the
# emulator and servers, and yielding with the demo's one-core cap; the
# modes alternate. Prints per mode the medians over ROUNDS rounds of the
# probes' median and p99 beyond the configured RTT, and the worst p99.
# Needs root (cgroups) and Chromium.   bash scripts/bench-protected-path.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export QUICBENCH_BIN="$PWD/bin"
go test -run '^$' -bench 'BenchmarkIdleRTTDuringLoads' -benchtime "${ROUNDS:-10}x" -timeout 30m ./internal/chromium |
	awk '/^BenchmarkIdleRTTDuringLoads/ {
		for (i = 3; i < NF; i += 2) v[$(i + 1)] = $i
		for (m in v) if (m ~ /-p99-error-ms$/ && m !~ /worst/) { sub(/-p99-error-ms$/, "", m); modes[m] = 1 }
		for (m in modes) printf "%-12s idle-RTT error beyond 100 ms: median %.3f ms, p99 %.3f ms (median of rounds), worst p99 %.3f ms\n", m, v[m "-median-error-ms"], v[m "-p99-error-ms"], v[m "-worst-p99-error-ms"]
		printf "rounds: %d\n", v["rounds"]
	}'

#!/usr/bin/env bash
# Issue 45's item 1: where a fresh browser's CPU goes while it loads the
# demo's page (32 × 10 KB over h2 behind the demo's link without its loss),
# by process kind, in ms of CPU since the browser's start read once the
# metrics are in: a bare load (nothing subscribed, one read of the metrics
# after the load event), bare with each of quicbench's instruments alone,
# and quicbench's load; Chromium's "start" mode reads right after the
# browser opened its first page. Modes alternate, ROUNDS rounds (default
# 10); the table gives the medians and each mode's total against bare.
# Needs root, Chromium and Firefox (make build firefox).   bash scripts/bench-browser-cpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export QUICBENCH_BIN="$PWD/bin"
rounds="${ROUNDS:-10}"
table() {
	awk -v browser="$1" '/^Benchmark/ {
		for (i = 3; i < NF; i += 2) {
			name = $(i + 1)
			if (name !~ /-ms$/) continue
			sub(/-ms$/, "", name)
			n = split(name, part, "-")
			kind = part[n]
			mode = substr(name, 1, length(name) - length(kind) - 1)
			v[mode, kind] = $i
			if (!(mode in seen)) { seen[mode] = 1; order[++modes] = mode }
		}
	}
	END {
		printf "%s    %-17s %7s %7s %8s %5s %7s %7s %6s %9s %9s\n", browser, "mode", "total", "browser", "renderer", "gpu", "network", "utility", "zygote", "PLT", "÷ bare"
		for (m = 1; m <= modes; m++) {
			k = order[m]
			printf "%s    %-17s %7.0f %7.0f %8.0f %5.0f %7.0f %7.0f %6.0f %9.1f %9.2f\n", browser, k, v[k, "total"], v[k, "browser"], v[k, "renderer"], v[k, "gpu"], v[k, "network"], v[k, "utility"], v[k, "zygote"], v[k, "plt"], v[k, "total"] / v["bare", "total"]
		}
	}'
}
go test -run '^$' -bench 'BenchmarkBrowserCPUByInstrument' -benchtime "${rounds}x" -timeout 30m ./internal/chromium | table chromium
go test -run '^$' -bench 'BenchmarkFirefoxCPUByInstrument' -benchtime "${rounds}x" -timeout 30m ./internal/firefox | table firefox
echo "rounds: $rounds; CPU in ms, medians over the rounds"

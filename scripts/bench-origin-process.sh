#!/usr/bin/env bash
# Issue 30's before and after of the Go origin in a process of its own: the
# emulator's idle-RTT probes (netcheck's, 200 per round across a 20 ms and a
# 2 ms link without a rate limit) while a quic-go client fetches a 1 MB file over h3
# without pause, from the Go origin in quicbench's process ("in") and in its
# own ("own"), alternating; ROUNDS rounds of each (default 10, about 6 s a
# round per RTT). Prints per RTT and place the medians over the rounds of the probes' median
# and p99 minus the RTT, the worst round's p99, and the transfers' goodput.
# Needs root.   bash scripts/bench-origin-process.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
# The tests find the HTTP/3 servers in bin/ through QUICBENCH_BIN (never the working directory).
export QUICBENCH_BIN="$PWD/bin"
rounds=${1:-10}
echo "== idle RTT during 1 MB h3 transfers, Go origin in quicbench's process (in) or its own (own); $rounds rounds, $(nproc) cores, $(date -u +%Y-%m-%d)"
go test -run '^$' -bench 'BenchmarkIdleRTTDuringH3Transfer' -benchtime "${rounds}x" -count 1 ./internal/netcheck |
	awk '/^BenchmarkIdleRTTDuringH3Transfer/ {
		for (i = 3; i < NF; i += 2) { v[$(i+1)] = $i }
		split($1, name, "/"); sub(/-[0-9]+$/, "", name[2])
		printf "%s: own process had the lower p99 in %d of %d rounds\n", name[2], v["own-lower-p99-rounds"], v["rounds"]
		split("in own", ps, " ")
		for (k = 1; k <= 2; k++) {
			p = ps[k]
			printf "%-4s median error %+.3f ms, p99 error %+.3f ms (worst round %+.3f), goodput %.1f Mbit/s\n", p,
				v[p "-median-error-ms"], v[p "-p99-error-ms"], v[p "-worst-p99-error-ms"], v[p "-goodput-Mbit/s"]
		}
	}
	/^(FAIL|panic|---)/ { print; bad = 1 }
	END { exit bad }'

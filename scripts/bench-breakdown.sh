#!/usr/bin/env bash
# The breakdown's validation networks (issue 61; the tests of
# internal/experiment/parts_test.go with more loads), each built so that
# one part of a load's time dominates, compared with quicbench compare:
# prints each network's answer ("Why, h3 against h2 …") and its table of
# the loads taken apart. Then what the breakdown costs after a load
# (BenchmarkBreakdownOfALoad) and what the packet log costs the emulator
# per packet (BenchmarkPacketPath). CLIENT=chromium runs them in Chromium
# instead of the built-in loader. About 3 minutes with the loader; needs
# root.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s deps build
client=${CLIENT:-loader}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() {
	local name=$1
	shift
	echo "== $name ($client)"
	./bin/quicbench compare --client "$client" --protocols h2,h3 --netcheck=false --out "$work/$name" "$@" |
		sed -n '/^Answer:/p;/^Each load.s time taken apart/,/^$/p'
}
run handshakes --rtt 200ms --loss 0 --down 0 --up 0 --page synthetic:4x2KB --runs 8
run loss --rtt 20ms --loss-down 2 --loss-up 0 --down 0 --up 0 --page synthetic:64x2KB --runs 12
run loss-clean --rtt 20ms --loss 0 --down 0 --up 0 --page synthetic:64x2KB --runs 12
run link --rtt 40ms --loss 0 --down 1mbit --up 1mbit --page synthetic:4x50KB --runs 3
run servers --rtt 20ms --loss 0 --down 0 --up 0 --page synthetic:4x2KB+wait200ms --runs 3
go test ./internal/breakdown -run '^$' -bench BreakdownOfALoad -benchtime 2s | grep '^Benchmark'
go test ./internal/emulator -run '^$' -bench PacketPath -benchtime 2s | grep '^Benchmark'

#!/usr/bin/env bash
# The live path's own cost: the same synthetic page loaded live from the
# stand-in site (a namespace beyond the host's routing, through the
# uplink) and served in the testbed, over the same emulated network, 10
# rounds of h2 and h3 in Chromium each. Prints each protocol's PLT
# medians both ways and their ratio. About two minutes; root.
set -euo pipefail
cd "$(dirname "$0")/.."
# The tests find the HTTP/3 servers in bin/ through QUICBENCH_BIN (never the working directory).
export QUICBENCH_BIN="$PWD/bin"
go test -run '^$' -bench 'BenchmarkLiveAgainstTestbed' -benchtime 1x -timeout 20m -v ./internal/experiment | grep -E 'live |testbed |Benchmark|ok'

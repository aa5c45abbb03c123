#!/usr/bin/env bash
# Benchmarks of the link emulator (issue 3's targets), printed as numbers.
# Needs root and bin/quicbench (make build). Takes about five minutes.
# Record the output in BENCHMARKS.md with the date and the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
# The tests find the HTTP/3 servers in bin/ through QUICBENCH_BIN (never the working directory).
export QUICBENCH_BIN="$PWD/bin"
qb=./bin/quicbench

echo "== machine: $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%d)"

echo "== RTT error on an idle link (netcheck, 500 probes, kernel receive timestamps)"
for rtt in 20ms 100ms 200ms; do
	$qb netcheck --rtt $rtt --probes 500 --loss-probes 100 --transfer 1s | grep "RTT, idle" | sed "s/^/$rtt: /" || true
done

echo "== loss rate over 20,000 packets per direction, 99% intervals"
$qb netcheck --rtt 20ms --loss 1 --loss-probes 20000 --confidence 0.99 --probes 50 --transfer 1s | grep "loss," || true
$qb netcheck --rtt 20ms --gilbert 1,30,100,0 --loss-probes 20000 --confidence 0.99 --probes 50 --transfer 1s | grep "loss," || true

echo "== TCP goodput, lossless, 100 ms queue, 10 s transfers (ideal = rate x 1448/1500)"
for rate in 1mbit 10mbit 100mbit 1gbit; do
	$qb netcheck --rtt 20ms --down $rate --up $rate --queue 100ms --probes 50 --loss-probes 500 --transfer 10s | grep "TCP goodput" | sed "s/^/$rate: /" || true
done

echo "== unshaped forwarding (iperf3 TCP, 10 s, no delay, no rate limit)"
$qb shell --server 'iperf3 -s >/dev/null 2>&1' --server-port 5201 -- sh -c 'iperf3 -c $QUICBENCH_SERVER_ADDR -t 10 -R | grep receiver' 2>&1 | grep -E "receiver|CPU"

echo "== emulator CPU at 100 Mbit/s (iperf3 TCP download, 10 s)"
$qb shell --rtt 20ms --down 100mbit --up 100mbit --queue 20ms --server 'iperf3 -s >/dev/null 2>&1' --server-port 5201 -- sh -c 'iperf3 -c $QUICBENCH_SERVER_ADDR -t 10 -R | grep receiver' 2>&1 | grep -E "receiver|CPU"

echo "== trace-driven link: 30 whole periods of a 1-second trace cut from Verizon-LTE-short.down, flooded at twice its rate"
QUICBENCH_TRACE_SECONDS=31 go test -count=1 -v -run TestTraceDeliversItsCapacity ./internal/emulator | grep "packets in"

#!/usr/bin/env bash
# The emulator's CPU at each load of issue 16's table, as quicbench shell
# reports it (getrusage of the quicbench process, the commands not
# included): idle, pings at 50 packets/s at 50 and 20 ms RTT, and TCP
# downloads (iperf3, 10 s) at 10 and 100 Mbit/s and 1 Gbit/s. About 80 s;
# needs root (or runs rootless) and bin/quicbench (make build). make bench
# runs it after bench-emulator.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
qb=./bin/quicbench
cpu() { grep -E "emulator CPU" | sed "s/^quicbench shell: //"; }
iperf() { # rate
	$qb shell --rtt 20ms --down "$1" --up "$1" --queue 20ms --server 'iperf3 -s >/dev/null 2>&1' --server-port 5201 -- \
		sh -c 'iperf3 -c $QUICBENCH_SERVER_ADDR -t 10 -R | grep receiver' 2>&1 | grep -E "receiver|CPU" | sed "s/^quicbench shell: //"
}
echo "== emulator CPU (one core = 100 %), $(nproc) cores, $(date -u +%Y-%m-%d)"
echo -n "idle, 10 s: "; $qb shell --rtt 50ms -- sleep 10 2>&1 | cpu
echo -n "ping 50/s, 50 ms RTT: "; $qb shell --rtt 50ms -- sh -c 'ping -c 500 -i 0.02 -q $QUICBENCH_SERVER_ADDR >/dev/null' 2>&1 | cpu
echo -n "ping 50/s, 20 ms RTT: "; $qb shell --rtt 20ms -- sh -c 'ping -c 500 -i 0.02 -q $QUICBENCH_SERVER_ADDR >/dev/null' 2>&1 | cpu
for rate in 10mbit 100mbit 1gbit; do
	echo "TCP download at $rate:"
	iperf $rate
done

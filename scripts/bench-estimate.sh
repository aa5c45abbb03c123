#!/usr/bin/env bash
# The plan's duration model against measured runs (issue 78, item 5): three
# specs of different kinds (a synthetic page, web2024 pages, two recorded
# sites imported from DIR), each in Chromium and Firefox, over h2 and h3 on
# two networks; for each, the plan's estimate (quicbench plan
# --measure-overheads: with this machine's overheads a load) beside the
# run's wall time (quicbench run, from its start to its last record), and
# the estimate's error. About 15 minutes; needs root (or runs rootless),
# bin/quicbench (make build) and Firefox (make firefox).
# Usage: scripts/bench-estimate.sh [DIR]   (default ../shared/recordings)
set -euo pipefail
if [ -n "${1:-}" ]; then
	[ -d "$1" ] || { echo "bench-estimate: $1 is no directory of recordings: give one" >&2; exit 2; }
	dir=$(cd "$1" && pwd)
fi
cd "$(dirname "$0")/.."
qb=${QB:-./bin/quicbench}
export QUICBENCH_BIN=${QUICBENCH_BIN:-$PWD/bin}
dir=${dir:-../shared/recordings}
work=$(mktemp -d "${TMPDIR:-/tmp}/quicbench-estimate.XXXXXX") # mode 0700, a name nobody chose
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
for rec in www.nghttp2.org.har www.wayfair.com.mahimahi; do
	[ -e "$dir/$rec" ] || { echo "bench-estimate: $dir has no $rec: give the shared recordings' directory" >&2; exit 2; }
	format=har
	[ -d "$dir/$rec" ] && format=mahimahi
	"$qb" import "$format" "$dir/$rec" --to "$work/$rec" --upgrade-http >/dev/null
done
spec() { # NAME PAGES: a spec of PAGES in both browsers, h2 and h3, two networks, 8 repetitions
	cat >"$work/$1.yaml" <<YAML
name: estimate-$1
seed: 1
repetitions: 8
factors:
  networks: [{name: dsl, rtt: 40ms, down: 20mbit, up: 5mbit}, {name: lossy, rtt: 80ms, down: 10mbit, up: 2mbit, loss: 1}]
  pages: [$2]
  protocols: [h2, h3]
  clients: [chromium, firefox]
YAML
}
spec synthetic 'synthetic:16x10KB'
spec web2024 'web2024:2'
spec recorded "\"archive:$work/www.nghttp2.org.har\", \"archive:$work/www.wayfair.com.mahimahi\""
echo "== the plan's estimate against measured runs, $(nproc) cores, $(date -u +%Y-%m-%d)"
printf '%-10s %7s %10s %10s %7s\n' spec trials estimate measured error
for name in synthetic web2024 recorded; do
	# this machine's overheads first (a pilot of about 30 s, not in the measured time)
	est=$("$qb" plan "$work/$name.yaml" --measure-overheads | sed -n 's/^estimated duration: \([^ ]*\).*/\1/p')
	trials=$("$qb" plan "$work/$name.yaml" | sed -n 's/.* = \([0-9,]*\) trials.*/\1/p' | head -n 1)
	start=$(date +%s.%N)
	"$qb" run "$work/$name.yaml" --out "$work/run-$name" >"$work/$name.log" 2>&1 || { echo "$name: run failed: $(tail -n 1 "$work/$name.log")"; continue; }
	end=$(date +%s.%N)
	python3 - "$name" "$trials" "$est" "$start" "$end" <<'PY'
import re, sys
name, trials, est, start, end = sys.argv[1:]
units = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}
secs = sum(float(v) * units[u] for v, u in re.findall(r"([\d.]+)(ms|h|m|s)", est))
measured = float(end) - float(start)
print(f"{name:10} {trials:>7} {secs / 60:9.1f}m {measured / 60:9.1f}m {100 * (secs - measured) / measured:+6.0f}%")
PY
done

#!/usr/bin/env bash
# Issue 45's CPU-bound experiment: the demo comparison on a quiet machine
# and beside a CPU hog (busy loops at normal priority, one per core or
# one in all), each party's measured waiting for a CPU per load, and how
# many loads each rule calls CPU-bound: the old usage rule (cpu_bound as
# recorded before the wait rule, or recomputed) and the wait rule at
# several shares of the load. Needs root (cgroups) and Chromium.
#   bash scripts/bench-cpuwait.sh   # RUNS=10 CPUS="1 unlimited" HOGS="0 2 1" PROTOCOLS=h1,h2,h3
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/quicbench}
RUNS=${RUNS:-10}
CPUS=${CPUS:-"1 unlimited"}
HOGS=${HOGS:-"0 2 1"}
PROTOCOLS=${PROTOCOLS:-h1,h2,h3}
work=$(mktemp -d)
hogs=()
stop_hogs() {
	for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${hogs[@]}"; do wait "$pid" 2>/dev/null || true; done
	hogs=()
}
trap 'stop_hogs; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

# summarize prints one condition's loads: per party the wait's share of
# the load (the client's beyond its cap's throttling), the old rule's
# verdicts and the wait rule's at several shares, and h3/h2's median PLT.
summarize() {
	python3 - "$1" "$2" <<'PY'
import csv, statistics, sys
label, path = sys.argv[1], sys.argv[2]
rows = [r for r in csv.DictReader(open(path)) if r["status"] == "ok" and r["cpu_window_ms"]]
def f(r, k):
    return float(r[k]) if r[k] else 0.0
shares = {"client beyond cap": [], "server": [], "quicbench": []}
old = 0
plt = {}
for r in rows:
    w = f(r, "cpu_window_ms")
    client = f(r, "client_cpus_others_ms") if r.get("client_cpus_others_ms") else max(0.0, f(r, "client_cpu_wait_ms") - f(r, "client_cpu_throttled_ms"))
    shares["client beyond cap"].append(client / w)
    shares["server"].append(f(r, "server_cpu_wait_ms") / w)
    shares["quicbench"].append(f(r, "quicbench_cpu_wait_ms") / w)
    used = (f(r, "client_cpu_user_ms") + f(r, "client_cpu_system_ms")) / w
    old += used >= 0.8 or f(r, "idle_pct") < 10
    plt.setdefault(r["protocol"], []).append(f(r, "plt_ms"))
def q(v, p):
    v = sorted(v)
    return v[round(p * (len(v) - 1))]
ratio = statistics.median(plt["h3"]) / statistics.median(plt["h2"]) if "h3" in plt and "h2" in plt else float("nan")
print(f"{label:24s} loads {len(rows):3d}  h3/h2 median PLT {ratio:.3f}")
for name, v in shares.items():
    print(f"  wait share {name:18s} min/p10/median/p90/max " + "/".join(f"{q(v, p):.3f}" for p in (0, .1, .5, .9, 1)))
line = f"  CPU-bound loads: usage rule (0.8 core or under 10 % idle) {old}"
for t in (0.05, 0.10, 0.15, 0.20, 0.30):
    n = sum(1 for i in range(len(rows)) if any(v[i] >= t for v in shares.values()))
    line += f", wait >= {t:.2f}: {n}"
print(line)
PY
}

for cpu in $CPUS; do
	for hog in $HOGS; do
		for ((i = 0; i < hog; i++)); do
			sh -c 'while :; do :; done' &
			hogs+=($!)
		done
		out="$work/cpu$cpu-hog$hog"
		"$BIN" compare --rtt 100ms --loss 1 --down 10mbit --up 5mbit --queue 200ms \
			--page synthetic:32x10KB --protocols "$PROTOCOLS" --runs "$RUNS" --client-cpu "$cpu" \
			--netcheck=false --out "$out" >/dev/null 2>&1 || true
		stop_hogs
		"$BIN" export "$out" >/dev/null
		summarize "client_cpu $cpu, hogs $hog" "$out/export/trials.csv"
		# the paired h3/h2 ratio and its interval, from the report
		"$BIN" report "$out" 2>/dev/null | awk '/^network +page +pairs/ { getline; sub(/^[^ ]+ +[^ ]+ +/, ""); print "  paired h3/h2: pairs " $0 }' 
	done
done

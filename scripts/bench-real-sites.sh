#!/usr/bin/env bash
# Issue 26's benchmark: real recordings of real sites replayed as they were
# recorded. Imports every recording in DIR (Mahimahi directories, HAR files
# *.har, WebPageReplay archives *.wprgo; links are skipped; exchanges over
# plain http are kept as https with --upgrade-http), replays each
# with compare over h1, h2 and h3 in Chromium, or in the client CLIENT names
# (CLIENT=firefox) (RUNS rounds, default 3; 40 ms
# RTT, 10/5 Mbit/s, no loss), and prints per site: the recording's
# responses, origins and exchanges upgraded from http, and per protocol the
# verified loads and the medians of the requests the page started up to its
# load event (load), those the servers answered over the whole load
# (served), fuzzy matches and unmatched requests (those not counted against
# the tolerance in brackets); then the share of verified loads and whether
# each site's protocols did the same work (median requests up to the load
# event within 2 %), after the reason of each load that failed. About 12 s
# per load; needs root (or runs rootless) and bin/quicbench (make build).
# Usage: [CLIENT=firefox] scripts/bench-real-sites.sh DIR [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
qb=${QB:-./bin/quicbench}
dir=${1:?usage: scripts/bench-real-sites.sh DIR [RUNS]}
runs=${2:-3}
client=${CLIENT:-chromium}
work=$(mktemp -d "${TMPDIR:-/tmp}/quicbench-real.XXXXXX") # mode 0700, a name nobody chose
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
echo "== real recordings in $dir, $runs rounds × h1,h2,h3 in $client, $(nproc) cores, $(date -u +%Y-%m-%d)"
for rec in "$dir"/*; do
	name=$(basename "$rec")
	[ -L "$rec" ] && continue
	case "$rec" in
	*.har) format=har ;;
	*.wprgo) format=wpr ;;
	*) if [ -d "$rec" ]; then format=mahimahi; else continue; fi ;;
	esac
	if ! "$qb" import "$format" "$rec" --to "$work/$name" --upgrade-http >"$work/$name.import" 2>&1; then
		echo "$name: import failed: $(tail -n 1 "$work/$name.import")"
		continue
	fi
	"$qb" compare --client "$client" --page "archive:$work/$name" --protocols h1,h2,h3 --runs "$runs" --rtt 40ms --loss 0 --down 10mbit --up 5mbit \
		--netcheck=false --json --out "$work/run-$name" >"$work/$name.json" 2>"$work/$name.err" || true
	echo "$name" >>"$work/sites"
done
[ -f "$work/sites" ] || { echo "no recording in $dir"; exit 2; }
python3 - "$work" <<'PY'
import json, re, statistics, sys
work = sys.argv[1]
total = verified = same = sites = 0
failures = []
print(f"{'site':24} {'resp':>5} {'orig':>4} {'upg':>4}  " + "  ".join(f"{p + ' ok/n':>8} {'load':>5} {'served':>6} {'fuzzy':>5} {'unm (not counted)':>17}" for p in ("h1", "h2", "h3")) + "  work")
for name in open(f"{work}/sites").read().split():
    imp = open(f"{work}/{name}.import").read()
    m = re.search(r"(\d+) origins?, (\d+) responses?", imp)
    up = re.search(r"(\d+) exchanges over plain http kept as https", imp)
    try:
        run = json.load(open(f"{work}/{name}.json"))
    except (OSError, ValueError):
        print(f"{name:24} compare failed: {open(f'{work}/{name}.err').read().strip().splitlines()[-1:]}")
        continue
    sites += 1
    cols, medians = [], []
    for p in ("h1", "h2", "h3"):
        ts = [d["trial"] for d in run["trials"] if d["trial"]["protocol"] == p]
        ok = [t for t in ts if t["status"] == "ok"]
        failures += [f"{name} {p}: {t.get('error', '')[:300]}" for t in ts if t["status"] != "ok"]
        total, verified = total + len(ts), verified + len(ok)
        med = lambda k: statistics.median([t[k] for t in ok]) if ok else float("nan")
        notc = statistics.median([t["browser_own_unmatched"] + t["steady_unmatched"] for t in ok]) if ok else float("nan")
        medians.append(med("load_requests"))
        cols.append(f"{len(ok):>4}/{len(ts):<3} {med('load_requests'):>5.0f} {med('server_requests'):>6.0f} {med('replay_fuzzy'):>5.0f} {med('unmatched_requests'):>8.0f} ({notc:>4.0f})  ")
    ok_meds = [x for x in medians if x == x]
    alike = len(ok_meds) == 3 and (max(ok_meds) - min(ok_meds)) <= 0.02 * min(ok_meds)
    same += alike
    print(f"{name:24} {m.group(2) if m else '?':>5} {m.group(1) if m else '?':>4} {up.group(1) if up else '0':>4}  " + "  ".join(cols) + ("same" if alike else "DIFFERENT"))
for f in failures:
    print("failed:", f)
print(f"verified loads: {verified} of {total} ({100 * verified / max(total, 1):.1f} %); sites whose protocols did the same work (median requests up to the load event within 2 %): {same} of {sites}")
PY

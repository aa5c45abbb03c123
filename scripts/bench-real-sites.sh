#!/usr/bin/env bash
# The real-sites benchmark (issues 26 and 46): real recordings of real sites,
# made by others, replayed as they were recorded. Imports every recording
# in DIR (default ../shared/recordings: Mahimahi directories, HAR files
# *.har, WebPageReplay archives *.wprgo; links and other files are
# skipped; exchanges over plain http are kept as https with
# --upgrade-http; each at the viewport its recording implies), replays
# each with compare over h1, h2 and h3 in every client of CLIENTS
# (default "chromium firefox"), RUNS rounds (default 3) behind 40 ms RTT,
# 20/5 Mbit/s, no loss, and prints per client and site: the recording's
# responses and origins and the viewport it replays at; per protocol the
# verified loads, the medians of the requests the page started up to its
# load event (load) and of those the servers answered (served), the
# variants served, and the unmatched requests by cause: the browser's own
# (own), unmatched in an earlier load with no recorded sibling (steady:
# beacons, ads, what the recording never held), with a recorded sibling
# (sib, never excused), the rest (other); broken images (recorded as no
# image / lacking from the recording; per client their totals by cause), the navigations the browser held
# (hld: the page sent the tab to a document the recording lacks) and where
# the viewport came from (from). Then per client the share of
# verified loads, the loads failed for another load's requests, whether
# each site's protocols did the same work (median requests up to the load
# event within 2 %), the reason of each failed load and, per site, the
# documents loads landed on when the page navigated itself elsewhere and
# the unmatched requests of loads that had steady ones. About 10 s per load; needs root (or runs
# rootless) and bin/quicbench (make build), and Firefox for its default clients (make firefox).
# SERVER (default go) is compare's --server and --quic-server (go: the Go
# origin and quic-go; caddy: one Caddy process for h1, h2 and h3; nginx:
# nginx for h1 and h2, quic-go for h3).
# CLIENT_CPU (default auto) is compare's --client-cpu; the column cpu counts
# each site's CPU-bound verified loads over its protocols.
# Usage: [CLIENTS="chromium firefox"] [CLIENT_CPU=auto] [SERVER=go] scripts/bench-real-sites.sh [DIR] [RUNS]
set -euo pipefail
if [ -n "${1:-}" ]; then
	[ -d "$1" ] || { echo "bench-real-sites: $1 is no directory of recordings: give one" >&2; exit 2; }
	dir=$(cd "$1" && pwd)
fi
cd "$(dirname "$0")/.."
qb=${QB:-./bin/quicbench}
dir=${dir:-../shared/recordings}
runs=${2:-3}
clients=${CLIENTS:-chromium firefox}
client_cpu=${CLIENT_CPU:-auto}
server=${SERVER:-go}
case "$server" in
go) quic_server=quic-go ;;
caddy) quic_server=caddy ;;
nginx) quic_server=quic-go ;;
*) echo "bench-real-sites: SERVER=$server is no server stack: give go, caddy or nginx" >&2; exit 2 ;;
esac
work=$(mktemp -d "${TMPDIR:-/tmp}/quicbench-real.XXXXXX") # mode 0700, a name nobody chose
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
[ -d "$dir" ] || { echo "bench-real-sites: $dir is no directory of recordings: give one" >&2; exit 2; }
echo "== real recordings in $dir, $runs rounds × h1,h2,h3 in $clients from $server and $quic_server, 40 ms, 20/5 Mbit/s, client CPU $client_cpu, $(nproc) cores, $(date -u +%Y-%m-%d)"
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
	echo "$name" >>"$work/sites"
done
[ -f "$work/sites" ] || { echo "no recording in $dir"; exit 2; }
for client in $clients; do
	for name in $(cat "$work/sites"); do
		"$qb" compare --client "$client" --client-cpu "$client_cpu" --server "$server" --quic-server "$quic_server" --page "archive:$work/$name" --protocols h1,h2,h3 --runs "$runs" --rtt 40ms --loss 0 --down 20mbit --up 5mbit \
			--netcheck=false --json --out "$work/run-$client-$name" >"$work/$client-$name.json" 2>"$work/$client-$name.err" || true
	done
done
python3 - "$work" "$clients" <<'PY'
import collections, json, re, statistics, sys
work, clients = sys.argv[1], sys.argv[2].split()
names = open(f"{work}/sites").read().split()
P = ("h1", "h2", "h3")
for client in clients:
    total = verified = same = sites = leaked = 0
    failures, excused, landed, variants, held = [], {}, {}, {}, {}
    broken = collections.Counter()
    print(f"\n-- {client}")
    print(f"{'site':30} {'resp':>4} {'orig':>4} {'viewport':>20} {'from':>14}  " + "  ".join(f"{p + ' ok/n':>7} {'load':>4} {'srv':>4} {'var':>3} {'own':>3} {'hld':>3} {'std':>3} {'sib':>3} {'oth':>3} {'brk':>5}" for p in P) + "  work       cpu")
    for name in names:
        imp = open(f"{work}/{name}.import").read()
        m = re.search(r"(\d+) origins?, (\d+) responses?", imp)
        vp = re.search(r"viewport (\d+x\d+@[\d.]+(?:,mobile)?)", imp)
        vp = vp.group(1) if vp else "?"
        try:
            source = json.load(open(f"{work}/{name}/archive.json")).get("viewport_source") or "?"
        except (OSError, ValueError):
            source = "?"
        source = ("requests" if source.startswith("the recording's requests") else "user agent" if source.startswith("the User-Agent") else
                  "default" if source == "the default" else source[:14])
        try:
            run = json.load(open(f"{work}/{client}-{name}.json"))
        except (OSError, ValueError):
            err = open(f"{work}/{client}-{name}.err").read().strip().splitlines()[-1:]
            print(f"{name:30} compare failed: {err}")
            continue
        sites += 1
        cols, medians = [], []
        for p in P:
            ts = [d["trial"] for d in run["trials"] if d["trial"]["protocol"] == p]
            ok = [t for t in ts if t["status"] == "ok"]
            for t in ts:
                if t["status"] != "ok":
                    failures.append(f"{name} {p}: {t.get('error', '')[:300]}")
                    leaked += "over another protocol" in t.get("error", "")
            total, verified = total + len(ts), verified + len(ok)
            med = lambda f: statistics.median([f(t) for t in ok]) if ok else float("nan")
            medians.append(med(lambda t: t["load_requests"]))
            other = med(lambda t: t["unmatched_requests"] - t["browser_own_unmatched"] - t.get("held_navigations", 0) - t["steady_unmatched"] - t["sibling_unmatched"])
            brk = f"{med(lambda t: t['broken_images_recorded']):.0f}/{med(lambda t: t['broken_images_unserved']):.0f}"
            cols.append(f"{len(ok):>3}/{len(ts):<3} {med(lambda t: t['load_requests']):>4.0f} {med(lambda t: t['server_requests']):>4.0f} "
                        f"{med(lambda t: t['replay_variant']):>3.0f} {med(lambda t: t['browser_own_unmatched']):>3.0f} {med(lambda t: t.get('held_navigations', 0)):>3.0f} {med(lambda t: t['steady_unmatched']):>3.0f} "
                        f"{med(lambda t: t['sibling_unmatched']):>3.0f} {other:>3.0f} {brk:>5}")
            for t in ok:
                for c in t.get("broken_image_causes") or []:
                    broken[c] += 1
                for v in t.get("variant_urls") or []:
                    variants.setdefault(name, collections.Counter())[v[:160]] += 1
                for u, c in zip(t.get("unmatched_urls") or [], t.get("unmatched_causes") or []):
                    if c == "held navigation":
                        held.setdefault(name, collections.Counter())[u[:110]] += 1
                if t.get("landed_url"):
                    landed.setdefault(name, collections.Counter())[t["landed_url"][:110]] += 1
                if t["steady_unmatched"]:
                    for u in t.get("unmatched_urls") or []:
                        excused.setdefault(name, collections.Counter())[re.sub(r"[?#].*", "", u)[:110]] += 1
        ok_meds = [x for x in medians if x == x]
        alike = len(ok_meds) == 3 and (max(ok_meds) - min(ok_meds)) <= 0.02 * min(ok_meds)
        same += alike
        bound = sum(p.get("cpu_bound_loads", 0) for sc in run.get("cpu") or [] for p in sc["protocols"])
        print(f"{name:30} {m.group(2) if m else '?':>4} {m.group(1) if m else '?':>4} {vp:>20} {source:>14}  " + "  ".join(cols) + ("  same     " if alike else "  DIFFERENT") + f"  {bound:>3} bound")
    for f in failures:
        print("failed:", f)
    for name, c in landed.items():
        print(f"landed elsewhere (the page's own navigation, to a page the recording holds), {name}: " + "; ".join(f"{u} ×{n}" for u, n in c.most_common(3)))
    for name, c in held.items():
        print(f"navigations held (the tab stayed on the recorded page), {name}: " + "; ".join(f"{u} ×{n}" for u, n in c.most_common(3)))
    for name, c in variants.items():
        print(f"variants served (request, then the recorded target that answered), {name}: {len(c)} distinct: " + "; ".join(f"{u} ×{n}" for u, n in c.most_common(3)))
    for name, c in excused.items():
        print(f"unmatched in loads with steady ones, {name}: " + "; ".join(f"{u} ×{n}" for u, n in c.most_common(6)))
    print(f"{client}: broken images in verified loads by cause: " + (", ".join(f"{c} {n}" for c, n in sorted(broken.items())) or "none") + " (a recorded image must be 0: such a load fails)")
    print(f"{client}: verified loads {verified} of {total} ({100 * verified / max(total, 1):.1f} %); failed for another protocol's requests: {leaked}; "
          f"sites whose protocols did the same work (median requests up to the load event within 2 %): {same} of {sites}")
PY

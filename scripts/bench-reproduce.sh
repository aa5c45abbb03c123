#!/usr/bin/env bash
# Quick reproductions from run to run (issue 47): each paper's quick
# reproduction with a seed, its verdicts kept before any decide round, and
# the table of every paper and seed found, with the verdicts that moved.
#
#   scripts/bench-reproduce.sh run SEED PAPER...   # e.g. run 1 cook2017 masri (root; ~10–30 min a paper)
#   scripts/bench-reproduce.sh decide PAPER BUDGET # the seed-1 reproduction's undecided claims, e.g. decide wolsing2019 40m
#   scripts/bench-reproduce.sh table               # every paper's verdicts by seed, and what moved
#
# Runs go in runs/bench-reproduce/<paper>-s<seed>/; a stopped run continues
# where it stopped when run again. Each reproduction's verdicts before
# deciding are kept as quick-claims.csv beside claims.csv.
set -euo pipefail
cd "$(dirname "$0")/.."
qb=${QB:-./bin/quicbench}
# The HTTP/3 servers (make servers) beside the project's quicbench, also for a QB elsewhere.
export QUICBENCH_BIN=${QUICBENCH_BIN:-$PWD/bin}
root=runs/bench-reproduce
trap 'exit 130' INT TERM

run() {
	local seed=$1
	shift
	[[ $seed =~ ^[1-9][0-9]*$ ]] || { echo "bench-reproduce: seed $seed is not a positive whole number" >&2; exit 2; }
	mkdir -p "$root"
	local failed=0
	for paper in "$@"; do
		local out=$root/$paper-s$seed
		echo "== $paper, seed $seed, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		if "$qb" reproduce "$paper" --seed "$seed" --out "$out" >"$out.log" 2>"$out.err"; then
			grep -E "trials recorded|claims:" "$out.log"
			cp "$out/claims.csv" "$out/quick-claims.csv"
		else
			local rc=$?
			# Ctrl-C reaches quicbench first: stop here, not at the next paper.
			[ $rc -ne 130 ] || { echo "$paper: interrupted; run it again to continue"; exit 130; }
			echo "$paper: reproduce failed (exit $rc): $(tail -n 1 "$out.err")"
			failed=1
		fi
	done
	return $failed
}

decide() {
	local paper=$1 budget=$2 out=$root/$1-s1
	[ -f "$out/quick-claims.csv" ] || { echo "bench-reproduce: no quick reproduction of $paper in $out: run 'run 1 $paper' first" >&2; exit 2; }
	echo "== $paper, deciding within $budget, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	"$qb" reproduce "$paper" --seed 1 --out "$out" --decide --budget "$budget" >"$out-decide.log" 2>"$out-decide.err" ||
		{ echo "$paper: reproduce --decide failed: $(tail -n 1 "$out-decide.err")"; return 1; }
	grep -E "^Deciding|decide-[0-9]+: " "$out-decide.log"
	sed -n '/^Decided/,/^$/p' "$out-decide.log"
}

table() {
	python3 - "$root" <<'PY'
import csv, glob, os, re, sys
root = sys.argv[1]
runs = {}
for path in sorted(glob.glob(os.path.join(root, "*-s*", "quick-claims.csv"))):
    paper, seed = re.match(r"(.+)-s(\d+)$", os.path.basename(os.path.dirname(path))).groups()
    runs.setdefault(paper, {})[int(seed)] = {r["claim"]: r for r in csv.DictReader(open(path))}
def fmt(r):
    v, lo, hi = (float(r[k]) for k in ("value", "ci95_low", "ci95_high"))
    return f"{r['verdict']} {v:.2f} [{lo:.2f}, {hi:.2f}]"
for paper, seeds in runs.items():
    order = sorted(seeds)
    print(f"\n{paper}: seeds {', '.join(map(str, order))}")
    print("| claim | " + " | ".join(f"seed {s}" for s in order) + " | moved |")
    print("|---|" + "---|" * len(order) + "---|")
    flips = moves = 0
    for claim in seeds[order[0]]:
        rows = [seeds[s].get(claim) for s in order]
        verdicts = [r["verdict"] if r else "-" for r in rows]
        decided = {v for v in verdicts if v in ("agrees", "disagrees")}
        moved = "flip" if len(decided) > 1 else ("to/from inconclusive" if len(set(verdicts)) > 1 else "")
        flips += moved == "flip"
        moves += moved == "to/from inconclusive"
        print(f"| {claim} | " + " | ".join(fmt(r) if r else "-" for r in rows) + f" | {moved} |")
    tallies = []
    for s in order:
        counts = {}
        for r in seeds[s].values():
            counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
        tallies.append(f"seed {s}: " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())))
    print(f"{'; '.join(tallies)}; agrees↔disagrees flips: {flips}; moves to or from inconclusive: {moves}")
PY
}

case "${1:-}" in
run) [ $# -ge 3 ] || { echo "usage: $0 run SEED PAPER..." >&2; exit 2; }; shift; run "$@" ;;
decide) [ $# -eq 3 ] || { echo "usage: $0 decide PAPER BUDGET" >&2; exit 2; }; decide "$2" "$3" ;;
table) table ;;
*) echo "usage: $0 run SEED PAPER... | decide PAPER BUDGET | table" >&2; exit 2 ;;
esac

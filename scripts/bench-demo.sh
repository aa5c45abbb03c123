#!/usr/bin/env bash
# Issue 62, item 2: how often the demo's answer decides, in how many
# rounds. Runs `make demo` N times (default 10) with seeds 1..N, each into
# a run directory of its own, and prints per run the time, the rounds the
# until rule used, and the answer's verdict of h3 against h2 with its
# interval; then how many decided. Needs root; up to about 110 s a run.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build
n=${1:-10}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
decided=0
for seed in $(seq 1 "$n"); do
	start=$(date +%s)
	make -s demo DEMO_FLAGS="--seed $seed --out $work/demo-$seed" >"$work/out-$seed" 2>&1
	secs=$(($(date +%s) - start))
	out="$work/out-$seed"
	answer=$(grep '^Answer:' "$out" | head -1 | sed 's/); h3 was [a-z ]* h1.*//')
	stop=$(grep -A2 '^Repetitions until' "$out" | tail -1 | grep -o 'repetition [0-9]*  [a-z:]* *[a-z ]*' | sed 's/  */ /g' || true)
	verdict=$(echo "$answer" | grep -o 'h3 was [a-z ]* h2[^(]*\|h3 and h2 had too few loads' | head -1)
	interval=$(echo "$answer" | grep -o 'Hodges–Lehmann [0-9.]*, 99 % repeated CI [0-9.–]*' | head -1)
	needs=$(echo "$answer" | grep -o 'a run of about [0-9]* rounds' | head -1 || true)
	case "$verdict" in
	*"was faster than h2"* | *"was slower than h2"*) decided=$((decided + 1)) ;;
	esac
	echo "seed $seed | ${secs} s | ${stop} | ${verdict} | ${interval} | ${needs}"
done
echo "decided: $decided of $n"

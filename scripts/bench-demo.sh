#!/usr/bin/env bash
# Issue 62, item 2: how often the demo's answer decides. Runs the demo's
# comparison N times (default 10) with seeds 1..N, each into a run
# directory of its own, and prints per run the verdict of h3 against h2,
# its interval, the loads and the time; then how many decided. Needs root;
# about 75 s a run.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build
n=${1:-10}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
decided=0
for seed in $(seq 1 "$n"); do
	start=$(date +%s)
	./bin/quicbench compare --rtt 100ms --loss 1 --down 10mbit --up 5mbit --queue 200ms \
		--page synthetic:32x10KB --protocols h1,h2,h3 --runs 10 --client-cpu 1 --seed "$seed" \
		--out "$work/demo-$seed" >"$work/out-$seed" 2>&1
	secs=$(($(date +%s) - start))
	answer=$(grep '^Answer:' "$work/out-$seed" | sed 's/^Answer: .* client core: //; s/); h3 was.*/)/; s/); h3 and.*/)/')
	case "$answer" in
	*"was faster than h2"* | *"was slower than h2"*) decided=$((decided + 1)) ;;
	esac
	echo "seed $seed, ${secs} s: $answer"
done
echo "decided: $decided of $n"

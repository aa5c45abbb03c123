#!/usr/bin/env bash
# What the lanes' sampling costs (issue 48): `compare` on the demo network,
# PAIRS (3) pairs of runs of RUNS (5) rounds of h1, h2 and h3, one with the
# lanes sampled and one with --lanes=false, alternating, so that the
# machine's drift falls on both alike. Prints per setting the loads'
# median CPU of quicbench's process, of the browser and of the server
# over the measured visit, the median PLT and the samples per load, and
# the difference of quicbench's CPU per load with the lanes. BIN=PATH
# measures another build. About 6 minutes; needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-}
if [ -z "$bin" ]; then
	make -s deps build
	bin=./bin/quicbench
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
for pair in $(seq "${PAIRS:-3}"); do
	for lanes in true false; do
		"$bin" compare --runs "${RUNS:-5}" --netcheck=false --client-cpu 1 --lanes="$lanes" \
			--out "$work/$lanes-$pair" >/dev/null 2>&1
	done
done
.cache/pytools/bin/python - "$work" <<'PY'
import glob, sqlite3, statistics as st, sys
by = {"true": [], "false": []}
for path in sorted(glob.glob(sys.argv[1] + "/*/results.db")):
    lanes = path.split("/")[-2].split("-")[0]
    db = sqlite3.connect(path)
    by[lanes] += db.execute(
        "SELECT quicbench_cpu_user_ms + quicbench_cpu_system_ms, client_cpu_user_ms + client_cpu_system_ms, "
        "server_cpu_user_ms + server_cpu_system_ms, plt_ms, cpu_window_ms, "
        "(SELECT count(*) FROM samples s WHERE s.trial_id = t.trial_id) FROM trials t WHERE status = 'ok'").fetchall()
med = {}
for lanes in ("true", "false"):
    rows = by[lanes]
    col = lambda i: st.median(r[i] for r in rows)
    med[lanes] = col(0)
    print(f"lanes={lanes:5}  {len(rows):3} loads: quicbench CPU {col(0):6.1f} ms, browser {col(1):6.1f} ms, "
          f"server {col(2):5.1f} ms, PLT {col(3):7.1f} ms, window {col(4):7.1f} ms, {col(5):4.0f} samples per load")
# The difference of the medians, with a 95 % bootstrap interval.
import random
rng = random.Random(1)
on, off = [r[0] for r in by["true"]], [r[0] for r in by["false"]]
diffs = sorted(st.median(rng.choices(on, k=len(on))) - st.median(rng.choices(off, k=len(off))) for _ in range(2000))
print(f"quicbench CPU per load with the lanes: {med['true'] - med['false']:+.1f} ms "
      f"({100 * (med['true'] / med['false'] - 1):+.1f} %) of the median, 95 % CI {diffs[50]:+.1f} to {diffs[1949]:+.1f} ms")
PY

#!/usr/bin/env bash
# Measures the harness's overhead per trial (issue 29, item 4): `compare` on
# the demo network, RUNS (10) rounds of h1, h2 and h3, for Chromium and
# Firefox, each fresh and warm, one run after the other. BIN=PATH measures
# another build (an older commit's, for a before and after in one session).
# Prints per run the median overhead per trial — the time from one trial's
# record to the next one's less the next one's PLT, from the trials' time
# stamps, so that builds that define the overhead column differently
# compare — with its quartiles, the median of the overhead column and of the
# browser start, and the run's whole time. About 7 minutes; needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-}
if [ -z "$bin" ]; then
	make -s deps build
	bin=./bin/quicbench
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for client in ${CLIENTS:-chromium firefox}; do
	for mode in ${MODES:-fresh warm}; do
		start=$(date +%s.%N)
		"$bin" compare --client "$client" --browser "$mode" --runs "${RUNS:-10}" --netcheck=false \
			--out "$work/$client-$mode" >/dev/null
		end=$(date +%s.%N)
		.cache/pytools/bin/python - "$work/$client-$mode/results.db" "$client $mode" "$start" "$end" <<'PY'
import sqlite3, statistics as st, sys
from datetime import datetime
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT finished_at, status, plt_ms, first_visit_plt_ms, overhead_ms, browser_start_ms "
                  "FROM trials ORDER BY seq").fetchall()
def at(s):  # RFC 3339 with nanoseconds: keep microseconds
    head, _, frac = s.rstrip("Z").partition(".")
    return datetime.fromisoformat(head + "." + (frac + "000000")[:6])
cycle = []
for prev, cur in zip(rows, rows[1:]):
    if cur[1] == "ok":
        span = (at(cur[0]) - at(prev[0])).total_seconds() * 1000
        cycle.append(span - cur[2] - (cur[3] or 0))
col = [r[4] for r in rows if r[4] is not None]
start = [r[5] for r in rows if r[5] is not None]
q = st.quantiles(cycle, n=4)
ok = sum(r[1] == "ok" for r in rows)
print(f"{sys.argv[2]:16} overhead per trial median {st.median(cycle):6.1f} ms [p25 {q[0]:6.1f}, p75 {q[2]:6.1f}] "
      f"(column {st.median(col):6.1f}), browser start {st.median(start):6.1f} ms, "
      f"{ok}/{len(rows)} verified, run {float(sys.argv[4]) - float(sys.argv[3]):5.1f} s")
PY
	done
done

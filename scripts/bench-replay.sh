#!/usr/bin/env bash
# Measures replay of a recorded site (issue 11's targets): generated page
# web2024:18 (113 requests on 7 origins) saved as a site archive and
# replayed, beside the same page served directly, 5 interleaved rounds of
# h1, h2 and h3 in Chromium on a 20 ms link. Prints per protocol and page
# the verified loads, unmatched requests, requests the servers served, the
# median PLT and the median harness overhead per trial (wall − PLT; target
# ≤ 0.7 s). About 2 minutes; needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s deps build
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
./bin/quicbench corpus --archive 18 --to "$work/site" >/dev/null
cat >"$work/replay.yaml" <<SPEC
name: replay
seed: 1
repetitions: 5
retries: 0
netcheck: false
factors:
  networks: [{name: fast, rtt: 20ms, down: 50mbit, up: 10mbit}]
  pages: ["archive:site", "web2024:18"]
  protocols: [h1, h2, h3]
SPEC
./bin/quicbench run "$work/replay.yaml" --out "$work/run" >/dev/null
.cache/pytools/bin/python - "$work/run/results.db" <<'PY'
import sqlite3, statistics as st, sys
db = sqlite3.connect(sys.argv[1])
for page in ("archive:site", "web2024:18"):
    for p in ("h1", "h2", "h3"):
        rows = db.execute("SELECT status, unmatched_requests, server_requests, plt_ms, overhead_ms FROM trials WHERE page = ? AND protocol = ?", (page, p)).fetchall()
        ok = [r for r in rows if r[0] == "ok"]
        print(f"{page:13} {p}: {len(ok)}/{len(rows)} verified, {sum(r[1] for r in rows)} unmatched, "
              f"server requests median {st.median(r[2] for r in rows):.0f}, PLT median {st.median(r[3] for r in ok):.0f} ms, "
              f"overhead median {st.median(r[4] for r in ok):.0f} ms (max {max(r[4] for r in ok):.0f})")
PY

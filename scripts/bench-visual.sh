#!/usr/bin/env bash
# Measures what capturing frames costs (issue 12's targets): for each of two
# settings, 12 interleaved rounds of h2 and h3 with and without visual
# capture, then prints per protocol the median PLT without and with it, their
# ratio, and the time decoding the frames and computing the visual metrics
# took per visual load (target ≤ 1 s). In Chromium, or in the client CLIENT
# names (CLIENT=firefox). About 4 minutes; needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s deps build
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
spec() { # name network page
	cat >"$work/$1.yaml" <<SPEC
name: $1
seed: 1
repetitions: 12
netcheck: false
factors:
  networks: [$2]
  pages: [$3]
  protocols: [h2, h3]
  visual: [off, on]
  clients: [${CLIENT:-chromium}]
SPEC
}
spec lte wolsing2019-lte synthetic:30x10KB
spec fast '{rtt: 10ms}' synthetic:100x8KB
for s in lte fast; do
	./bin/quicbench run "$work/$s.yaml" --out "$work/$s" >/dev/null
	.cache/pytools/bin/python - "$work/$s/results.db" "$s" <<'PY'
import sqlite3, statistics as st, sys
db = sqlite3.connect(sys.argv[1])
for p in ("h2", "h3"):
    col = lambda c, v: [r[0] for r in db.execute(f"SELECT {c} FROM trials WHERE protocol = ? AND visual = ? AND status = 'ok'", (p, v))]
    off, on, comp, frames = col("plt_ms", 0), col("plt_ms", 1), col("visual_compute_ms", 1), col("frames", 1)
    print(f"{sys.argv[2]:5} {p}: PLT median {st.median(off):.1f} ms plain, {st.median(on):.1f} ms visual "
          f"(ratio {st.median(on) / st.median(off):.3f}, n {len(off)}/{len(on)}); frames median {st.median(frames):.0f}; "
          f"metrics computed in median {st.median(comp):.0f} ms, max {max(comp):.0f} ms")
PY
done

#!/usr/bin/env bash
# Measures what pairing trials buys (issue 15, item 1): the same spec run
# twice, with and without `pairing: true`, 32 repetitions of h2 and h3 in
# Chromium on lossy networks. Prints per network the width of the 95 % CI
# of the h3/h2 ratio: unpaired (bootstrap of the medians) in both runs,
# paired (Hodges-Lehmann over repetitions) in both runs (in the unpaired
# run the pairs share nothing but their neighbourhood in time: the
# control). About 8 minutes; needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s deps build
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for pairing in true false; do
	cat >"$work/p-$pairing.yaml" <<SPEC
name: pairing-$pairing
seed: 11
repetitions: 32
netcheck: false
pairing: $pairing
factors:
  networks:
    - {name: loss2, rtt: 40ms, loss: 2, down: 10mbit, up: 5mbit, queue: 200ms}
    - {name: bursty, rtt: 80ms, gilbert: "0.5,50", down: 20mbit, up: 5mbit, queue: 200ms}
  pages: [synthetic:30x10KB]
  protocols: [h2, h3]
SPEC
	./bin/quicbench run "$work/p-$pairing.yaml" --out "$work/$pairing" >/dev/null
done
.cache/pytools/bin/python - "$work" <<'PY'
import math, sqlite3, statistics as st, sys
from statistics import NormalDist
def hl(d):
    n = len(d); w = sorted((d[i] + d[j]) / 2 for i in range(n) for j in range(i, n))
    k = math.floor(n * (n + 1) / 4 - NormalDist().inv_cdf(0.975) * math.sqrt(n * (n + 1) * (2 * n + 1) / 24))
    return math.exp(st.median(w)), math.exp(w[k - 1]), math.exp(w[len(w) - k])
def boot(q, t, reps=4000):
    import random
    r = random.Random(1); out = []
    for _ in range(reps):
        out.append(st.median(r.choices(q, k=len(q))) / st.median(r.choices(t, k=len(t))))
    out.sort(); return out[int(0.025 * reps)], out[int(0.975 * reps) - 1]
for net in ("loss2", "bursty"):
    for pairing in ("true", "false"):
        db = sqlite3.connect(f"{sys.argv[1]}/{pairing}/results.db")
        rows = db.execute("SELECT rep, protocol, plt_ms FROM trials WHERE network = ? AND status = 'ok'", (net,)).fetchall()
        by = {}
        for rep, p, v in rows: by.setdefault(rep, {})[p] = v
        pairs = [(x["h3"], x["h2"]) for x in by.values() if "h2" in x and "h3" in x]
        q = [v for _, p, v in rows if p == "h3"]; t = [v for _, p, v in rows if p == "h2"]
        lo, hi = boot(q, t)
        r, plo, phi = hl([math.log(a / b) for a, b in pairs])
        print(f"{net:6} pairing {pairing:5}: n {len(t)}/{len(q)}, ratio {st.median(q)/st.median(t):.3f}; "
              f"unpaired CI [{lo:.3f}, {hi:.3f}] width {hi-lo:.3f}; paired over {len(pairs)} reps {r:.3f} [{plo:.3f}, {phi:.3f}] width {phi-plo:.3f}; "
              f"h2 PLT CV {st.stdev(t)/st.mean(t):.2f}")
PY

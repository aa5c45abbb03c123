#!/usr/bin/env bash
# Caddy's h2 against the Go server's (issue 65's target: within 10 %): one
# run on the demo network (100 ms, 1 % loss, 10/5 Mbit/s, 200 ms queue;
# the demo page; Chromium on one core) with servers go and caddy as a
# factor, ROUNDS (15) paired rounds of h2 (a round's two loads draw the
# same losses). Prints each server's median PLT and the paired median
# ratio caddy/go with its 95 % bootstrap interval. BIN=PATH measures
# another build. About 90 s; needs root.
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
cat >"$work/spec.yaml" <<SPEC
name: caddy-against-go
seed: ${SEED:-1}
repetitions: ${ROUNDS:-15}
factors:
  networks:
    - {name: demo, rtt: 100ms, loss: 1, down: 10mbit, up: 5mbit, queue: 200ms}
  pages: [synthetic:32x10KB]
  servers: [go, caddy]
  protocols: [h2]
  client_cpu: [1]
SPEC
"$bin" run "$work/spec.yaml" --out "$work/run" >/dev/null 2>&1
python3 - "$work/run/results.db" <<'PY'
import math, random, sqlite3, statistics as st, sys
db = sqlite3.connect(sys.argv[1])
rounds = {}
for server, rep, plt in db.execute("SELECT server, rep, plt_ms FROM trials WHERE status = 'ok'"):
    rounds.setdefault(rep, {})[server] = plt
pairs = [r for r in rounds.values() if "go" in r and "caddy" in r]
logs = [math.log(r["caddy"] / r["go"]) for r in pairs]
random.seed(1)
boot = sorted(math.exp(st.median(random.choices(logs, k=len(logs)))) for _ in range(10000))
print(f"{len(pairs)} paired rounds; median PLT go {st.median(r['go'] for r in pairs):.1f} ms, caddy {st.median(r['caddy'] for r in pairs):.1f} ms")
print(f"caddy/go h2 PLT, paired median ratio {math.exp(st.median(logs)):.3f}, 95 % CI {boot[249]:.3f}-{boot[9749]:.3f}")
PY

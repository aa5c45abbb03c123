#!/usr/bin/env bash
# The spread of loads within a cell, as the paper-like test of
# internal/papers draws it (issue 76): for each run's results.db, the
# median and 75th percentile, over its cells of at least 3 successful
# loads, of a metric's coefficient of variation, without loss and with.
#
#   scripts/cell-spread.sh METRIC RUN_DIR...   # METRIC: plt, onload, dcl, ttfb, fvc, speed_index
#
# A cell is a setting of every factor (network, page, protocol, visit …),
# the trial ID before its repetition; its repetitions are its loads.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: scripts/cell-spread.sh METRIC RUN_DIR..." >&2; exit 2; }
metric=$1
shift
case $metric in
plt | onload | dcl | ttfb | fvc) col=${metric}_ms ;;
speed_index) col=speed_index ;;
*) echo "cell-spread: metric $metric is not plt, onload, dcl, ttfb, fvc or speed_index" >&2; exit 2 ;;
esac
for dir in "$@"; do
	db=$dir/results.db
	[ -f "$db" ] && [ ! -L "$db" ] || { echo "cell-spread: $db is not a results file (give a run's directory)" >&2; exit 2; }
	sqlite3 -readonly -separator ' ' "file:$db?mode=ro" "
WITH cells AS (
  SELECT (loss_up_pct + loss_down_pct > 0 OR loss_model_up NOT IN ('none', 'bernoulli') OR loss_model_down NOT IN ('none', 'bernoulli')) AS lossy,
         count($col) AS n, avg($col) AS m, avg($col * $col) AS m2
  FROM trials WHERE status = 'ok' AND $col > 0
  GROUP BY substr(trial_id, 1, instr(trial_id, '-r') - 1)
  HAVING n >= 3)
SELECT lossy, sqrt(max(m2 - m * m, 0) * n / (n - 1)) / m FROM cells ORDER BY lossy, 2;" |
		awk -v dir="$dir" -v metric="$metric" '
{ cv[$1, ++n[$1]] = $2 }
END {
	for (l = 0; l <= 1; l++) {
		if (!n[l]) continue
		med = cv[l, int((n[l] + 1) / 2)]; p75 = cv[l, int(0.75 * n[l] + 0.5) > 0 ? int(0.75 * n[l] + 0.5) : 1]
		printf "%s %s %s: %d cells, CV median %.3f, p75 %.3f\n", dir, metric, (l ? "with loss" : "without loss"), n[l], med, p75
	}
}'
done

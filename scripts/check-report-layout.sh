#!/usr/bin/env bash
# Checks reports' layout in headless Chromium (issue 31): for each report
# directory given (one that holds index.html, such as RUN/report), no text
# leaves its figure, no two labels of a figure overlap and the page is no
# wider than a 1400-pixel window. With SHOTS=DIR, saves a full-page
# screenshot of each report there (report-1.jpg, …, in the order given).
#   scripts/check-report-layout.sh runs/compare-*/report
set -euo pipefail
cd "$(dirname "$0")/.."
# The tests find the HTTP/3 servers in bin/ through QUICBENCH_BIN (never the working directory).
export QUICBENCH_BIN="$PWD/bin"
if [ $# -eq 0 ]; then
	echo "usage: scripts/check-report-layout.sh REPORT_DIR..." >&2
	exit 2
fi
dirs=()
for d in "$@"; do
	if [ ! -f "$d/index.html" ]; then
		echo "check-report-layout: $d has no index.html (give a report directory, such as RUN/report)" >&2
		exit 2
	fi
	dirs+=("$(cd "$d" && pwd -P)")
done
shots=""
if [ -n "${SHOTS:-}" ]; then
	mkdir -p "$SHOTS"
	shots=$(cd "$SHOTS" && pwd -P)
fi
QUICBENCH_REPORT_DIRS=$(IFS=:; echo "${dirs[*]}") QUICBENCH_SCREENSHOTS="$shots" \
	go test -count=1 -run '^TestLayoutOfReportDirs$' -v ./internal/report | grep -E '^(=== RUN|--- |\s+layout_test|ok|FAIL)'

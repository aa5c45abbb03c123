#!/usr/bin/env bash
# Installs what quicbench needs on a Debian machine and skips what is there:
# Chromium (the browser under test), iproute2 (ip netns), ping and iperf3
# (link checks), nginx (the second server stack; its service is not
# started), the Go modules, and DuckDB's Python package in .cache/pytools
# (the tests read the Parquet export with it). Needs root only when it
# installs packages.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
[ -x /usr/lib/chromium/chromium ] || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v ping >/dev/null 2>&1 || need+=(iputils-ping)
command -v iperf3 >/dev/null 2>&1 || need+=(iperf3)
[ -x /usr/sbin/nginx ] || need+=(nginx)
command -v python3 >/dev/null 2>&1 || need+=(python3)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need+=(python3-venv)

if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: installing ${need[*]} needs root: run 'sudo make ...'" >&2
		exit 1
	fi
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "install-deps: no apt-get: install ${need[*]} with your package manager" >&2
		exit 1
	fi
	echo "install-deps: installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# Keep package scripts from starting services (nginx would listen on
	# port 80 of this machine); quicbench starts nginx itself, in a namespace.
	policy=/usr/sbin/policy-rc.d
	own_policy=
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && own_policy=1
	fi
	apt-get install -y -qq "${need[@]}" >/dev/null
	[ -z "$own_policy" ] || rm -f "$policy"
fi

if ! command -v go >/dev/null 2>&1; then
	echo "install-deps: Go is missing: install Go 1.26 or later (apt-get install golang-go gives an older one; see go.dev/doc/install)" >&2
	exit 1
fi
go mod download

# DuckDB, a Parquet reader that is not ours, for the export's tests.
duckdb_version=2.0.0
pytools=.cache/pytools
if ! "$pytools/bin/python" -c "import duckdb, sys; sys.exit(duckdb.__version__ != '$duckdb_version')" >/dev/null 2>&1; then
	echo "install-deps: installing DuckDB $duckdb_version into $pytools"
	rm -rf "$pytools"
	python3 -m venv "$pytools"
	"$pytools/bin/pip" install -q "duckdb==$duckdb_version"
fi

#!/usr/bin/env bash
# Installs what the named features of quicbench need on a Debian machine,
# and skips what is there. Needs root only when it installs packages.
#
#   scripts/install-deps.sh FEATURE...   # e.g. demo, or servers firefox
#
# Features (make has a target of each name):
#   demo     the default comparison: Chromium, iproute2 (ip netns) and the
#            Go modules (Go 1.26 must be there)
#   servers  quicbench's HTTP/3 servers of servers/ with Rust's cargo:
#            quicbench-h3 (quinn, h3, rustls) and quicbench-quiche (quiche
#            and BoringSSL, built from source with CMake and libclang:
#            about 6 minutes the first time, in a cargo target directory
#            this user's clones share: scripts/cache-dir.sh), into bin/
#   firefox  Firefox ESR, and certutil (libnss3-tools) to put a run's CA
#            into its profiles
#   nginx    nginx, the second server stack (its service is not started)
#   caddy    Caddy, the server stack that serves h1, h2 and h3 from one
#            process (its service is not started)
#   slurm    Slurm's client, controller and node daemon and munge (their
#            services are not started)
#   tools    what make check and make test need besides: ping and iperf3
#            (link checks), staticcheck, cargo's clippy and rustfmt, DuckDB,
#            Pillow and NumPy in .cache/pytools (the export's and visual
#            metrics' checks), and Browsertime's visualmetrics with ffmpeg
#   all      every feature
set -euo pipefail
cd "$(dirname "$0")/.."

features=("$@")
[ ${#features[@]} -gt 0 ] || features=(all)
want() {
	local f
	for f in "${features[@]}"; do
		[ "$f" = "$1" ] || [ "$f" = all ] && return 0
	done
	return 1
}
for f in "${features[@]}"; do
	case $f in
	demo | servers | firefox | chromium-shell | nginx | caddy | slurm | tools | all) ;;
	*)
		echo "install-deps: no feature '$f': give demo, servers, firefox, chromium-shell, nginx, caddy, slurm, tools or all" >&2
		exit 2
		;;
	esac
done
# make test and make check use every feature.
want tools && features+=(demo servers firefox chromium-shell nginx caddy slurm)

need=()
if want demo; then
	[ -x /usr/lib/chromium/chromium ] || need+=(chromium)
	command -v ip >/dev/null 2>&1 || need+=(iproute2)
fi
if want firefox; then
	[ -x /usr/lib/firefox-esr/firefox-esr ] || need+=(firefox-esr)
	command -v certutil >/dev/null 2>&1 || need+=(libnss3-tools)
fi
if want chromium-shell; then
	[ -x /usr/lib/chromium/chromium-headless-shell ] || need+=(chromium-headless-shell)
fi
if want nginx; then
	[ -x /usr/sbin/nginx ] || need+=(nginx)
	command -v ss >/dev/null 2>&1 || need+=(iproute2)
fi
if want caddy; then
	[ -x /usr/bin/caddy ] || need+=(caddy)
fi
if want slurm; then
	[ -x /usr/sbin/slurmctld ] || need+=(slurmctld)
	[ -x /usr/sbin/slurmd ] || need+=(slurmd)
	command -v sbatch >/dev/null 2>&1 || need+=(slurm-client)
	command -v munged >/dev/null 2>&1 || need+=(munge)
fi
if want servers; then
	# quiche's BoringSSL (boring-sys) builds with CMake and binds with
	# bindgen, which loads libclang.
	command -v cmake >/dev/null 2>&1 || need+=(cmake)
	dpkg -s libclang-dev >/dev/null 2>&1 || need+=(libclang-dev)
fi
if want tools; then
	command -v ping >/dev/null 2>&1 || need+=(iputils-ping)
	command -v iperf3 >/dev/null 2>&1 || need+=(iperf3)
	command -v python3 >/dev/null 2>&1 || need+=(python3)
	python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
	command -v ffmpeg >/dev/null 2>&1 || need+=(ffmpeg)
	command -v npm >/dev/null 2>&1 || need+=(npm)
fi

if [ ${#need[@]} -gt 0 ]; then
	mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
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
	# Keep package scripts from starting services (nginx and Caddy would
	# listen on port 80 of this machine); quicbench starts them itself, in a
	# namespace.
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

cargo=$(command -v cargo || echo "$HOME/.cargo/bin/cargo")
# The servers' builds are shared by this user's clones.
CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$(scripts/cache-dir.sh cargo-target)}
export CARGO_TARGET_DIR
if (want servers || want tools) && [ ! -x "$cargo" ]; then
	echo "install-deps: Rust's cargo is missing: install Rust 1.85 or later with rustup (https://rustup.rs; Debian 12's cargo is too old)" >&2
	exit 1
fi

if want servers; then
	# Built from the crates servers/Cargo.lock pins into bin/ beside quicbench.
	"$cargo" build --quiet --release --locked --manifest-path servers/Cargo.toml
	mkdir -p bin
	for server in quicbench-h3 quicbench-quiche; do
		install -m 0755 "$CARGO_TARGET_DIR/release/$server" "bin/$server"
	done
fi

want tools || exit 0

# staticcheck, which make check runs, into .cache/bin at a pinned version.
staticcheck_version=v0.8.2
if [ "$(.cache/bin/staticcheck -version 2>/dev/null | awk '{print $NF}' | tr -d '()')" != "${staticcheck_version#v}" ]; then
	echo "install-deps: installing staticcheck $staticcheck_version into .cache/bin"
	GOBIN="$PWD/.cache/bin" go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version"
fi

# make check runs cargo fmt and clippy, rustup components of their own.
if ! "$cargo" clippy --version >/dev/null 2>&1 || ! "$cargo" fmt --version >/dev/null 2>&1; then
	rustup=$(command -v rustup || echo "$HOME/.cargo/bin/rustup")
	echo "install-deps: adding rustup's clippy and rustfmt components"
	"$rustup" component add clippy rustfmt
fi

# DuckDB, a Parquet reader that is not ours, for the export's tests; Pillow
# and NumPy for Browsertime's visualmetrics.
duckdb_version=2.0.0
pillow_version=13.0.0
numpy_version=2.4.6
pytools=.cache/pytools
if ! "$pytools/bin/python" -c "
import duckdb, PIL, numpy, sys
sys.exit((duckdb.__version__, PIL.__version__, numpy.__version__) != ('$duckdb_version', '$pillow_version', '$numpy_version'))" >/dev/null 2>&1; then
	echo "install-deps: installing DuckDB $duckdb_version, Pillow $pillow_version and NumPy $numpy_version into $pytools"
	rm -rf "$pytools"
	python3 -m venv "$pytools"
	"$pytools/bin/pip" install -q "duckdb==$duckdb_version" "pillow==$pillow_version" "numpy==$numpy_version"
fi

# Browsertime's visualmetrics script, from its npm package (npm checks the
# package's integrity against the registry), for the visual metrics' check.
browsertime_version=28.3.0
bt=.cache/browsertime
if [ "$(cat "$bt/version" 2>/dev/null)" != "$browsertime_version" ]; then
	echo "install-deps: fetching Browsertime $browsertime_version's visualmetrics into $bt"
	rm -rf "$bt"
	mkdir -p "$bt"
	(cd "$bt" && npm pack --silent "browsertime@$browsertime_version" >/dev/null 2>&1 &&
		tar xzf "browsertime-$browsertime_version.tgz" --strip-components=2 package/visualmetrics/visualmetrics-portable.py &&
		rm "browsertime-$browsertime_version.tgz")
	echo "$browsertime_version" >"$bt/version"
fi

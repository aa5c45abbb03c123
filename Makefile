# quicbench: the two commands a newcomer needs are `make demo` and `make test`.
GO  ?= go
# Rust's cargo, for the HTTP/3 servers of servers/; rustup puts it in ~/.cargo/bin.
CARGO ?= $(shell command -v cargo || echo $(HOME)/.cargo/bin/cargo)
# Its builds are shared by this user's clones (scripts/cache-dir.sh).
ifndef CARGO_TARGET_DIR
CARGO_TARGET_DIR := $(shell scripts/cache-dir.sh cargo-target)
endif
export CARGO_TARGET_DIR
BIN := bin/quicbench

.PHONY: deps demo-deps servers firefox chromium-shell nginx caddy slurm build demo check test test-long bench fuzz reproduce clean

# Everything any feature or test uses (make check and make test need it all).
deps:
	@scripts/install-deps.sh all

# What the default comparison uses, and no more: Chromium, iproute2 and the
# Go modules. Each other feature installs what it needs by its own target:
# make servers (the quinn and quiche HTTP/3 servers, with Rust), make firefox, make chromium-shell,
# make nginx, make caddy, make slurm; quicbench doctor says which are ready.
demo-deps:
	@scripts/install-deps.sh demo
servers firefox chromium-shell nginx caddy slurm:
	@scripts/install-deps.sh $@

# The version recorded with every run: the commit, from git when there is one.
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo devel)

build: demo-deps
	$(GO) build -ldflags "-X github.com/quicbench/quicbench/internal/cli.Version=$(VERSION)" -o $(BIN) ./cmd/quicbench

# The default comparison: one page over h1, h2 and h3 behind a 100 ms, 1 % loss,
# 10/5 Mbit/s link with a 200 ms queue, in interleaved rounds until the answer is
# known: a look after every round from the 10th, a verdict once the h3/h2 ratio's
# repeated 99 % interval excludes 1, at most 16 rounds (the budget). DEMO_FLAGS
# adds compare flags (scripts/bench-demo.sh: --seed, --out).
DEMO_FLAGS ?=
demo: build
	./$(BIN) compare --rtt 100ms --loss 1 --down 10mbit --up 5mbit --queue 200ms \
		--page synthetic:32x10KB --protocols h1,h2,h3 --runs 16 --until 0.05 --client-cpu 1 $(DEMO_FLAGS)

# The fast gate (under two minutes): gofmt -l, go vet, staticcheck, cargo fmt
# --check, cargo clippy -D warnings, and the pure packages' unit tests.
check: deps
	@scripts/check.sh

# Every test, unit and integration (real namespaces, emulator, servers and
# Chromium; needs root), after check, but the long ones scripts/long-tests
# lists (make test-long; CI runs both); the pure packages check ran
# (scripts/pure-packages) are not run twice. -p 1: packages run one after
# another, so two timed page loads never run at once on this 2-core machine.
GO_TEST_INTEGRATION = long=$$(scripts/long-tests.sh) && QUICBENCH_BIN=$(CURDIR)/bin $(GO) test -count=1 -p 1 -timeout 20m
INTEGRATION = $$($(GO) list ./... | grep -vxF $$(grep -v '^\#' scripts/pure-packages | sed 's|^|-e github.com/quicbench/quicbench/internal/|'))
test: check
	$(CARGO) test --quiet --release --locked --manifest-path servers/Cargo.toml
	$(GO_TEST_INTEGRATION) -skip "^($$long)$$" $(INTEGRATION)

# The long tests make test leaves out (scripts/long-tests: sweeps over
# recordings, browsers and stacks, and runs of several processes whose
# paths shorter tests also take), about 10 minutes; CI runs them after
# make test.
test-long: deps build
	$(GO_TEST_INTEGRATION) -run "^($$long)$$" $(INTEGRATION)

# Every paper's quick reproduction (quicbench reproduce all: the five
# papers' claims beside our measurement, about two hours), into
# runs/reproduce-<time>/<paper>/<spec>/, each run with its report.
reproduce: build servers nginx
	./$(BIN) reproduce all --scale quick --out runs/reproduce-$$(date +%Y%m%d-%H%M%S)

# Every fuzz target (readers of the files users bring: specs, traces, HAR,
# sizes and rates, pages) for FUZZTIME each (default 20s, about 3 minutes).
fuzz:
	scripts/fuzz.sh

# The emulator's benchmarks (BENCHMARKS.md); about twelve minutes, needs root.
bench: build servers
	scripts/bench-emulator.sh
	scripts/bench-emulator-cpu.sh
	scripts/bench-emulator-tails.sh

clean:
	rm -rf bin

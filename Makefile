# svcdb: `make run` starts the server, `make test` runs every test.
# Both work on a fresh Debian machine as root: missing tools are installed.

GO        ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
BIN       := bin
SVCDB     := $(BIN)/svcdb
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
FUZZTIME  ?= 10s
# golangci-lint, pinned: make deps installs this version with go install into
# a directory named after it, so a bump is a fresh install and a stale binary
# on PATH is never used. v2.15.0 builds with the go of go.mod (1.26).
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT_DIR     := $(shell $(GO) env GOPATH)/tools/golangci-lint/$(GOLANGCI_LINT_VERSION)
GOLANGCI_LINT         := $(GOLANGCI_LINT_DIR)/golangci-lint
# Fuzz targets as package:Target; make test runs each for FUZZTIME.
FUZZ_TARGETS := \
	./core/resp:FuzzParse \
	./core/resp:FuzzParseDifferential \
	./core/resp:FuzzParseWhole \
	./core/resp:FuzzReadReply \
	./core/glob:FuzzMatch \
	./shard/aof:FuzzCommandReader \
	./shard/aof:FuzzLoad \
	./shard/rdb:FuzzLoad \
	./shard/rdb:FuzzRestore \
	./core/replication:FuzzStream \
	./shard/hll:FuzzHLL \
	./shard/keyspace/keyindex:FuzzIndex

# Debian packages the tests need: real redis-cli and redis-benchmark, a
# redis-server to compare against, promtool (package prometheus) to check
# /metrics and the alert rules, taskset for make bench, and headless
# Chromium (package chromium) for the debug UI's browser tests.

.PHONY: all build run test check vet fmt-check lint lint-deps race allocs fuzz fuzz-long bench bench-memory bench-tail deps clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(SVCDB) ./cmd/svcdb
	$(GO) build -o $(BIN)/svcbench ./cmd/svcbench

## run: start svcdb on 127.0.0.1:6379 with the built-in default configuration.
run: build
	./$(SVCDB)

## deps: install the Debian packages and the Go tools the tests need, when
## missing.
deps: lint-deps
	@missing=""; \
	command -v redis-cli >/dev/null 2>&1 || missing="$$missing redis-tools"; \
	command -v redis-benchmark >/dev/null 2>&1 || missing="$$missing redis-tools"; \
	command -v redis-server >/dev/null 2>&1 || missing="$$missing redis-server"; \
	command -v redis-sentinel >/dev/null 2>&1 || missing="$$missing redis-sentinel"; \
	command -v redis-check-rdb >/dev/null 2>&1 || missing="$$missing redis-tools"; \
	command -v redis-check-aof >/dev/null 2>&1 || missing="$$missing redis-tools"; \
	command -v taskset >/dev/null 2>&1 || missing="$$missing util-linux"; \
	command -v promtool >/dev/null 2>&1 || missing="$$missing prometheus"; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		if [ "$$(id -u)" != 0 ]; then echo "need root to install:$$missing" >&2; exit 1; fi; \
		export DEBIAN_FRONTEND=noninteractive; \
		had_policy=no; [ -e /usr/sbin/policy-rc.d ] && had_policy=yes; \
		[ $$had_policy = yes ] || { printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; }; \
		apt-get update -qq && apt-get install -y -qq $$missing >/dev/null; status=$$?; \
		[ $$had_policy = yes ] || rm -f /usr/sbin/policy-rc.d; exit $$status; \
	fi

## test: formatting, vet, every test with -race, the allocation tests without
## -race, and each fuzz target for FUZZTIME.
test: deps check race allocs fuzz

check: fmt-check vet lint

## lint: golangci-lint with .golangci.yml over the whole module; any finding
## fails it.
lint: lint-deps
	$(GOLANGCI_LINT) run ./...

# Installs the pinned golangci-lint when its binary is missing (about 6
# minutes of compiling on a fresh machine; then the module cache keeps it).
lint-deps:
	@[ -x $(GOLANGCI_LINT) ] || { \
		echo "installing golangci-lint $(GOLANGCI_LINT_VERSION) into $(GOLANGCI_LINT_DIR)"; \
		GOBIN=$(GOLANGCI_LINT_DIR) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION); }

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

race:
	$(GO) test -race -shuffle=on -count=1 -timeout 30m ./...

# Zero-allocation assertions cannot run under -race (the detector allocates).
allocs:
	$(GO) test -count=1 -run 'Allocs' ./...

# A target that fails with a bare "context deadline exceeded" and writes no
# failing input hit Go 1.26's fuzz coordinator race at the end of -fuzztime
# (go.dev/issue/75804, fixed in Go 1.27), not a finding: it runs once more.
# A real finding always prints "Failing input written" and fails at once.
fuzz:
	@set -e; log=$$(mktemp); trap 'rm -f $$log' EXIT; \
	for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		for try in 1 2; do \
			echo "fuzz $$pkg $$name for $(FUZZTIME)"; \
			if $(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) -fuzzminimizetime=10x $$pkg >$$log 2>&1; then \
				cat $$log; break; \
			fi; \
			cat $$log; \
			if [ $$try = 1 ] && grep -q 'context deadline exceeded' $$log && ! grep -q 'Failing input written' $$log; then \
				echo "fuzz $$name: the fuzz coordinator's deadline race (go.dev/issue/75804), no input failed: running it again"; \
			else \
				exit 1; \
			fi; \
		done; \
	done

fuzz-long:
	$(MAKE) fuzz FUZZTIME=5m

## bench: the Go hot-path benchmarks; then svcdb and redis-server side by
## side, interleaved, medians and ratios: redis-benchmark's full default suite
## (the 20 tests of a plain redis-benchmark run) at -P 1 and -P 16, -c 50
## -r 100000, and memtier's default workload (SET:GET 1:10, 32-byte values,
## 50 connections; its keys those of the mode's -r, 1..N, or key 1 alone
## without -r) at pipeline 1 and 16 (5 rounds each, --load-rounds, with a
## tail table of p50, p99 and p99.9 and each ratio's per-round range), and EVALSHA of a one-GET script and
## an INCR+EXPIRE script at pipeline 1 and 16 (ratios shown, not held to the
## bar; --scripts=false leaves them out), and SETBIT, BITCOUNT, PFADD,
## PFCOUNT and GEOSEARCH at pipeline 1 and 16 (--commands=false leaves them
## out), checked against the bar (every suite test's and command's ops/s
## >= 0.9x redis-server's, no error: svcbench compare exits 3 otherwise); then svcdb with its diagnostics HTTP server off and
## on, scraped every second; then persistence side by side (svcbench
## persist: SET and loadgen 1:1 at -P 1 and 16 with appendonly yes and
## appendfsync everysec and always; p99 under a fixed-rate load before and
## during a BGSAVE of 1M keys; no bar, status 1 only if a run fails); then
## replication (svcbench repl: loadgen 1:1 against masters with 0, 1, 2
## replicas, full syncs of 1M keys both ways; no bar).
## 18 to 21 minutes. BENCH_ARGS, DIAG_ARGS, PERSIST_ARGS and REPL_ARGS pass
## flags to svcbench compare, diag, persist and repl; all run, and the recipe fails with
## the first failing one's status (3: the bar is not met).
## The comparison runs in four modes (issue 21), printed side by side at the
## end: pinned (servers and client on separate CPUs) and defaults (no
## taskset, as the README's tour), each with -r 100000 and with one hot key
## (no -r); BENCH_MODES overrides them, e.g. BENCH_MODES= for the pinned,
## -r 100000 run alone. Four modes take four times the comparison's time.
BENCH_MODES ?= --modes pinned,defaults --keyspaces 100000,0
bench: deps build
	$(GO) test -run '^$$' -bench 'HotPath|Queue|Drain' -benchmem ./netloop/ ./shard/
	status=0; \
	./$(BIN)/svcbench compare --svcdb ./$(SVCDB) $(BENCH_MODES) $(BENCH_ARGS) || status=$$?; \
	./$(BIN)/svcbench diag --svcdb ./$(SVCDB) $(DIAG_ARGS) || { s=$$?; [ $$status -ne 0 ] || status=$$s; }; \
	./$(BIN)/svcbench persist --svcdb ./$(SVCDB) $(PERSIST_ARGS) || { s=$$?; [ $$status -ne 0 ] || status=$$s; }; \
	./$(BIN)/svcbench repl --svcdb ./$(SVCDB) $(REPL_ARGS) || { s=$$?; [ $$status -ne 0 ] || status=$$s; }; \
	exit $$status

## bench-memory: bytes per key, svcdb vs redis-server, 1,000,000 keys of each
## shape (string, small hash, set, zset, list) loaded into fresh servers,
## then strings at 10,000,000 keys (issue 20); RSS and INFO used_memory.
## MEMORY_ARGS passes flags to svcbench memory (e.g.
## MEMORY_ARGS="--shapes string,hash,string@2000000 --keys 200000").
bench-memory: deps build
	./$(BIN)/svcbench memory --svcdb ./$(SVCDB) $(MEMORY_ARGS)

## bench-tail: tail latency with a large dataset (issue 20, part 4): 10M
## keys of 32 bytes loaded into svcdb and redis-server, memtier's 1:10
## workload on 50 connections at pipeline 1 and 16 (p50, p99, p99.9, ratios,
## svcdb's GC cycles, pause and CPU), then p99 and p99.9 before and during a
## BGSAVE at each depth. Not part of make bench: it holds both servers with
## 10M keys (about 3 GB together) and takes about 10 minutes on a loaded
## 2-CPU machine. TAIL_ARGS passes flags to svcbench tail (e.g.
## TAIL_ARGS="--keys 1000000 --rounds 3"); no bar, status 1 only if a run
## fails.
bench-tail: deps build
	./$(BIN)/svcbench tail --svcdb ./$(SVCDB) $(TAIL_ARGS)

clean:
	rm -rf $(BIN)

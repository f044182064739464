# svcdb: `make run` starts the server, `make test` runs every test.
# Both work on a fresh Debian machine as root: missing tools are installed.

GO        ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
BIN       := bin
SVCDB     := $(BIN)/svcdb
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
FUZZTIME  ?= 10s
# Fuzz targets as package:Target; make test runs each for FUZZTIME.
FUZZ_TARGETS := \
	./core/resp:FuzzParse \
	./core/resp:FuzzParseDifferential \
	./core/resp:FuzzReadReply \
	./core/glob:FuzzMatch

# Debian packages the tests need: real redis-cli and redis-benchmark, a
# redis-server to compare against, promtool (package prometheus) to check
# /metrics and the alert rules, taskset for make bench, and headless
# Chromium (package chromium) for the debug UI's browser tests.

.PHONY: all build run test check vet fmt-check race allocs fuzz fuzz-long bench deps clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(SVCDB) ./cmd/svcdb
	$(GO) build -o $(BIN)/svcbench ./cmd/svcbench

## run: start svcdb on 127.0.0.1:6379 with the built-in default configuration.
run: build
	./$(SVCDB)

## deps: install the Debian packages the tests need, when missing.
deps:
	@missing=""; \
	command -v redis-cli >/dev/null 2>&1 || missing="$$missing redis-tools"; \
	command -v redis-benchmark >/dev/null 2>&1 || missing="$$missing redis-tools"; \
	command -v redis-server >/dev/null 2>&1 || missing="$$missing redis-server"; \
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

check: fmt-check vet

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

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) -fuzzminimizetime=10x $$pkg; \
	done

fuzz-long:
	$(MAKE) fuzz FUZZTIME=5m

## bench: svcdb and redis-server side by side (redis-benchmark and svcbench),
## interleaved, medians and ratios; plus the Go hot-path benchmarks; then
## svcdb with its diagnostics HTTP server off and on, scraped every second
## (about 70 s; DIAG_ARGS passes flags to svcbench diag).
bench: deps build
	$(GO) test -run '^$$' -bench 'HotPath|Queue|Drain' -benchmem ./netloop/ ./shard/
	./$(BIN)/svcbench compare --svcdb ./$(SVCDB) $(BENCH_ARGS)
	./$(BIN)/svcbench diag --svcdb ./$(SVCDB) $(DIAG_ARGS)

clean:
	rm -rf $(BIN)

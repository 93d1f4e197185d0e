# TemporalStore for Go: repository tasks.
#
# The default goal is `help`, so a bare `make` only lists the targets and never
# starts a long run by accident. `make test` is the test command; `make lint test`
# is what CI runs (see .ci/run).
#
# Layout: go.work at the root lists the library modules and examples. tools/ is
# a module of its own and stays out of go.work on purpose, so that the
# dependencies of the peers it benchmarks against (etcd server, bbolt, ...)
# never enter the workspace's version selection: it has a workspace of its
# own, tools/go.work, which every target that touches tools/ uses (and only
# if tools/go.mod exists). No go.mod has a replace line; the workspaces serve
# development, and `make release-check` proves the modules fetchable.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.SUFFIXES:

GO ?= go

# Workspace commands use this repository's go.work, even when the caller has
# GOWORK set to something else (including off).
WORKSPACE := GOWORK=$(CURDIR)/go.work

# Module directories, read from go.work (relative paths, e.g. "matrixraft").
# `go work edit -json` only parses the file, so this works even while a
# module's dependencies are broken.
MODULE_DIRS := $(shell $(GO) work edit -json $(CURDIR)/go.work | sed -n 's|.*"DiskPath": *"\(.*\)".*|\1|p' | sed 's|^\./||')
ifeq ($(strip $(MODULE_DIRS)),)
$(error could not read the module list from go.work)
endif

# tools/ is built and checked only when it exists.
TOOLS_DIR := tools
TOOLS_WORK := GOWORK=$(CURDIR)/$(TOOLS_DIR)/go.work
HAVE_TOOLS := $(wildcard $(TOOLS_DIR)/go.mod)

# tools/natsbench, the NATS JetStream peer of `bench streams`, is a module
# of its own in neither workspace, so that nats-server's dependencies never
# enter tools/go.mod: it builds, vets and staticchecks with the workspace
# off (its dependencies come from the module proxy).
NATSBENCH_DIR := $(TOOLS_DIR)/natsbench
HAVE_NATSBENCH := $(wildcard $(NATSBENCH_DIR)/go.mod)

# go test flags. RACE= turns the race detector off (it needs cgo and a C
# compiler); TEST_TIMEOUT bounds the whole run.
RACE ?= -race
TEST_TIMEOUT ?= 25m
TEST_FLAGS ?=

# staticcheck is pinned and installed into ./.tools by `make lint` itself.
# Its checks are configured in staticcheck.conf at the root, which applies to
# every module, tools/ included.
TOOLS_BIN := $(CURDIR)/.tools
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(TOOLS_BIN)/staticcheck

# Fuzzing: how long each Fuzz target runs under `make fuzz`.
FUZZTIME ?= 10s

.PHONY: help
help: ## List the targets.
	@echo "Usage: make <target> [VAR=value]"
	@echo
	@grep -hE '^[a-zA-Z_%-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-20s %s\n", $$1, $$2}'
	@echo
	@echo "Variables: RACE=$(RACE) TEST_TIMEOUT=$(TEST_TIMEOUT) FUZZTIME=$(FUZZTIME) FUZZ_RESP_TIME=$(FUZZ_RESP_TIME) FUZZ_HTTP_TIME=$(FUZZ_HTTP_TIME) BENCH_QUICK=1 (benchmarks)"
	@echo "Modules (from go.work): $(MODULE_DIRS)"
	@echo "Out of the workspace: $(if $(HAVE_TOOLS),$(TOOLS_DIR) (its own $(TOOLS_DIR)/go.work),none)$(if $(HAVE_NATSBENCH), $(NATSBENCH_DIR) (GOWORK=off),)"

.PHONY: build
build: ## Build every workspace package (go build work).
	$(WORKSPACE) $(GO) build work

.PHONY: cabi
cabi: ## Build the C ABI, build/libtemporalstore.so (header: examples/libtemporalstore/temporalstore.h).
	$(WORKSPACE) $(GO) build -buildmode=c-shared -o build/libtemporalstore.so ./examples/libtemporalstore

# ---------------------------------------------------------------------------
# Tests

.PHONY: test
.PHONY: run
run: ## Run the server on its embedded default (./data, single node): RESP 127.0.0.1:6379, HTTP 127.0.0.1:17102, S3 127.0.0.1:9000.
	$(WORKSPACE) $(GO) run ./examples/server

# Debian packages the tests use: redis-server (the engine's replies are
# compared with a real Redis), python3-venv (boto3, Feast and the Python
# SDK run in virtual environments), openssl (test TLS certificates),
# postgresql (the flows benchmark's peers, whose harness has a test),
# prometheus (a test scrapes the server with it).
TEST_DEBS := redis-server redis-tools python3-venv openssl postgresql prometheus

.PHONY: deps
deps: ## Install the system packages the tests use, if missing (redis-server, python3-venv, openssl, postgresql, prometheus; apt as root or via sudo).
	@if command -v dpkg-query >/dev/null; then scripts/need-debs $(TEST_DEBS); \
	else command -v redis-server >/dev/null || { echo "deps: install redis-server" >&2; exit 1; }; fi

test: deps test-work test-mem release-check test-tools test-python ## Run all tests: go test -race work, the engine's suites on the in-memory storage, the release check, tools/ (build, vet, test), then the Python suites.

.PHONY: test-python
test-python: ## pytest of integrations/feast and sdk/python against live servers they start, in a venv with feast 0.67.0 from PyPI (scripts/python-tests).
	scripts/python-tests

.PHONY: test-work
test-work: ## go test -race -count=1 over every module in go.work.
	$(WORKSPACE) $(GO) test $(RACE) -count=1 -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) work

.PHONY: test-mem
test-mem: ## The engine's suites again on the in-memory Log and RecordCache of package storage.
	cd temporalstore && TEMPORALSTORE_TEST_STORAGE=mem $(WORKSPACE) $(GO) test $(RACE) -count=1 -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) . ./internal/shard

.PHONY: release-check
release-check: ## Tag every module with code at VERSION in a throwaway clone, serve them from a file:// GOPROXY, and go get + go build each and go install examples/server from an empty consumer (GOWORK=off).
	scripts/release-check

.PHONY: test-tools
test-tools: ## In tools/ (if present), on its workspace: go build, go vet and go test (race) ./...; in tools/natsbench, with GOWORK=off: go build and go vet.
ifneq ($(HAVE_TOOLS),)
	@echo "==> $(TOOLS_DIR): go build ./... && go vet ./... && go test ./..."
	cd $(TOOLS_DIR) && $(TOOLS_WORK) $(GO) build ./... && $(TOOLS_WORK) $(GO) vet ./... && $(TOOLS_WORK) $(GO) test $(RACE) -count=1 -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) ./...
else
	@echo "==> $(TOOLS_DIR): no go.mod, skipped"
endif
ifneq ($(HAVE_NATSBENCH),)
	@echo "==> $(NATSBENCH_DIR): go build ./... && go vet ./... (GOWORK=off; a main package: its binary goes to /dev/null)"
	cd $(NATSBENCH_DIR) && GOWORK=off $(GO) build -o /dev/null ./... && GOWORK=off $(GO) vet ./...
endif

# ---------------------------------------------------------------------------
# Lint

.PHONY: lint
lint: fmt-check vet staticcheck ## gofmt -l (must be empty), go vet work, staticcheck per module.

.PHONY: fmt-check
fmt-check: ## Fail if gofmt would change any Go file (testdata excluded).
	@echo "==> gofmt -l"
	@files=$$(find . -name '*.go' -not -path './.git/*' -not -path './.tools/*' \
		-not -path '*/testdata/*' -not -path '*/vendor/*' -print0 | xargs -0 -r gofmt -l); \
	if [ -n "$$files" ]; then \
		echo "gofmt found unformatted files (run: gofmt -w <file>):"; echo "$$files"; exit 1; \
	fi

.PHONY: fmt
fmt: ## Rewrite every Go file with gofmt -w (testdata excluded).
	find . -name '*.go' -not -path './.git/*' -not -path './.tools/*' \
		-not -path '*/testdata/*' -not -path '*/vendor/*' -print0 | xargs -0 -r gofmt -w

.PHONY: vet
vet: ## go vet work.
	@echo "==> go vet work"
	$(WORKSPACE) $(GO) vet work

.PHONY: staticcheck
staticcheck: staticcheck-install ## staticcheck ./... in each module dir, in tools/ on its workspace, and in tools/natsbench with GOWORK=off.
	@for d in $(MODULE_DIRS); do \
		echo "==> $$d: staticcheck ./..."; \
		(cd "$$d" && $(WORKSPACE) $(STATICCHECK) ./...) || exit 1; \
	done
ifneq ($(HAVE_TOOLS),)
	@echo "==> $(TOOLS_DIR): staticcheck ./..."
	cd $(TOOLS_DIR) && $(TOOLS_WORK) $(STATICCHECK) ./...
endif
ifneq ($(HAVE_NATSBENCH),)
	@echo "==> $(NATSBENCH_DIR): staticcheck ./... (GOWORK=off)"
	cd $(NATSBENCH_DIR) && GOWORK=off $(STATICCHECK) ./...
endif

.PHONY: staticcheck-install
staticcheck-install: ## Install the pinned staticcheck (STATICCHECK_VERSION) into ./.tools unless it is already there.
	@if ! $(STATICCHECK) -version 2>/dev/null | grep -qF '($(STATICCHECK_VERSION:v%=%))'; then \
		echo "==> installing staticcheck $(STATICCHECK_VERSION) into $(TOOLS_BIN)"; \
		GOBIN=$(TOOLS_BIN) GOWORK=off $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION); \
	fi

# ---------------------------------------------------------------------------
# Benchmarks (drivers live in tools/bench; see CONTRIBUTING.md for conventions)
#
# Environment such as BENCH_QUICK=1 passes straight through, either exported
# or on the make command line: `make bench-wal BENCH_QUICK=1`.

.PHONY: bench-wal
bench-wal: ## WAL benchmark: cd tools && go run ./bench wal
	cd $(TOOLS_DIR) && $(TOOLS_WORK) $(GO) run ./bench wal

.PHONY: bench-object
bench-object: ## Object store benchmark: cd tools && go run ./bench object
	cd $(TOOLS_DIR) && $(TOOLS_WORK) $(GO) run ./bench object

.PHONY: bench-engine
bench-engine: ## Engine benchmark (index bytes/key, write amplification, durable SETs vs etcd, memory vs redis-server)
	cd $(TOOLS_DIR) && $(TOOLS_WORK) $(GO) run ./bench engine
.PHONY: bench-raft
bench-raft: ## Raft benchmark (3 durable voters vs embedded etcd): cd tools && go run ./bench raft
	cd $(TOOLS_DIR) && $(TOOLS_WORK) $(GO) run ./bench raft

.PHONY: bench-cluster
bench-cluster: ## Cluster benchmark (3 server processes as a Redis Cluster vs 3 etcd processes: writes, follower reads, failover; and durable writes at 2/4/8 writers on the shared-storage backend beside seed 000's): cd tools && go run ./bench cluster
	cd $(TOOLS_DIR) && $(TOOLS_WORK) $(GO) run ./bench cluster

.PHONY: bench-flows
bench-flows: ## Durable work queues end to end (100,000 flows created, claimed, completed, live) vs a SKIP LOCKED queue on PostgreSQL and River: cd tools && go run ./bench flows
	cd $(TOOLS_DIR) && $(TOOLS_WORK) $(GO) run ./bench flows

.PHONY: bench-series
bench-series: ## Temporal models vs redis-server (window reads, hourly counts, appends) and rollup vs scan: cd tools && go run ./bench series
	cd $(TOOLS_DIR) && $(TOOLS_WORK) $(GO) run ./bench series

.PHONY: bench-script
bench-script: ## EVALSHA token bucket, 50 clients, vs redis-server: cd tools && go run ./bench script
	cd $(TOOLS_DIR) && $(TOOLS_WORK) $(GO) run ./bench script

.PHONY: bench-streams
bench-streams: ## Streams and pub/sub (XADD, XREADGROUP+XACK, PUBLISH fan-out) vs redis-server and NATS JetStream: cd tools && go run ./bench streams
	cd $(TOOLS_DIR) && $(TOOLS_WORK) $(GO) run ./bench streams

.PHONY: bench-backup
bench-backup: ## Online backup and restore of a ~1 GiB data dir (checksummed, fsynced) vs cp -a + sync of the same dir: cd tools && go run ./bench backup
	cd $(TOOLS_DIR) && $(TOOLS_WORK) $(GO) run ./bench backup

.PHONY: bench-blob
bench-blob: ## Large values: 64 MiB blobs through /blob (durable) vs the same fsync+rename straight to the disk, and 64 MiB SET/GET over RESP vs redis-server: cd tools && go run ./bench blob
	cd $(TOOLS_DIR) && $(TOOLS_WORK) $(GO) run ./bench blob

.PHONY: bench-ads
bench-ads: ## Ads serving path (targeting, pacing, per-user features, pCTR/eCPM ranking, atomic cap+budget takes, idempotent events) on the server vs redis-server (Lua) vs Go maps, invariants checked on each: go run ./examples/ads-demo
	$(WORKSPACE) $(GO) run ./examples/ads-demo --json bench-results/ads.json

.PHONY: soak
soak: ## Soak: the server under a steady mixed load for 30 min (SOAK_QUICK=1: 10), RSS/p99/ops plot in bench-results/: cd tools && go run ./bench soak
	cd $(TOOLS_DIR) && $(TOOLS_WORK) $(GO) run ./bench soak

.PHONY: bench-feast
bench-feast: ## Feature serving through Feast 0.67 (SQLite, Redis via Feast's store, ours async and durable via both plugins): scripts/bench-feast
	scripts/bench-feast

.PHONY: bench-context-model
bench-context-model: ## matrixark with all-MiniLM-L6-v2 (scripts/embed-server) as an extra arm, 10k nodes by default (about 40 min): scripts/bench-context-model
	scripts/bench-context-model

bench-%: ## Any benchmark by name: cd tools && go run ./bench <name>
	cd $(TOOLS_DIR) && $(TOOLS_WORK) $(GO) run ./bench $*

# ---------------------------------------------------------------------------
# Fuzzing

.PHONY: fuzz
fuzz: ## Run every Fuzz target in the workspace for FUZZTIME each (default 10s).
	@pkgs=$$($(WORKSPACE) $(GO) list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' work); \
	n=0; \
	for p in $$pkgs; do \
		for f in $$($(WORKSPACE) $(GO) test -list '^Fuzz' "$$p" | grep '^Fuzz' || true); do \
			echo "==> $$p $$f ($(FUZZTIME))"; \
			$(WORKSPACE) $(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) "$$p" || exit 1; \
			n=$$((n+1)); \
		done; \
	done; \
	echo "fuzz: $$n targets, $(FUZZTIME) each"

# Differential fuzzing: random command sequences on our RESP server and on a
# real redis-server (temporalstore/resp TestDiffFuzz), and on the HTTP
# /execute handler and a model of it (temporalstore/httpapi
# TestExecuteDiffFuzz). `go test` runs each for a minute; these run them as
# long as asked, print progress and end with a JSON summary line.
# DIFFFUZZ_SEED=n (and DIFFFUZZ_SEQ=i) replay a run (a sequence of it).
FUZZ_RESP_TIME ?= 10m
FUZZ_HTTP_TIME ?= 10m

.PHONY: fuzz-resp
fuzz-resp: deps ## Differential fuzzer, RESP vs redis-server, for FUZZ_RESP_TIME (default 10m).
	DIFFFUZZ_TIME=$(FUZZ_RESP_TIME) DIFFFUZZ_KEEPGOING=1 $(WORKSPACE) $(GO) test -count=1 -v -timeout 0 -run '^TestDiffFuzz$$' ./temporalstore/resp/

.PHONY: fuzz-http
fuzz-http: ## Differential fuzzer, HTTP /execute vs a model, for FUZZ_HTTP_TIME (default 10m).
	DIFFFUZZ_TIME=$(FUZZ_HTTP_TIME) DIFFFUZZ_KEEPGOING=1 $(WORKSPACE) $(GO) test -count=1 -v -timeout 0 -run '^TestExecuteDiffFuzz$$' ./temporalstore/httpapi/

# ---------------------------------------------------------------------------

.PHONY: clean
clean: ## Remove ./.tools, bench-results/ and the test cache.
	rm -rf $(TOOLS_BIN) bench-results
	$(GO) clean -testcache

# kumo — see README.md. Every target works on a fresh machine: tools the tests and
# the quick start need are built from the Go module proxy and cached in
# $HOME/.cache/kumo/bin.
export GOTOOLCHAIN := local
KUMO_HOME ?= $(HOME)/.kumo
export KUMO_HOME
KUBECONFIG_LOCAL := $(KUMO_HOME)/cluster/kubeconfig

.PHONY: bench-platform test-production-temporal build image release-binaries example quickstart cluster-up cluster-down test test-short fuzz bench bench-go chaos tools vet vulncheck clean

build:
	go build -o bin/kumo ./cmd/kumo

# The container image (deploy/docker/Dockerfile) with docker or podman,
# whichever is installed.
IMAGE ?= kumo:dev
CONTAINER_ENGINE ?= $(shell command -v docker || command -v podman)
image:
	@test -n "$(CONTAINER_ENGINE)" || { echo "make image needs docker or podman"; exit 1; }
	@$(CONTAINER_ENGINE) info >/dev/null 2>&1 || { echo "make image: $(CONTAINER_ENGINE) cannot reach its daemon (is it running?); it also pulls the golang and distroless base images"; exit 1; }
	$(CONTAINER_ENGINE) build -f deploy/docker/Dockerfile -t $(IMAGE) .

# Static binaries for linux and darwin on amd64 and arm64, in dist/.
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
release-binaries:
	@for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; \
		echo "dist/kumo-$$os-$$arch"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch go build -trimpath -ldflags "-s -w" -o dist/kumo-$$os-$$arch ./cmd/kumo || exit 1; \
	done

tools:
	hack/build-tools.sh

# The example project's external generator (examples/shop/project.yaml runs it).
example:
	go build -o examples/shop/generators/redis ./examples/generators/redis

# Starts a local Kubernetes API server, then generates the example shop stack and
# applies it with the embedded Temporal server.
quickstart: build example cluster-up
	bin/kumo --kubeconfig $(KUBECONFIG_LOCAL) apply --yes --stack examples/shop/dev
	bin/kumo --project shop release list
	@echo
	@echo "Look with kubectl: kubectl --kubeconfig $(KUBECONFIG_LOCAL) -n shop get all,configmaps"
	@echo "The spec it generated: bin/kumo generate --stack examples/shop/dev"
	@echo
	@echo "Keep Temporal and its Web UI running for this home (runs made so far included):"
	@echo "  bin/kumo --home $(KUMO_HOME) server"
	@echo "then open the Log in URL it prints (only you can: it holds a token), which leads to the runs"

# The cluster needs only the Kubernetes binaries, not everything the tests use.
cluster-up:
	hack/build-tools.sh etcd kube-apiserver kube-controller-manager kube-scheduler kwok
	go run ./hack/cluster up

cluster-down:
	go run ./hack/cluster down

# The whole suite: unit tests plus integration tests against a real kube-apiserver
# and the embedded Temporal server, which the tests start themselves.
test: tools
	go test -timeout 45m ./...

# The edit loop: unit tests only.
test-short:
	go test -short ./...

# Every fuzz target for a number of inputs, about 10 s of fuzzing each on a
# 2-core machine; FUZZTIME=30s (or =1000000x) sets one budget for all. A count,
# not a duration, by default: go1.26's fuzz coordinator can fail a target with a
# bare "context deadline exceeded" when a -fuzztime duration runs out while a
# worker is mid-input (go.dev/issue/75804, fixed in go1.27), and a count has no
# deadline to race. Minimizing each new input is cut short so a short run fuzzes
# instead of minimizing; a crash is written to the package's testdata/fuzz,
# where `go test` replays it from then on.
FUZZTIME ?=
FUZZ_TARGETS := ./engine/input:FuzzReadInputs:100000x ./engine/input:FuzzParseYAML:100000x \
	./engine:FuzzRefs:150000x ./engine/generate:FuzzParseWorkspace:60000x \
	./engine/generate:FuzzAppConfig:20000x
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; budget=$${rest#*:}; \
		[ -z "$(FUZZTIME)" ] || budget=$(FUZZTIME); \
		echo "fuzz $$name ($$pkg, $$budget)"; \
		go test -run '^$$' -fuzz "^$$name\$$" -fuzztime $$budget -fuzzminimizetime 100x $$pkg || exit 1; \
	done

# kumo against the machine's floor (raw server-side apply of the same objects),
# as ratios, with history, database growth, backend writes and peak memory per
# run and a drift check of 1,000, written to bench/results.md. BENCH_QUICK=1:
# the 200-resource rows only; BENCH_LARGE=1 adds 50,000 resources.
bench: tools
	go run ./bench -out bench/results.md

# One kumo server carrying a platform: 1,000 stacks of 20 ConfigMaps with drift
# schedules every 5 minutes and 20 applies in flight for 30 minutes; schedule
# lateness, apply latency against the idle server, the server's CPU and memory,
# and storage over time, written to bench/platform.md. PLATFORM_ARGS passes
# flags (e.g. -duration 2h for a longer run).
bench-platform: tools
	go run ./bench/platform -out bench/platform.md $(PLATFORM_ARGS)

# kumo on Temporal as production runs it (deploy/temporal-production.md):
# temporal-server's four services as processes on PostgreSQL with TLS, two kumo
# workers with releases in S3; an apply, then KUMO_PRODUCTION_TRIALS chaos trials
# (SIGKILL of history, matching or a worker, or a PostgreSQL restart, mid-apply),
# each checked with the chaos suite's invariants. Not part of make test: the
# first run builds temporal-server (minutes).
KUMO_PRODUCTION_TRIALS ?= 30
test-production-temporal: tools
	hack/build-tools.sh temporal-server temporal-sql-tool
	KUMO_PRODUCTION_TEMPORAL=1 KUMO_PRODUCTION_TRIALS=$(KUMO_PRODUCTION_TRIALS) go test -count=1 -timeout 90m -v \
		-run '^(TestClusterSurvivesKills|TestProductionTemporalApply|TestProductionTemporalChaos)$$' ./internal/temporaltest ./cmd/kumo

# The crash suite (chaos/, not part of make test): CHAOS_TRIALS runs (default 100)
# SIGKILLed at random moments, each checked for a final release, gap-free
# revisions and live objects equal to the recorded state. CHAOS_SEED=<a trial's
# seed> CHAOS_TRIALS=1 runs that trial again.
chaos:
	go run ./chaos

# The Go benchmarks of every package (one iteration each).
bench-go: tools
	go test -run '^$$' -bench . -benchtime 1x -timeout 30m ./...

vet:
	go vet ./...

# govulncheck over every package, offline: the vulnerability database service
# cannot be reached from here, so the database is built from the
# golang.org/x/vulndb module's OSV entries (hack/vulndb), both cached in
# $(HOME)/.cache/kumo. Raise VULNDB_VERSION to check against newer entries.
# It exits 3 when a vulnerability is reachable; docs/vulnerabilities.md lists
# those no update available here fixes. Analysis takes minutes and several GB
# of memory, so CI does not run it.
GOVULNCHECK_VERSION ?= v1.9.0
VULNDB_VERSION ?= v0.0.0-20261105234957-e22db6528018
KUMO_CACHE := $(HOME)/.cache/kumo
GOVULNCHECK := $(KUMO_CACHE)/bin/govulncheck-$(GOVULNCHECK_VERSION)
VULNDB := $(KUMO_CACHE)/vulndb-$(VULNDB_VERSION)
vulncheck: $(GOVULNCHECK) $(VULNDB)/index/modules.json
	$(GOVULNCHECK) -db file://$(VULNDB) ./...

$(GOVULNCHECK):
	@mkdir -p $(KUMO_CACHE)/bin
	tmp=$$(mktemp -d) && GOBIN=$$tmp go install golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION) && mv $$tmp/govulncheck $@ && rmdir $$tmp

$(VULNDB)/index/modules.json:
	go run ./hack/vulndb -version $(VULNDB_VERSION) -out $(VULNDB)

clean:
	rm -rf bin dist examples/shop/generators

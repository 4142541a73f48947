# kumo — see README.md. Every target works on a fresh machine: tools the tests and
# the quick start need are built from the Go module proxy and cached in
# $HOME/.cache/kumo/bin.
export GOTOOLCHAIN := local
KUMO_HOME ?= $(HOME)/.kumo
export KUMO_HOME
KUBECONFIG_LOCAL := $(KUMO_HOME)/cluster/kubeconfig

.PHONY: build quickstart cluster-up cluster-down test test-short bench tools vet clean

build:
	go build -o bin/kumo ./cmd/kumo

tools:
	hack/build-tools.sh

# Starts a local Kubernetes API server and applies the quick-start spec with the
# embedded Temporal server.
quickstart: build cluster-up
	bin/kumo --kubeconfig $(KUBECONFIG_LOCAL) --project quickstart apply --yes -f examples/quickstart/spec.yaml
	bin/kumo --project quickstart release list
	@echo
	@echo "Look with kubectl: kubectl --kubeconfig $(KUBECONFIG_LOCAL) -n quickstart get all,configmaps"

cluster-up: tools
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

bench: tools
	go test -run '^$$' -bench . -benchtime 1x -timeout 30m ./...

vet:
	go vet ./...

clean:
	rm -rf bin

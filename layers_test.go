package kumo_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// A layer is a set of kumo packages with one rule for what they may import.
// Arrows point down: cli -> client -> worker -> workflows -> activities ->
// release -> engine, backend; the contract (runspec), the codec and the
// support packages are used across.
type layer struct {
	// why says what the layer holds and why its rule is what it is; a
	// failure quotes it.
	why string
	// imports lists the layers its packages may import (their own included
	// only when listed).
	imports []string
	// testImports lists the further layers its tests may import, to wire real
	// parts together.
	testImports []string
	// temporalFree: its packages, tests included, import no go.temporal.io
	// package.
	temporalFree bool
}

// Every test may import the packages that start real components for it and
// the conformance suites.
var everyTestImports = []string{"testbed", "conformance"}

var layers = map[string]layer{
	"cli": {
		why:     "the CLI parses flags, calls the client and renders; it reaches runs only through the client and the run contract, never the workflows, activities or release",
		imports: []string{"policy", "api", "client", "server", "worker", "contract", "codec", "engine", "support"},
	},
	"api": {
		why:     "the HTTP API and the run pages: thin layers over the client, served behind the server's authentication",
		imports: []string{"policy", "client", "server", "contract", "codec", "engine", "support"},
	},
	"client": {
		why:     "the Go API: starts runs, waits, queries; may use everything below it",
		imports: []string{"policy", "server", "worker", "workflows", "activities", "release", "engine", "runtimes", "backend", "stores", "contract", "codec", "support"},
	},
	"server": {
		why:     "the Temporal server kumo runs or attaches to, and its codec server: knows the contract's search attributes, not how runs work",
		imports: []string{"policy", "server", "contract", "codec", "support"},
	},
	"worker": {
		why:         "registers the workflows and activities on a task queue, with their runtimes and backend",
		imports:     []string{"policy", "workflows", "activities", "release", "engine", "runtimes", "backend", "stores", "contract", "codec", "support"},
		testImports: []string{"server"},
	},
	"workflows": {
		why:         "deterministic orchestration: no I/O, so no release, runtimes or stores; everything that touches the world is an activity",
		imports:     []string{"activities", "engine", "backend", "contract"},
		testImports: []string{"release", "stores", "server", "codec", "support"},
	},
	"activities": {
		why:         "thin adapters from Temporal to the release lifecycle; the runtimes and stores are handed to them by the worker",
		imports:     []string{"policy", "release", "engine", "backend", "contract", "support"},
		testImports: []string{"stores"},
	},
	"release": {
		why:          "the release lifecycle without Temporal",
		imports:      []string{"engine", "backend", "contract", "support"},
		testImports:  []string{"stores"},
		temporalFree: true,
	},
	"engine": {
		why:          "the pure domain: spec, state, DAG, diff, drift, health, generators and the Runtime interface",
		imports:      []string{"engine", "support"},
		temporalFree: true,
	},
	"runtimes": {
		why:          "the Runtime implementations that touch Kubernetes and Terraform, and the registry that picks one by resource type and run settings",
		imports:      []string{"runtimes", "engine", "contract", "support"},
		temporalFree: true,
	},
	"backend": {
		why:          "where releases, state and run logs live: the interface and its types",
		imports:      []string{"engine", "support"},
		testImports:  []string{"stores"},
		temporalFree: true,
	},
	"stores": {
		why:          "the backend implementations that do the I/O (filesystem, S3, PostgreSQL, Terraform http state services)",
		imports:      []string{"backend", "engine", "support"},
		temporalFree: true,
	},
	"contract": {
		why:          "the run contract every layer agrees on: plain data, so no Temporal",
		imports:      []string{"engine"},
		temporalFree: true,
	},
	"codec": {
		why:     "encrypts payloads for the client, the worker and the codec server",
		imports: []string{"support"},
	},
	"policy": {
		why:          "who may do what where (authz): one pure decision that every entry point asks, so it imports nothing of kumo and no Temporal",
		temporalFree: true,
	},
	"support": {
		why:     "small helpers (keys, keyring, ports, memory limit, private files) usable from any layer; they may share one another",
		imports: []string{"support"},
	},
	"conformance": {
		why:     "the suites every Backend and Runtime implementation passes",
		imports: []string{"backend", "engine", "support"},
	},
	"testbed": {
		why:     "starts real components (kube-apiserver, S3, Terraform, TLS) for tests, and the specs benchmarks use",
		imports: []string{"testbed", "stores", "engine", "support"},
	},
	"harness": {
		why:     "programs and tests that drive kumo from outside (benchmarks, chaos, local clusters, deployment checks); they may use any layer but the CLI",
		imports: []string{"policy", "client", "server", "worker", "workflows", "activities", "release", "engine", "runtimes", "backend", "stores", "contract", "codec", "support", "testbed", "conformance"},
	},
	"standalone": {
		why: "stands on its own: an example generator, and this test",
	},
}

// packageLayers places every kumo package, by its path in the module, in a
// layer. A new package needs a row here: the test fails on any package
// without one, so where it belongs is decided, not inherited.
var packageLayers = map[string]string{
	"cmd/kumo":                               "cli",
	"api":                                    "api",
	"api/runpage":                            "api",
	"client":                                 "client",
	"server":                                 "server",
	"server/bearer":                          "server",
	"server/embedded":                        "server",
	"server/auth":                            "server",
	"server/oidc":                            "server",
	"worker":                                 "worker",
	"workflows":                              "workflows",
	"activities":                             "activities",
	"release":                                "release",
	"engine":                                 "engine",
	"engine/chart":                           "engine",
	"engine/dag":                             "engine",
	"engine/drift":                           "engine",
	"engine/generate":                        "engine",
	"engine/gitsource":                       "engine",
	"engine/health":                          "engine",
	"engine/input":                           "engine",
	"engine/notify":                          "engine",
	"engine/planpolicy":                      "engine",
	"engine/resid":                           "engine",
	"engine/secretstore":                     "engine",
	"engine/rollout":                         "engine",
	"engine/runtime":                         "engine",
	"engine/runtime/memory":                  "engine",
	"engine/runtime/kubernetes":              "runtimes",
	"engine/runtime/terraform":               "runtimes",
	"engine/runtime/registry":                "runtimes",
	"engine/runtime/runtimetest":             "conformance",
	"backend":                                "backend",
	"backend/local":                          "stores",
	"backend/s3":                             "stores",
	"backend/postgres":                       "stores",
	"backend/tfhttp":                         "stores",
	"backend/backendtest":                    "conformance",
	"runspec":                                "contract",
	"authz":                                  "policy",
	"codec":                                  "codec",
	"internal/gitrev":                        "support",
	"internal/keyring":                       "support",
	"internal/privfile":                      "support",
	"internal/keys":                          "support",
	"internal/memlimit":                      "support",
	"internal/pki":                           "support",
	"internal/quietport":                     "support",
	"internal/token":                         "support",
	"internal/tree":                          "support",
	"internal/benchspec":                     "testbed",
	"internal/benchstat":                     "testbed",
	"internal/pgtest":                        "testbed",
	"internal/tfstatetest":                   "testbed",
	"internal/testproc":                      "testbed",
	"internal/gittest":                       "testbed",
	"internal/hydratest":                     "testbed",
	"internal/localcluster":                  "testbed",
	"internal/localcluster/localclustertest": "testbed",
	"internal/ocitest":                       "testbed",
	"internal/s3test":                        "testbed",
	"internal/vaulttest":                     "testbed",
	"internal/temporaltest":                  "testbed",
	"internal/terraformtest":                 "testbed",
	"internal/tlstest":                       "testbed",
	"bench":                                  "harness",
	"bench/platform":                         "harness",
	"chaos":                                  "harness",
	"deploy":                                 "harness",
	"hack/cluster":                           "harness",
	"hack/vulndb":                            "harness",
	"examples/generators/redis":              "standalone",
	".":                                      "standalone",
}

// goPackage is what `go list -json` says of a package, the fields read here.
type goPackage struct {
	ImportPath   string
	Module       *struct{ Path string }
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// TestLayers checks every kumo package's imports against its layer's rule,
// so a change that breaks the layering fails here instead of going unseen.
func TestLayers(t *testing.T) {
	pkgs := listPackages(t)
	module := pkgs[0].Module.Path
	rel := func(path string) (string, bool) {
		if path == module {
			return ".", true
		}
		return strings.CutPrefix(path, module+"/")
	}
	seen := map[string]bool{}
	for _, p := range pkgs {
		name, _ := rel(p.ImportPath)
		seen[name] = true
		layerName, ok := packageLayers[name]
		if !ok {
			t.Errorf("package %s is in no layer: add a row for it to packageLayers (layers_test.go)", name)
			continue
		}
		l, ok := layers[layerName]
		if !ok {
			t.Errorf("package %s: packageLayers names layer %q, which layers does not define", name, layerName)
			continue
		}
		check := func(imports []string, allowed []string, what string) {
			for _, imp := range imports {
				if l.temporalFree && strings.HasPrefix(imp, "go.temporal.io/") {
					t.Errorf("%s: %s imports %s, but layer %s imports no Temporal package: %s",
						what, name, imp, layerName, l.why)
				}
				impName, ok := rel(imp)
				if !ok || imp == p.ImportPath { // not kumo's, or an external test of its own package
					continue
				}
				impLayer, known := packageLayers[impName]
				if !known || slices.Contains(allowed, impLayer) {
					continue // a package in no layer is reported once, above
				}
				t.Errorf("%s: %s (layer %s) imports %s (layer %s); layer %s may import only %s: %s",
					what, name, layerName, impName, impLayer, layerName, list(allowed), l.why)
			}
		}
		check(p.Imports, l.imports, "code")
		testAllowed := slices.Concat(l.imports, l.testImports, everyTestImports)
		check(slices.Concat(p.TestImports, p.XTestImports), testAllowed, "tests")
	}
	for name := range packageLayers {
		if !seen[name] {
			t.Errorf("packageLayers places %s, which is no package of the module: remove or rename its row", name)
		}
	}
}

func list(layers []string) string {
	if len(layers) == 0 {
		return "no kumo package"
	}
	return strings.Join(layers, ", ")
}

// listPackages lists the module's packages with `go list`, which reads their
// imports without building them.
func listPackages(t *testing.T) []goPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Module,Imports,TestImports,XTestImports", "./...")
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			err = fmt.Errorf("%w: %s", err, exit.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []goPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 || pkgs[0].Module == nil {
		t.Fatal("go list found no package of a module")
	}
	return pkgs
}

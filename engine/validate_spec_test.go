package engine_test

// Validate on a Spec as a user writes it, read by engine/input; engine/input
// imports engine, so this test is outside package engine.

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/input"
)

func TestValidateOK(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("input", "testdata", "demo-spec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := input.ParseSpec(data, "spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s.Resources = append(s.Resources, engine.Resource{ID: "v1:Service:demo:web", Type: engine.Kubernetes, Attributes: map[string]any{
		"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"namespace": "demo", "name": "web"},
	}})
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
}

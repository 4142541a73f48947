package client

import (
	"fmt"
	"os"

	"github.com/kumoproj/kumo/engine/generate"
	"github.com/kumoproj/kumo/engine/notify"
)

// LoadEvents reads the operator's event configuration file (`kumo server
// --events FILE`, `kumo worker --events FILE`; generate.ParseEvents); ""
// is none: events go to the workspaces' own sinks only.
func LoadEvents(path string) (notify.Operator, error) {
	if path == "" {
		return notify.Operator{}, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return notify.Operator{}, fmt.Errorf("--events: %w", err)
	}
	return generate.ParseEvents(data, path)
}

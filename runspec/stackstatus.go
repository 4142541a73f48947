package runspec

import (
	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/engine/runtime"
)

// StackStatus is the live health of every resource of a stack's latest
// release, as `kumo status` shows it (its JSON is the command's -o json).
type StackStatus struct {
	Project   string `json:"project"`
	Workspace string `json:"workspace"`
	Revision  int    `json:"revision"`
	// Health is the worst of every node shown (owned objects included).
	Health    health.Result        `json:"health"`
	Resources []runtime.StatusNode `json:"resources"`
}

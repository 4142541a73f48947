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

// StatusInput asks for the status of project+workspace read by the workers of
// its workspace's task queue (Settings.TaskQueue), so that no kubeconfig
// leaves them. Depth is how many levels of owned objects to read (0: none).
type StatusInput struct {
	Project   string          `json:"project"`
	Workspace string          `json:"workspace"`
	Settings  RuntimeSettings `json:"settings"`
	Depth     int             `json:"depth,omitempty"`
}

// MaxStatusBytes bounds the JSON of a StackStatus read through a workflow:
// it travels as the activity's and the workflow's result, and Temporal refuses
// a payload over 2 MiB. A bigger status fails, naming its size, rather than
// being cut short.
const MaxStatusBytes = 3 << 19 // 1.5 MiB: room for the payload's envelope and a codec

package engine

import (
	"fmt"
	"strings"
	"time"

	"github.com/kumoproj/kumo/engine/health"
)

// Extensions that say when a resource's node is done in an apply.
const (
	// ExtWait is "healthy" (the default: the node is done once the resource is
	// Healthy) or "applied" (done as soon as it is applied).
	ExtWait = "kumoproj.io/wait"
	// ExtTimeout bounds the wait for this resource, as a Go duration ("90s",
	// "10m"); it overrides the run's timeout.
	ExtTimeout = "kumoproj.io/timeout"
)

// When a node counts as done.
const (
	WaitHealthy = "healthy"
	WaitApplied = "applied"
)

// DefaultWaitTimeout bounds a wait when neither the run nor the resource says.
const DefaultWaitTimeout = 5 * time.Minute

// WaitPolicy is when one resource's node is done, and how long to wait for it.
type WaitPolicy struct {
	Mode    string        // WaitHealthy or WaitApplied
	Timeout time.Duration // for WaitHealthy
}

// WaitPolicyOf returns r's wait policy: its extensions, else the run's mode
// and timeout (empty / zero: healthy, DefaultWaitTimeout). It fails, naming
// the extension (not the resource), on a value it does not understand.
func WaitPolicyOf(r *Resource, mode string, timeout time.Duration) (WaitPolicy, error) {
	p := WaitPolicy{Mode: mode, Timeout: timeout}
	if v, ok := r.Extensions[ExtWait]; ok && v != nil {
		s, _ := v.(string)
		p.Mode = s
		if s != WaitHealthy && s != WaitApplied {
			return p, fmt.Errorf("extensions.%s is %v, want %q or %q", ExtWait, v, WaitHealthy, WaitApplied)
		}
	}
	if v, ok := r.Extensions[ExtTimeout]; ok && v != nil {
		s, _ := v.(string)
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return p, fmt.Errorf("extensions.%s is %v, want a positive duration such as \"90s\"", ExtTimeout, v)
		}
		p.Timeout = d
	}
	switch p.Mode {
	case "":
		p.Mode = WaitHealthy
	case WaitHealthy, WaitApplied:
	default:
		return p, fmt.Errorf("wait mode %q: want %q or %q", p.Mode, WaitHealthy, WaitApplied)
	}
	if p.Timeout <= 0 {
		p.Timeout = DefaultWaitTimeout
	}
	return p, nil
}

// PendingWait is why an unchanged resource's node still waits in an apply:
// it is not healthy live (an earlier apply ended before it was, or it has
// degraded since), and a release succeeds only when every resource it records
// is healthy. Its node waits as an applied one would, within Timeout.
type PendingWait struct {
	Health  health.Result `json:"health"`
	Timeout time.Duration `json:"timeout"`
}

// HealthSettings are a workspace's health rules.
type HealthSettings struct {
	// DoneWhenApplied names kinds, as "Kind" for the core group or
	// "group/Kind" ("Service", "apiregistration.k8s.io/APIService"), whose
	// resources count as done once applied in this workspace, as
	// kumoproj.io/wait: applied says for one resource: a LoadBalancer Service
	// on a cluster without a load-balancer provider never gets an address. A
	// resource's own kumoproj.io/wait wins; a CRD is always waited for.
	DoneWhenApplied []string `json:"doneWhenApplied,omitempty"`
}

// Validate checks the settings; errors name the field.
func (h HealthSettings) Validate() error {
	for i, k := range h.DoneWhenApplied {
		group, kind, hasGroup := strings.Cut(k, "/")
		if !hasGroup {
			group, kind = "", k
		}
		if kind == "" || strings.Contains(kind, "/") || hasGroup && group == "" || strings.ContainsAny(k, " \t") {
			return fmt.Errorf("health.doneWhenApplied[%d]: %q: want a kind, as \"Service\" or \"apiregistration.k8s.io/APIService\"", i, k)
		}
	}
	return nil
}

// Policy is r's wait policy in a workspace with these settings: p, r's own
// (WaitPolicyOf), made "applied" when r's kind is one the workspace counts as
// done once applied and r does not say otherwise.
func (h HealthSettings) Policy(r *Resource, p WaitPolicy) WaitPolicy {
	if p.Mode != WaitHealthy || len(h.DoneWhenApplied) == 0 {
		return p
	}
	if v, ok := r.Extensions[ExtWait]; ok && v != nil {
		return p
	}
	gk := resourceKind(r)
	for _, k := range h.DoneWhenApplied {
		group, kind, hasGroup := strings.Cut(k, "/")
		if !hasGroup {
			group, kind = "", k
		}
		if gk.kind != "" && gk == (groupKind{group, kind}) {
			p.Mode = WaitApplied
			return p
		}
	}
	return p
}

package drift

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/kumoproj/kumo/engine/resid"
)

// DefaultKeep is how many reports are kept per stack when Config.Keep is 0.
const DefaultKeep = 100

// Config is the `drift` section of a workspace (and of a project): what a check
// ignores and how many reports it keeps.
type Config struct {
	Ignore []Rule `json:"ignore,omitempty"`
	// Keep is how many reports are kept per stack (default DefaultKeep).
	Keep int `json:"keep,omitempty"`
	// Remediation bounds the remediations of remediate-mode checks.
	Remediation Policy `json:"remediation,omitzero"`
	// Webhook receives a signed JSON POST (an Event) whenever the drift
	// state of the stack changes.
	Webhook Webhook `json:"webhook,omitzero"`
}

// Rule ignores differences, Argo CD style: a resource selector (an ID glob, or
// kind / namespace / name, each optional and glob-matched) and what to ignore in
// the resources it selects: fields under JSON pointers, or fields whose live
// value is owned by one of the named field managers.
type Rule struct {
	ID                    string   `json:"id,omitempty"`
	Kind                  string   `json:"kind,omitempty"`
	Namespace             string   `json:"namespace,omitempty"`
	Name                  string   `json:"name,omitempty"`
	JSONPointers          []string `json:"jsonPointers,omitempty"`
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty"`
}

// Validate checks every rule; errors name source (the file) and the entry
// (drift.ignore[i]).
func (c Config) Validate(source string) error {
	if c.Keep < 0 {
		return fmt.Errorf("%s: drift.keep: %d is negative", source, c.Keep)
	}
	var errs []error
	if err := c.Remediation.validate(); err != nil {
		errs = append(errs, fmt.Errorf("%s: drift.remediation: %w", source, err))
	}
	if err := c.Webhook.validate(); err != nil {
		errs = append(errs, fmt.Errorf("%s: drift.webhook: %w", source, err))
	}
	for i, r := range c.Ignore {
		if err := r.validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: drift.ignore[%d]: %w", source, i, err))
		}
	}
	return errors.Join(errs...)
}

// KeepOrDefault is Keep, or DefaultKeep when unset.
func (c Config) KeepOrDefault() int {
	if c.Keep > 0 {
		return c.Keep
	}
	return DefaultKeep
}

func (r Rule) validate() error {
	if r.ID == "" && r.Kind == "" && r.Namespace == "" && r.Name == "" {
		return errors.New("no resource selector: set id (a glob) or kind/namespace/name")
	}
	if r.ID != "" && (r.Kind != "" || r.Namespace != "" || r.Name != "") {
		return errors.New("id and kind/namespace/name are two ways to select: use one")
	}
	for _, g := range []struct{ field, v string }{{"id", r.ID}, {"kind", r.Kind}, {"namespace", r.Namespace}, {"name", r.Name}} {
		if _, err := path.Match(g.v, ""); err != nil {
			return fmt.Errorf("%s: %q is not a valid glob", g.field, g.v)
		}
	}
	if len(r.JSONPointers) == 0 && len(r.ManagedFieldsManagers) == 0 {
		return errors.New("nothing to ignore: set jsonPointers or managedFieldsManagers")
	}
	for i, p := range r.JSONPointers {
		if err := validPointer(p); err != nil {
			return fmt.Errorf("jsonPointers[%d] %q: %w", i, p, err)
		}
	}
	for i, m := range r.ManagedFieldsManagers {
		if strings.TrimSpace(m) == "" {
			return fmt.Errorf("managedFieldsManagers[%d] is empty", i)
		}
	}
	return nil
}

// validPointer checks RFC 6901 syntax: "" or "/"-prefixed segments, where '~'
// is only followed by '0' or '1'.
func validPointer(p string) error {
	if p == "" {
		return errors.New("empty (a pointer to the whole resource ignores nothing useful)")
	}
	if p[0] != '/' {
		return errors.New("a JSON pointer starts with /")
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 == len(p) || (p[i+1] != '0' && p[i+1] != '1')) {
			return errors.New("'~' must be followed by 0 or 1 (~0 is '~', ~1 is '/')")
		}
	}
	return nil
}

// selects reports whether r selects the resource id of type typ. Kubernetes
// IDs (apiVersion:kind[:namespace]:name) are matched by kind, namespace and
// name; other resources only by an id glob.
func (r Rule) selects(id, typ string) bool {
	if r.ID != "" {
		ok, _ := path.Match(r.ID, id)
		return ok
	}
	if typ != resid.Kubernetes {
		return false
	}
	k, err := resid.Parse(id, resid.Kubernetes)
	if err != nil {
		return false
	}
	return glob(r.Kind, k.Kind) && glob(r.Namespace, k.Namespace) && glob(r.Name, k.Name)
}

func glob(pattern, s string) bool {
	if pattern == "" {
		return true
	}
	ok, _ := path.Match(pattern, s)
	return ok
}

// matches reports whether r ignores field f.
func (r Rule) matches(f Field) bool {
	for _, p := range r.JSONPointers {
		if f.Path == p || strings.HasPrefix(f.Path, p+"/") {
			return true
		}
	}
	return f.Manager != "" && slices.Contains(r.ManagedFieldsManagers, f.Manager)
}

// Apply moves the fields of res that a rule ignores from Fields to Ignored
// (naming the rule), and a drifted resource left with no fields becomes in sync.
// Missing and error results are never ignored.
func (c Config) Apply(res *Result) {
	if res.Status != Drifted {
		return
	}
	var kept []Field
	for _, f := range res.Fields {
		ignored := false
		for i, r := range c.Ignore {
			if r.selects(res.ID, res.Type) && r.matches(f) {
				f.IgnoredBy = fmt.Sprintf("drift.ignore[%d]", i)
				res.Ignored = append(res.Ignored, f)
				ignored = true
				break
			}
		}
		if !ignored {
			kept = append(kept, f)
		}
	}
	res.Fields = kept
	if len(kept) == 0 {
		res.Status = InSync
	}
}

// Merge returns the rules of c followed by those of more (a workspace's, then a
// project's); Keep, the remediation policy and the webhook's URL and secret are
// more's when set. What the webhook may reach (allowedHosts, allowPrivate) is
// always c's: a project cannot widen what its workspace allows.
func (c Config) Merge(more Config) Config {
	out := Config{Ignore: append(slices.Clip(c.Ignore), more.Ignore...), Keep: c.Keep, Remediation: c.Remediation, Webhook: c.Webhook}
	if more.Keep > 0 {
		out.Keep = more.Keep
	}
	if more.Remediation != (Policy{}) {
		out.Remediation = more.Remediation
	}
	if more.Webhook.URL != "" {
		out.Webhook.URL = more.Webhook.URL
	}
	if more.Webhook.SecretEnv != "" {
		out.Webhook.SecretEnv = more.Webhook.SecretEnv
	}
	return out
}

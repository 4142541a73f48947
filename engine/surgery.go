package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kumoproj/kumo/engine/resid"
)

// Surgery changes what a release records without touching anything live, as
// Terraform's `state rm` / `removed {}` and `state mv` / `moved {}` do:
// Forget drops resources from the record (they stay live, unmanaged), Move
// records a resource under another ID of the same live object.
type Surgery struct {
	Forget []string `json:"forget,omitempty"`
	Move   *Moved   `json:"move,omitempty"`
}

// Moved says the resource recorded as From is now To: the same live object
// under another ID (a Kubernetes object's new apiVersion, a Terraform
// resource's new name after a generator component was renamed).
type Moved struct {
	From string `json:"from"`
	To   string `json:"to"`
}

const (
	// OperationForget drops resources from a release's record (kumo release forget).
	OperationForget Operation = "forget"
	// OperationMove records a resource under another ID (kumo release mv).
	OperationMove Operation = "move"
)

const (
	// Forget: the resource leaves kumo's record and stays live.
	Forget Action = "Forget"
	// Move: the resource's record moves to this ID; nothing live changes.
	Move Action = "Move"
)

// Operation is the release operation of the surgery.
func (s Surgery) Operation() Operation {
	if s.Move != nil {
		return OperationMove
	}
	return OperationForget
}

// Validate checks the surgery's shape: either IDs to forget or one move, each
// a resource ID.
func (s Surgery) Validate() error {
	switch {
	case len(s.Forget) > 0 && s.Move != nil:
		return errors.New("a surgery either forgets or moves, not both")
	case len(s.Forget) == 0 && s.Move == nil:
		return errors.New("nothing to forget or move: name the resource IDs")
	case s.Move != nil:
		if s.Move.From == s.Move.To {
			return fmt.Errorf("mv %s %s: the two IDs are the same", s.Move.From, s.Move.To)
		}
		for _, id := range []string{s.Move.From, s.Move.To} {
			if _, err := resid.Parse(id, ""); err != nil {
				return err
			}
		}
	}
	for _, id := range s.Forget {
		if _, err := resid.Parse(id, ""); err != nil {
			return err
		}
	}
	return nil
}

// SurgeryPlan is what a surgery does to a release: the spec the new revision
// records, the records it writes (a nil Resource drops the ID) and the
// changes its run shows for approval.
type SurgeryPlan struct {
	Spec    *Spec
	Records []SurgeryRecord
	Changes []Change
}

// SurgeryRecord is one resource's new record (Resource nil: no longer recorded).
type SurgeryRecord struct {
	ID       string
	Resource *Resource
}

// PlanSurgery applies s to the spec and state of a release (where names it in
// errors, e.g. "revision 3 of shop/prod") and returns what the new revision
// records. It refuses an ID the state does not record, a move onto an ID
// already recorded or in the spec, a move between IDs that cannot name the
// same live object, and forgetting a resource another one still references.
func PlanSurgery(s Surgery, spec *Spec, state *State, where string) (*SurgeryPlan, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if spec == nil {
		spec = &Spec{}
	}
	recorded := map[string]*Resource{}
	if state != nil {
		for i := range state.Resources {
			recorded[state.Resources[i].ID] = &state.Resources[i]
		}
	}
	if s.Move != nil {
		return planMove(*s.Move, spec, state, recorded, where)
	}
	return planForget(s.Forget, spec, state, recorded, where)
}

func planForget(ids []string, spec *Spec, state *State, recorded map[string]*Resource, where string) (*SurgeryPlan, error) {
	forget := map[string]bool{}
	var unknown []string
	for _, id := range ids {
		if recorded[id] == nil {
			unknown = append(unknown, id)
		}
		forget[id] = true
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("forget: %s not recorded in %s (kumo release show lists what is)", strings.Join(unknown, ", "), where)
	}
	refs, errs := spec.AllRefs()
	for i, r := range spec.Resources {
		if forget[r.ID] || errs[i] != nil {
			continue
		}
		for _, ref := range refs[i] {
			if forget[ref.ResourceID] {
				return nil, fmt.Errorf("forget %s: %s refers to it (%s); forget both, or apply without the reference first", ref.ResourceID, r.ID, ref.Raw)
			}
		}
	}
	plan := &SurgeryPlan{Spec: &Spec{Resources: []Resource{}}}
	for _, r := range spec.Resources {
		if forget[r.ID] {
			continue
		}
		r.DependsOn = slices.DeleteFunc(slices.Clone(r.DependsOn), func(d string) bool { return forget[d] })
		plan.Spec.Resources = append(plan.Spec.Resources, r)
	}
	for _, r := range state.Resources {
		if forget[r.ID] {
			plan.Records = append(plan.Records, SurgeryRecord{ID: r.ID})
			plan.Changes = append(plan.Changes, Change{ID: r.ID, Type: r.Type, Action: Forget,
				Fields: []FieldChange{{Path: "(stays live; kumo no longer records or manages it)"}}})
			continue
		}
		if deps := slices.DeleteFunc(slices.Clone(r.DependsOn), func(d string) bool { return forget[d] }); len(deps) != len(r.DependsOn) {
			r.DependsOn = deps
			plan.Records = append(plan.Records, SurgeryRecord{ID: r.ID, Resource: &r})
		}
	}
	return plan, nil
}

func planMove(m Moved, spec *Spec, state *State, recorded map[string]*Resource, where string) (*SurgeryPlan, error) {
	from := recorded[m.From]
	if from == nil {
		return nil, fmt.Errorf("mv %s %s: %s is not recorded in %s (kumo release show lists what is)", m.From, m.To, m.From, where)
	}
	if recorded[m.To] != nil || spec.idSet()[m.To] {
		return nil, fmt.Errorf("mv %s %s: %s already exists in %s; forget it first, or move to another ID", m.From, m.To, m.To, where)
	}
	moved, err := movedResource(*from, m)
	if err != nil {
		return nil, err
	}
	plan := &SurgeryPlan{Spec: &Spec{Resources: make([]Resource, 0, len(spec.Resources))}}
	for _, r := range spec.Resources {
		if r.ID == m.From {
			if r, err = movedResource(r, m); err != nil {
				return nil, err
			}
			delete(r.Extensions, ExtTerraformState)
		} else if r.Attributes != nil {
			r.Attributes, _ = renameRefs(r.Attributes, m).(map[string]any)
		}
		r.DependsOn = renameDeps(r.DependsOn, m)
		plan.Spec.Resources = append(plan.Spec.Resources, r)
	}
	plan.Records = append(plan.Records, SurgeryRecord{ID: m.From})
	for _, r := range state.Resources {
		switch {
		case r.ID == m.From:
			moved.DependsOn = renameDeps(moved.DependsOn, m)
			plan.Records = append(plan.Records, SurgeryRecord{ID: m.To, Resource: &moved})
		case slices.Contains(r.DependsOn, m.From):
			r.DependsOn = renameDeps(r.DependsOn, m)
			plan.Records = append(plan.Records, SurgeryRecord{ID: r.ID, Resource: &r})
		}
	}
	plan.Changes = []Change{{ID: m.To, Type: from.Type, Action: Move, Fields: []FieldChange{{Path: "(moved from " + m.From + "; nothing live changes)"}}}}
	return plan, nil
}

// movedResource is r recorded under m.To. The two IDs must name the same live
// object: a Kubernetes ID is derived from the object, so only its apiVersion
// may differ (the same object served by another group version), and a
// Terraform resource keeps its provider and type, its name (the address in
// the configuration) being what changes; its Terraform state is rewritten to
// the new address, as `terraform state mv` does.
func movedResource(r Resource, m Moved) (Resource, error) {
	from, err := resid.Parse(m.From, string(r.Type))
	if err != nil {
		return r, err
	}
	to, err := resid.Parse(m.To, string(r.Type))
	if err != nil {
		return r, fmt.Errorf("mv %s %s: %s is a %s resource, so %w", m.From, m.To, m.From, r.Type, err)
	}
	r.ID = m.To
	switch r.Type {
	case Kubernetes:
		if from.Kind != to.Kind || from.Namespace != to.Namespace || from.Name != to.Name {
			return r, fmt.Errorf("mv %s %s: a Kubernetes object cannot be renamed or moved to another kind or namespace: its ID names the object (apiVersion:kind:namespace:name), so only the apiVersion may differ", m.From, m.To)
		}
		r.Attributes = cloneTop(r.Attributes)
		r.Attributes["apiVersion"] = to.APIVersion
	case Terraform:
		if from.ProviderNamespace != to.ProviderNamespace || from.ProviderName != to.ProviderName || from.ResourceType != to.ResourceType {
			return r, fmt.Errorf("mv %s %s: not the same kind of Terraform resource: the provider and resource type must stay, only the resource name may change", m.From, m.To)
		}
		if !identifier.MatchString(to.Name) {
			return r, fmt.Errorf("mv %s %s: resource name %q is not a Terraform name (letters, digits, _ and -, not starting with a digit or -)", m.From, m.To, to.Name)
		}
		if st, ok := r.Extensions[ExtTerraformState].(string); ok && st != "" {
			renamed, err := renameTerraformState(st, from.ResourceType, from.Name, to.Name)
			if err != nil {
				return r, fmt.Errorf("mv %s %s: %w", m.From, m.To, err)
			}
			r.Extensions = cloneTop(r.Extensions)
			r.Extensions[ExtTerraformState] = renamed
		}
	default:
		return r, fmt.Errorf("mv %s %s: resources of type %q cannot be moved", m.From, m.To, r.Type)
	}
	return r, nil
}

// renameTerraformState moves the managed resource typ.from of a Terraform
// state (format version 4) to typ.to and raises its serial, keeping every
// other field as it was.
func renameTerraformState(state, typ, from, to string) (string, error) {
	dec := json.NewDecoder(strings.NewReader(state))
	dec.UseNumber()
	var st map[string]any
	if err := dec.Decode(&st); err != nil {
		return "", fmt.Errorf("read the recorded terraform state: %w", err)
	}
	if v, _ := st["version"].(json.Number); v.String() != "4" {
		return "", fmt.Errorf("the recorded terraform state has format version %v, want 4", st["version"])
	}
	resources, _ := st["resources"].([]any)
	found := 0
	for _, e := range resources {
		r, _ := e.(map[string]any)
		if r["mode"] == "managed" && r["type"] == typ && r["name"] == from {
			r["name"] = to
			found++
		}
	}
	if found != 1 {
		return "", fmt.Errorf("the recorded terraform state holds %d resources %s.%s, want 1", found, typ, from)
	}
	if n, ok := st["serial"].(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			st["serial"] = i + 1
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(st); err != nil {
		return "", err
	}
	return b.String(), nil
}

func renameDeps(deps []string, m Moved) []string {
	if !slices.Contains(deps, m.From) {
		return deps
	}
	out := slices.Clone(deps)
	for i, d := range out {
		if d == m.From {
			out[i] = m.To
		}
	}
	return out
}

// renameRefs rewrites the references to m.From in v ($kumo_path.<From>.path,
// and Kusion's spelling) to name m.To, copying what it changes.
func renameRefs(v any, m Moved) any {
	switch x := v.(type) {
	case string:
		if p := refPrefix(x); p != "" && strings.HasPrefix(x[len(p):], m.From+".") {
			return p + m.To + x[len(p)+len(m.From):]
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = renameRefs(e, m)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = renameRefs(e, m)
		}
		return out
	}
	return v
}

func cloneTop(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

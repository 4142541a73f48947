package terraform

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/kumoproj/kumo/engine"
)

// tfstate is the part of terraform's state file (format version 4, shared by
// terraform and tofu) that kumo reads: the resources and their attributes.
type tfstate struct {
	Version int `json:"version"`
	Outputs map[string]struct {
		Value any `json:"value"`
	} `json:"outputs"`
	Resources []struct {
		Mode      string `json:"mode"`
		Type      string `json:"type"`
		Name      string `json:"name"`
		Instances []struct {
			Attributes map[string]any `json:"attributes"`
		} `json:"instances"`
	} `json:"resources"`
}

// stateOf returns the terraform state res carries, "" when none.
func stateOf(res *engine.Resource) string {
	s, _ := res.Extensions[engine.ExtTerraformState].(string)
	return s
}

func parseState(state []byte) (*tfstate, error) {
	var st tfstate
	dec := json.NewDecoder(bytes.NewReader(state))
	dec.UseNumber() // keep large numbers exact
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("read terraform state: %w", err)
	}
	if st.Version != 4 {
		return nil, fmt.Errorf("terraform state format version %d is not supported (want 4)", st.Version)
	}
	return &st, nil
}

// holds reports whether the state records the resource's object.
func (st *tfstate) holds(spec *engine.TerraformResource) bool {
	for _, r := range st.Resources {
		if r.Mode == "managed" && r.Type == spec.Type && r.Name == spec.Name && len(r.Instances) > 0 {
			return true
		}
	}
	return false
}

// output returns the resource as the output of the whole resource has it,
// normalized, or nil when there is no such output.
func (st *tfstate) output() map[string]any {
	o, ok := st.Outputs[outputName]
	if !ok {
		return nil
	}
	attrs, _ := engine.Normalize(o.Value).(map[string]any)
	return attrs
}

// hasInstance reports whether state records the resource's object.
func hasInstance(state string, spec *engine.TerraformResource) bool {
	if state == "" {
		return false
	}
	st, err := parseState([]byte(state))
	return err == nil && st.holds(spec)
}

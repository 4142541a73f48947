package engine

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/kumoproj/kumo/engine/planpolicy"
	"github.com/kumoproj/kumo/engine/resid"
)

// PolicyAction is how policy rules class a change's action ("" for a change
// rules do not see: UnChanged). An adoption changes who manages a live
// object: an update.
func PolicyAction(a Action) string {
	switch a {
	case Create:
		return planpolicy.ActionCreate
	case Update, Adopt:
		return planpolicy.ActionUpdate
	case Delete:
		return planpolicy.ActionDelete
	}
	return ""
}

// PolicyResource is one change as policy rules see it: desired is the
// resource as the spec has it (nil for a delete), live as it is now (nil for a
// create). Sensitive values are masked in both, as they are in a plan: a rule
// may test that a secret is set, never read it.
func PolicyResource(c Change, desired, live *Resource) planpolicy.Resource {
	r := planpolicy.Resource{ID: c.ID, Action: PolicyAction(c.Action)}
	if id, err := resid.Parse(c.ID, string(c.Type)); err == nil {
		r.Kind, r.Namespace, r.Name = id.Kind, id.Namespace, id.Name
		if id.Type == resid.Terraform {
			r.Kind = id.ResourceType
		}
	}
	if desired != nil {
		r.Desired = MaskSensitive(*desired).Attributes
	}
	if live != nil {
		r.Live = MaskSensitive(*live).Attributes
	}
	labelsOf := r.Desired
	if labelsOf == nil {
		labelsOf = r.Live
	}
	if md, ok := labelsOf["metadata"].(map[string]any); ok {
		if ls, ok := md["labels"].(map[string]any); ok {
			r.Labels = make(map[string]string, len(ls))
			for k, v := range ls {
				if s, ok := v.(string); ok {
					r.Labels[k] = s
				}
			}
		}
	}
	for _, f := range c.Fields {
		r.Paths = append(r.Paths, f.Path)
	}
	return r
}

// PolicyDigest is the digest of a plan and its policy results: PlanDigest
// when no rule was violated (so a plan without policies keeps the digest it
// always had), else the SHA-256 of the canonical plan followed by the
// canonical results. An approval bound to it is bound to the violations the
// approver saw too.
func PolicyDigest(changes []Change, results planpolicy.Results) string {
	if len(results.Violations) == 0 {
		return PlanDigest(changes)
	}
	h := sha256.New()
	h.Write(CanonicalPlan(changes))
	h.Write([]byte("\npolicies:"))
	h.Write(results.Canonical())
	return digestPrefix + hex.EncodeToString(h.Sum(nil))
}

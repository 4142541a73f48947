package engine

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kumoproj/kumo/internal/keys"
)

// digestPrefix starts every plan digest, naming its hash.
const digestPrefix = "sha256:"

// minDigestPrefix is how many hex digits of a digest a user must give at least.
const minDigestPrefix = 12

// CanonicalPlan is a preview in one stable form: the changes sorted by resource
// ID, the fields of each sorted by path, as JSON (object keys sorted, as
// encoding/json writes maps). Two previews that show the same changes have the
// same form, whatever order their resources were previewed in.
func CanonicalPlan(changes []Change) []byte {
	sorted := make([]Change, len(changes))
	for i, c := range changes {
		c.Fields = slices.SortedStableFunc(slices.Values(c.Fields), func(a, b FieldChange) int { return cmp.Compare(a.Path, b.Path) })
		c.Wait = nil // health is not a change (see Change.Wait)
		sorted[i] = c
	}
	slices.SortStableFunc(sorted, func(a, b Change) int { return cmp.Compare(a.ID, b.ID) })
	data, err := json.Marshal(sorted)
	if err != nil {
		// Field values come from JSON (a runtime's object, a recorded state),
		// so they always marshal; one that does not is a bug, not user input.
		panic(fmt.Sprintf("canonical plan: %v", err))
	}
	return data
}

// PlanDigest is "sha256:" and the hex SHA-256 of CanonicalPlan: what an approval
// is bound to. A plan that would change anything differently (another action,
// another value before or after, a resource more or less) has another digest.
func PlanDigest(changes []Change) string {
	sum := sha256.Sum256(CanonicalPlan(changes))
	return digestPrefix + hex.EncodeToString(sum[:])
}

// MatchDigest reports whether given names digest: the whole digest, or its
// first 12 or more hex digits, with or without "sha256:".
func MatchDigest(digest, given string) bool {
	given = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(given), digestPrefix))
	hexPart := strings.TrimPrefix(digest, digestPrefix)
	return len(given) >= minDigestPrefix && strings.HasPrefix(hexPart, given)
}

// ShortDigest is the digest cut to "sha256:" and 12 hex digits, for messages.
func ShortDigest(digest string) string {
	if len(digest) > len(digestPrefix)+minDigestPrefix {
		return digest[:len(digestPrefix)+minDigestPrefix]
	}
	return digest
}

// PlanSummary says what a plan changes in words: "1 to create, 2 to update",
// "no changes".
func PlanSummary(changes []Change) string {
	counts := map[Action]int{}
	for _, c := range changes {
		counts[c.Action]++
	}
	var parts []string
	for _, a := range []struct {
		action Action
		verb   string
	}{{Create, "create"}, {Update, "update"}, {Delete, "delete"}} {
		if n := counts[a.action]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d to %s", n, a.verb))
		}
	}
	if len(parts) == 0 {
		return "no changes"
	}
	return strings.Join(parts, ", ")
}

// PlanDifference names the first resource, in ID order, whose change differs
// between an approved plan and the plan made now, and how; "" when the two
// show the same changes.
func PlanDifference(approved, now []Change) string {
	before, after := changesByID(approved), changesByID(now)
	for _, id := range keys.Union(before, after) {
		a, inApproved := before[id]
		b, inNow := after[id]
		switch {
		case !inNow:
			return fmt.Sprintf("%s is no longer in the plan", id)
		case !inApproved:
			return fmt.Sprintf("%s was not in the approved plan (now %s)", id, b.Action)
		case a.Action != b.Action:
			return fmt.Sprintf("%s: approved %s, now %s", id, a.Action, b.Action)
		}
		if d := fieldDifference(a.Fields, b.Fields); d != "" {
			return id + " " + d
		}
		if a.Drifted != b.Drifted {
			return fmt.Sprintf("%s: changed outside kumo since the approval", id)
		}
	}
	return ""
}

func changesByID(changes []Change) map[string]Change {
	m := make(map[string]Change, len(changes))
	for _, c := range changes {
		m[c.ID] = c
	}
	return m
}

// fieldDifference names the first path, in path order, that differs.
func fieldDifference(approved, now []FieldChange) string {
	before, after := map[string]FieldChange{}, map[string]FieldChange{}
	var paths []string
	for _, f := range approved {
		before[f.Path] = f
		paths = append(paths, f.Path)
	}
	for _, f := range now {
		after[f.Path] = f
		if _, ok := before[f.Path]; !ok {
			paths = append(paths, f.Path)
		}
	}
	slices.Sort(paths)
	for _, p := range paths {
		a, inApproved := before[p]
		b, inNow := after[p]
		switch {
		case !inNow:
			return fmt.Sprintf("%s: approved %s, now no change", p, fieldChange(a))
		case !inApproved:
			return fmt.Sprintf("%s: not in the approved plan, now %s", p, fieldChange(b))
		case jsonText(a.Before) != jsonText(b.Before) || jsonText(a.After) != jsonText(b.After) || a.Sensitive != b.Sensitive:
			return fmt.Sprintf("%s: approved %s, now %s", p, fieldChange(a), fieldChange(b))
		}
	}
	return ""
}

func fieldChange(f FieldChange) string {
	return jsonText(f.Before) + " -> " + jsonText(f.After)
}

// jsonText shows a field value as JSON, an absent one as (none).
func jsonText(v any) string {
	if v == nil {
		return "(none)"
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

// TargetedDigest binds a plan's digest to the targets its run was narrowed
// to: the digest itself when the run is not narrowed (so such plans keep the
// digest they always had), else the SHA-256 of the digest followed by the
// sorted targets and whether dependents were kept. An approval of a targeted
// plan is therefore an approval of those targets.
func TargetedDigest(digest string, t *Targeting) string {
	if t == nil || len(t.Targets) == 0 {
		return digest
	}
	targets := slices.Clone(t.Targets)
	slices.Sort(targets)
	data, err := json.Marshal(struct {
		Targets    []string `json:"targets"`
		Dependents bool     `json:"dependents"`
	}{slices.Compact(targets), t.Dependents})
	if err != nil {
		panic(fmt.Sprintf("targeted digest: %v", err)) // strings always marshal
	}
	h := sha256.New()
	h.Write([]byte(digest))
	h.Write([]byte("\ntargets:"))
	h.Write(data)
	return digestPrefix + hex.EncodeToString(h.Sum(nil))
}

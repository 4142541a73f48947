package engine

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/engine/health"
)

func samplePlan() []Change {
	return []Change{
		{ID: "v1:Service:ns:web", Type: Kubernetes, Action: Create},
		{ID: "apps/v1:Deployment:ns:web", Type: Kubernetes, Action: Update, Fields: []FieldChange{
			{Path: "spec.template.spec.containers[0].image", Before: "nginx:1", After: "nginx:2"},
			{Path: "spec.replicas", Before: 1, After: 3},
		}},
		{ID: "v1:ConfigMap:ns:old", Type: Kubernetes, Action: Delete},
		{ID: "v1:ConfigMap:ns:same", Type: Kubernetes, Action: UnChanged},
	}
}

// TestCanonicalPlanIsSortedJSON: the canonical form is a contract (digests given
// with --digest are compared across kumo versions): changes by ID, fields by
// path, map keys sorted.
func TestCanonicalPlanIsSortedJSON(t *testing.T) {
	want := `[{"id":"apps/v1:Deployment:ns:web","type":"Kubernetes","action":"Update","fields":[` +
		`{"path":"spec.replicas","before":1,"after":3},` +
		`{"path":"spec.template.spec.containers[0].image","before":"nginx:1","after":"nginx:2"}]},` +
		`{"id":"v1:ConfigMap:ns:old","type":"Kubernetes","action":"Delete"},` +
		`{"id":"v1:ConfigMap:ns:same","type":"Kubernetes","action":"UnChanged"},` +
		`{"id":"v1:Service:ns:web","type":"Kubernetes","action":"Create"}]`
	if got := string(CanonicalPlan(samplePlan())); got != want {
		t.Errorf("canonical plan\n got %s\nwant %s", got, want)
	}
}

func TestPlanDigestIgnoresOrderButNotContent(t *testing.T) {
	plan := samplePlan()
	digest := PlanDigest(plan)
	if !strings.HasPrefix(digest, "sha256:") || len(digest) != len("sha256:")+64 {
		t.Fatalf("digest %q", digest)
	}
	reordered := []Change{plan[3], plan[1], plan[0], plan[2]}
	reordered[1].Fields = []FieldChange{plan[1].Fields[1], plan[1].Fields[0]}
	if got := PlanDigest(reordered); got != digest {
		t.Errorf("reordered plan: digest %s, want %s", got, digest)
	}
	// What the workflow sees is the preview after a JSON round trip (numbers
	// become float64): the same digest.
	data, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	var decoded []Change
	if err := json.Unmarshal(data, &decoded); err != nil {
		t.Fatal(err)
	}
	if got := PlanDigest(decoded); got != digest {
		t.Errorf("decoded plan: digest %s, want %s", got, digest)
	}
	if PlanDigest(plan) != digest {
		t.Error("PlanDigest changed its input")
	}

	for name, change := range map[string]func(p []Change){
		"a value before":    func(p []Change) { p[1].Fields[1].Before = 2 },
		"a value after":     func(p []Change) { p[1].Fields[0].After = "nginx:3" },
		"an action":         func(p []Change) { p[3].Action = Update },
		"drift":             func(p []Change) { p[3].Drifted = true },
		"a field less":      func(p []Change) { p[1].Fields = p[1].Fields[:1] },
		"a resource's type": func(p []Change) { p[0].Type = Terraform },
	} {
		p := samplePlan()
		change(p)
		if PlanDigest(p) == digest {
			t.Errorf("%s changed, the digest did not", name)
		}
	}
	// Health is not a change: an unchanged resource found not healthy (so
	// an apply waits for it) has the plan's digest.
	waiting := samplePlan()
	waiting[3].Wait = &PendingWait{Health: health.Result{Status: health.Progressing, Message: "no address"}, Timeout: time.Minute}
	if got := PlanDigest(waiting); got != digest {
		t.Errorf("an unchanged resource waited for: digest %s, want %s", got, digest)
	}
	if waiting[3].Wait == nil {
		t.Error("PlanDigest dropped the input's wait")
	}
	if PlanDigest(samplePlan()[:3]) == digest {
		t.Error("a resource less, same digest")
	}
}

func TestMatchDigest(t *testing.T) {
	digest := PlanDigest(samplePlan())
	hexPart := strings.TrimPrefix(digest, "sha256:")
	for given, want := range map[string]bool{
		digest:                        true,
		hexPart:                       true,
		hexPart[:12]:                  true,
		"sha256:" + hexPart[:12]:      true,
		strings.ToUpper(hexPart[:16]): true,
		" " + digest + "\n":           true,
		hexPart[:11]:                  false, // too short to name a plan
		"":                            false,
		"sha256:":                     false,
		PlanDigest(samplePlan()[:1]):  false,
		hexPart[:12] + "x":            false,
	} {
		if got := MatchDigest(digest, given); got != want {
			t.Errorf("MatchDigest(%q) = %v, want %v", given, got, want)
		}
	}
}

func TestPlanSummary(t *testing.T) {
	if got := PlanSummary(samplePlan()); got != "1 to create, 1 to update, 1 to delete" {
		t.Errorf("summary %q", got)
	}
	if got := PlanSummary([]Change{{ID: "a", Action: UnChanged}}); got != "no changes" {
		t.Errorf("summary of an unchanged plan %q", got)
	}
}

func TestPlanDifferenceNamesTheFirstDifference(t *testing.T) {
	approved := samplePlan()
	if d := PlanDifference(approved, samplePlan()); d != "" {
		t.Errorf("same plans differ: %s", d)
	}
	cases := map[string]struct {
		change func(p []Change) []Change
		want   string
	}{
		"a live value": {func(p []Change) []Change { p[1].Fields[1].Before = 2; return p },
			`apps/v1:Deployment:ns:web spec.replicas: approved 1 -> 3, now 2 -> 3`},
		"an action": {func(p []Change) []Change { p[0].Action = UnChanged; return p },
			`v1:Service:ns:web: approved Create, now UnChanged`},
		"a resource gone": {func(p []Change) []Change { return p[:3] },
			`v1:ConfigMap:ns:same is no longer in the plan`},
		"a resource more": {func(p []Change) []Change { return append(p, Change{ID: "v1:ConfigMap:ns:new", Action: Create}) },
			`v1:ConfigMap:ns:new was not in the approved plan (now Create)`},
		"a field no longer changed": {func(p []Change) []Change { p[1].Fields = p[1].Fields[1:]; return p },
			`apps/v1:Deployment:ns:web spec.template.spec.containers[0].image: approved "nginx:1" -> "nginx:2", now no change`},
		"a field newly changed": {func(p []Change) []Change {
			p[1].Fields = append(p[1].Fields, FieldChange{Path: "metadata.labels.a", After: "b"})
			return p
		}, `apps/v1:Deployment:ns:web metadata.labels.a: not in the approved plan, now (none) -> "b"`},
		"drift only": {func(p []Change) []Change { p[3].Drifted = true; return p },
			`v1:ConfigMap:ns:same: changed outside kumo since the approval`},
	}
	for name, c := range cases {
		if got := PlanDifference(approved, c.change(samplePlan())); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, c.want)
		}
	}
}

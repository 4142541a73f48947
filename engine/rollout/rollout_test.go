package rollout

import (
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/engine/health"
)

var fleet = []string{"dev-eu1", "dev-us1", "prod-eu1", "prod-eu2", "prod-eu3", "prod-eu4", "prod-us1", "prod-us2"}

func resolve(t *testing.T, waves string, mutate ...func(*Spec)) (Plan, error) {
	t.Helper()
	ws, err := ParseWaves(waves)
	if err != nil {
		return Plan{}, err
	}
	s := Spec{Name: "shop-v2", Waves: ws}
	for _, m := range mutate {
		m(&s)
	}
	return Resolve(s, fleet)
}

func TestResolveTheIssuesExample(t *testing.T) {
	p, err := resolve(t, "canary=dev-eu1; 25%=prod-eu*; rest=prod-*")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"dev-eu1"}, {"prod-eu1"}, {"prod-eu2", "prod-eu3", "prod-eu4", "prod-us1", "prod-us2"}}
	if len(p.Waves) != 3 {
		t.Fatalf("waves = %+v", p.Waves)
	}
	for i, w := range p.Waves {
		if strings.Join(w.Workspaces, ",") != strings.Join(want[i], ",") {
			t.Errorf("wave %s = %v, want %v", w.Name, w.Workspaces, want[i])
		}
		if w.MaxParallel != len(w.Workspaces) {
			t.Errorf("wave %s: maxParallel %d, want the whole wave", w.Name, w.MaxParallel)
		}
	}
	if got := strings.Join(p.Workspaces(), ","); got != "dev-eu1,prod-eu1,prod-eu2,prod-eu3,prod-eu4,prod-us1,prod-us2" {
		t.Errorf("Workspaces() = %s", got)
	}
}

func TestPercentRoundsUpAndTakesInNameOrder(t *testing.T) {
	p, err := resolve(t, "50%=prod-eu*,prod-us1; rest=prod-*")
	if err != nil {
		t.Fatal(err)
	}
	// 5 matches, 50% rounded up is 3.
	if got := strings.Join(p.Waves[0].Workspaces, ","); got != "prod-eu1,prod-eu2,prod-eu3" {
		t.Errorf("50%% wave = %s", got)
	}
}

func TestResolveRefusals(t *testing.T) {
	for _, tc := range []struct{ waves, want string }{
		{"a=dev-eu1; b=dev-*", `wave "b": workspace dev-eu1 is matched by wave "a" too`},
		{"a=dev-eu9", `wave "a": workspaces: workspace "dev-eu9" does not exist`},
		{"a=staging-*", `wave "a": workspaces: pattern "staging-*" matches no workspace`},
		{"25%=prod-eu*", `no later wave takes prod-eu2 (left by wave "25%")`},
		{"a=dev-*; rest=dev-*", `wave "rest": takes no workspace`},
		{"a=dev-eu1; a=dev-us1", `wave "a": two waves have this name`},
		{"A=dev-eu1", `wave "A": name must be`},
		{"a=[dev", `pattern "[dev" is not a valid glob`},
		{"a=dev-eu1;;b=dev-us1", "wave 2 is empty"},
		{"a", `wave 1 "a" has no '='`},
		{"0%=dev-*; rest=dev-*", "a percentage wave takes 1%–100%"},
	} {
		_, err := resolve(t, tc.waves)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to contain %q", tc.waves, err, tc.want)
		}
	}
}

func TestOptionsAndDefaults(t *testing.T) {
	yes := true
	p, err := resolve(t, "canary=dev-eu1; prod=prod-*", func(s *Spec) {
		s.Defaults = WaveOptions{Bake: "2m", FailureThreshold: "25%", MaxParallel: 2}
		s.Waves[1].Approval = &yes
		s.Waves[1].Bake = "10m"
	})
	if err != nil {
		t.Fatal(err)
	}
	c, prod := p.Waves[0], p.Waves[1]
	if c.Bake != 2*time.Minute || c.Approval || c.MaxParallel != 1 || c.FailureThreshold.Percent != 25 {
		t.Errorf("canary = %+v", c)
	}
	if prod.Bake != 10*time.Minute || !prod.Approval || prod.MaxParallel != 2 {
		t.Errorf("prod = %+v", prod)
	}
	for _, tc := range []struct {
		o    WaveOptions
		want string
	}{
		{WaveOptions{Bake: "soon"}, `wave "canary": bake "soon"`},
		{WaveOptions{Bake: "-1m"}, `bake "-1m"`},
		{WaveOptions{FailureThreshold: "many"}, `wave "canary": failureThreshold "many"`},
		{WaveOptions{FailureThreshold: "120%"}, `failureThreshold "120%"`},
		{WaveOptions{MaxParallel: -1}, "maxParallel -1"},
	} {
		_, err := resolve(t, "canary=dev-eu1", func(s *Spec) { s.Waves[0].WaveOptions = tc.o })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.o, err, tc.want)
		}
	}
	if _, err := resolve(t, "canary=dev-eu1", func(s *Spec) { s.Name = "Bad Name" }); err == nil || !strings.Contains(err.Error(), `rollout name "Bad Name"`) {
		t.Errorf("bad name: %v", err)
	}
}

func TestParseYAML(t *testing.T) {
	s, err := Parse([]byte(`name: shop-v2
undoOnFailure: true
defaults: {bake: 1m}
waves:
  - name: canary
    workspaces: [dev-eu1]
  - name: prod
    workspaces: ["prod-*"]
    approval: true
    maxParallel: 3
    failureThreshold: "1"
`), "rollout.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(s, fleet)
	if err != nil {
		t.Fatal(err)
	}
	if !p.UndoOnFailure || !p.Waves[1].Approval || p.Waves[1].MaxParallel != 3 || p.Waves[1].FailureThreshold.Count != 1 || p.Waves[0].Bake != time.Minute {
		t.Errorf("plan = %+v", p)
	}
	if _, err := Parse([]byte("name: x\nwaves:\n  - name: a\n    workspace: [dev-eu1]\n"), "rollout.yaml"); err == nil || !strings.Contains(err.Error(), "rollout.yaml") || !strings.Contains(err.Error(), "workspace not found") {
		t.Errorf("a misspelt field: %v", err)
	}
}

func TestThreshold(t *testing.T) {
	for _, tc := range []struct {
		th            string
		failed, total int
		stop          bool
	}{
		{"", 0, 3, false}, {"", 1, 3, true}, {"1", 1, 3, false}, {"1", 2, 3, true},
		{"50%", 1, 3, false}, {"50%", 2, 3, true}, {"34%", 1, 3, false}, {"33%", 1, 3, true},
	} {
		th, err := ParseThreshold(tc.th)
		if err != nil {
			t.Fatal(err)
		}
		if got := th.Exceeded(tc.failed, tc.total); got != tc.stop {
			t.Errorf("threshold %q, %d of %d failed: stop = %v, want %v", tc.th, tc.failed, tc.total, got, tc.stop)
		}
	}
}

func TestUndoPlanNewestFirst(t *testing.T) {
	undo, kept := UndoPlan([]Outcome{
		{Workspace: "dev-eu1", Prior: 3, Revision: 4, Seq: 1},
		{Workspace: "prod-eu1", Prior: 7, Revision: 8, Seq: 3},
		{Workspace: "prod-eu2", Prior: 2, Revision: 3, Seq: 2}, // failed apply: its release is back too
		{Workspace: "prod-us1", Prior: 5, Revision: 0, Seq: 4}, // failed before its release
		{Workspace: "prod-us2", Prior: 0, Revision: 1, Seq: 5}, // its first release
		{Workspace: "prod-eu3", Prior: 6, Revision: 6, Seq: 6}, // nothing new recorded
	})
	var got []string
	for _, u := range undo {
		got = append(got, u.Workspace+"@"+string(rune('0'+u.To)))
	}
	if strings.Join(got, " ") != "prod-eu1@7 prod-eu2@2 dev-eu1@3" {
		t.Errorf("undo = %v", got)
	}
	if len(kept) != 1 || kept[0].Workspace != "prod-us2" || !strings.Contains(kept[0].Reason, "first succeeded") {
		t.Errorf("kept = %+v", kept)
	}
}

func TestHealthy(t *testing.T) {
	if !Healthy(health.Healthy) || !Healthy(health.Suspended) || Healthy(health.Progressing) || Healthy(health.Degraded) || Healthy(health.Missing) {
		t.Error("Healthy")
	}
}

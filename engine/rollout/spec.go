package rollout

import (
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Spec is a rollout as written: a rollout.yaml, or the --waves flag and the
// flags around it. Resolve turns it into a Plan.
type Spec struct {
	// Name names the rollout (its workflow ID holds it).
	Name string `yaml:"name" json:"name"`
	// Waves run one after the other.
	Waves []WaveSpec `yaml:"waves" json:"waves"`
	// UndoOnFailure rolls every workspace the rollout updated back to its
	// previous revision, newest first, when a wave fails.
	UndoOnFailure bool `yaml:"undoOnFailure" json:"undoOnFailure"`
	// Defaults apply to every wave that does not set its own.
	Defaults WaveOptions `yaml:"defaults" json:"defaults"`
	// Source names a git source (kumo source add) every apply generates
	// from, at one commit: Commit, or the one its ref is at when the
	// rollout starts. Empty: the stack directory (--stack).
	Source string `yaml:"source,omitempty" json:"source,omitempty"`
	Commit string `yaml:"commit,omitempty" json:"commit,omitempty"`
}

// WaveSpec is one wave as written.
type WaveSpec struct {
	// Name labels the wave; "rest" and "N%" also say what it takes (package doc).
	Name string `yaml:"name" json:"name"`
	// Workspaces are names or globs.
	Workspaces  []string `yaml:"workspaces" json:"workspaces"`
	WaveOptions `yaml:",inline"`
}

// WaveOptions are a wave's settings; a zero field takes Spec.Defaults'.
type WaveOptions struct {
	// MaxParallel bounds how many workspaces of the wave apply at once (0:
	// all of them).
	MaxParallel int `yaml:"maxParallel,omitempty" json:"maxParallel,omitempty"`
	// Approval: the wave starts only once an approver approved it.
	Approval *bool `yaml:"approval,omitempty" json:"approval,omitempty"`
	// Bake is how long the wave's workspaces must stay healthy after their
	// applies before the next wave starts ("10m"; 0: checked once).
	Bake string `yaml:"bake,omitempty" json:"bake,omitempty"`
	// FailureThreshold is how many of the wave's workspaces may fail
	// without stopping the rollout: a count ("1") or a percentage ("10%");
	// default 0.
	FailureThreshold string `yaml:"failureThreshold,omitempty" json:"failureThreshold,omitempty"`
}

// Limits on what a rollout may hold: a bigger one is refused rather than
// half-run (each wave and workspace is state the workflow carries).
const (
	MaxWaves      = 50
	MaxWorkspaces = 500
	MaxBake       = 7 * 24 * time.Hour
)

// nameRE is what a rollout's or a wave's name may be: a workflow ID holds
// the first, status tables the second.
var nameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?$`)

// waveNameRE also allows "N%".
var waveNameRE = regexp.MustCompile(`^([a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?|[0-9]{1,3}%)$`)

// CheckName refuses a rollout name that is not a lower-case DNS-like label.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("rollout name %q: want lower-case letters, digits, '.', '-' or '_', starting and ending with a letter or digit, at most 63 characters", name)
	}
	return nil
}

// ParseWaves parses the --waves flag: waves separated by ";", each
// "NAME=PATTERN[,PATTERN...]", e.g. "canary=dev-eu1; 25%=prod-eu*; rest=prod-*".
func ParseWaves(s string) ([]WaveSpec, error) {
	var waves []WaveSpec
	for i, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			if i == len(strings.Split(s, ";"))-1 && i > 0 {
				continue // a trailing ";"
			}
			return nil, fmt.Errorf("--waves: wave %d is empty (waves are NAME=PATTERN[,PATTERN...] separated by ';')", i+1)
		}
		name, pats, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("--waves: wave %d %q has no '=': want NAME=PATTERN[,PATTERN...], e.g. canary=dev-eu1", i+1, part)
		}
		w := WaveSpec{Name: strings.TrimSpace(name)}
		for _, p := range strings.Split(pats, ",") {
			w.Workspaces = append(w.Workspaces, strings.TrimSpace(p))
		}
		waves = append(waves, w)
	}
	if len(waves) == 0 {
		return nil, errors.New("--waves: no wave given")
	}
	return waves, nil
}

// ReadFile reads a rollout.yaml; unknown fields are errors (a typo would
// otherwise silently drop an approval or a bake time).
func ReadFile(file string) (Spec, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return Spec{}, err
	}
	return Parse(data, file)
}

// Parse reads a rollout.yaml's bytes; file names it in errors.
func Parse(data []byte, file string) (Spec, error) {
	var s Spec
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return Spec{}, fmt.Errorf("%s: %w", file, err)
	}
	return s, nil
}

// Threshold is how many failed workspaces a wave tolerates: Count, or
// Percent of the wave's workspaces (rounded down) when Percent is set.
type Threshold struct {
	Count   int `json:"count,omitempty"`
	Percent int `json:"percent,omitempty"`
}

// ParseThreshold parses "2" or "10%".
func ParseThreshold(s string) (Threshold, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Threshold{}, nil
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 100 {
			return Threshold{}, fmt.Errorf("failureThreshold %q: a percentage must be 0%%–100%%", s)
		}
		return Threshold{Percent: n}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return Threshold{}, fmt.Errorf("failureThreshold %q: want a count (0, 1, ...) or a percentage (10%%)", s)
	}
	return Threshold{Count: n}, nil
}

// Allowed is how many of total workspaces may fail.
func (t Threshold) Allowed(total int) int {
	if t.Percent > 0 {
		return total * t.Percent / 100
	}
	return t.Count
}

// Exceeded reports whether failed failures out of total stop the rollout.
func (t Threshold) Exceeded(failed, total int) bool { return failed > t.Allowed(total) }

func (t Threshold) String() string {
	if t.Percent > 0 {
		return strconv.Itoa(t.Percent) + "%"
	}
	return strconv.Itoa(t.Count)
}

// Plan is a resolved rollout: every wave with the workspaces it takes, in
// order. It is what the workflow carries out.
type Plan struct {
	Name          string `json:"name"`
	Waves         []Wave `json:"waves"`
	UndoOnFailure bool   `json:"undoOnFailure,omitempty"`
}

// Wave is one resolved wave.
type Wave struct {
	Name       string   `json:"name"`
	Workspaces []string `json:"workspaces"`
	// MaxParallel is at least 1 and at most len(Workspaces).
	MaxParallel      int           `json:"maxParallel"`
	Approval         bool          `json:"approval,omitempty"`
	Bake             time.Duration `json:"bake,omitempty"`
	FailureThreshold Threshold     `json:"failureThreshold,omitzero"`
}

// Workspaces lists every workspace of the plan, wave by wave.
func (p Plan) Workspaces() []string {
	var out []string
	for _, w := range p.Waves {
		out = append(out, w.Workspaces...)
	}
	return out
}

// Resolve checks s and resolves its waves against the workspaces that exist.
// Every error names the wave and the field.
func Resolve(s Spec, existing []string) (Plan, error) {
	if err := CheckName(s.Name); err != nil {
		return Plan{}, err
	}
	if len(s.Waves) == 0 {
		return Plan{}, errors.New("waves: a rollout needs at least one wave")
	}
	if len(s.Waves) > MaxWaves {
		return Plan{}, fmt.Errorf("waves: %d waves, at most %d", len(s.Waves), MaxWaves)
	}
	known := slices.Clone(existing)
	slices.Sort(known)
	known = slices.Compact(known)
	plan := Plan{Name: s.Name, UndoOnFailure: s.UndoOnFailure}
	takenBy := map[string]string{}
	// left: the matches a percentage wave left, by workspace, for a later
	// wave to take.
	left := map[string]string{}
	seen := map[string]bool{}
	for i, ws := range s.Waves {
		at := fmt.Sprintf("waves[%d]", i)
		if ws.Name == "" {
			return Plan{}, fmt.Errorf("%s.name: a wave needs a name", at)
		}
		at = fmt.Sprintf("wave %q", ws.Name)
		if !waveNameRE.MatchString(ws.Name) {
			return Plan{}, fmt.Errorf("%s: name must be lower-case letters, digits, '.', '-', '_', or N%%", at)
		}
		if seen[ws.Name] {
			return Plan{}, fmt.Errorf("%s: two waves have this name", at)
		}
		seen[ws.Name] = true
		opts, err := options(ws.WaveOptions, s.Defaults, at)
		if err != nil {
			return Plan{}, err
		}
		matches, err := match(ws.Workspaces, known, at)
		if err != nil {
			return Plan{}, err
		}
		var take []string
		switch pct, isPct := percent(ws.Name); {
		case ws.Name == "rest":
			for _, m := range matches {
				if takenBy[m] == "" {
					take = append(take, m)
				}
			}
		default:
			for _, m := range matches {
				if by := takenBy[m]; by != "" {
					return Plan{}, fmt.Errorf("%s: workspace %s is matched by wave %q too (a workspace may be in one wave only; a wave named \"rest\" takes only what earlier waves left)", at, m, by)
				}
			}
			take = matches
			if isPct {
				if pct < 1 || pct > 100 {
					return Plan{}, fmt.Errorf("%s: a percentage wave takes 1%%–100%%", at)
				}
				n := (len(matches)*pct + 99) / 100
				take = matches[:n]
				for _, m := range matches[n:] {
					left[m] = ws.Name
				}
			}
		}
		if len(take) == 0 {
			return Plan{}, fmt.Errorf("%s: takes no workspace (workspaces %s match only workspaces earlier waves took)", at, strings.Join(ws.Workspaces, ", "))
		}
		for _, m := range take {
			takenBy[m] = ws.Name
			delete(left, m)
		}
		if len(plan.Workspaces())+len(take) > MaxWorkspaces {
			return Plan{}, fmt.Errorf("%s: the rollout would take more than %d workspaces", at, MaxWorkspaces)
		}
		opts.Workspaces = take
		opts.Name = ws.Name
		if opts.MaxParallel == 0 || opts.MaxParallel > len(take) {
			opts.MaxParallel = len(take)
		}
		plan.Waves = append(plan.Waves, opts)
	}
	if len(left) > 0 {
		var names []string
		for m, by := range left {
			names = append(names, fmt.Sprintf("%s (left by wave %q)", m, by))
		}
		slices.Sort(names)
		return Plan{}, fmt.Errorf("waves: no later wave takes %s; add a wave such as rest=<pattern>", strings.Join(names, ", "))
	}
	return plan, nil
}

func percent(name string) (int, bool) {
	p, ok := strings.CutSuffix(name, "%")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return 0, false
	}
	return n, true
}

// options merges a wave's options over the defaults and checks them.
func options(o, def WaveOptions, at string) (Wave, error) {
	var w Wave
	w.MaxParallel = o.MaxParallel
	if w.MaxParallel == 0 {
		w.MaxParallel = def.MaxParallel
	}
	if w.MaxParallel < 0 {
		return w, fmt.Errorf("%s: maxParallel %d: want 1 or more (0: the whole wave at once)", at, w.MaxParallel)
	}
	switch {
	case o.Approval != nil:
		w.Approval = *o.Approval
	case def.Approval != nil:
		w.Approval = *def.Approval
	}
	bake := o.Bake
	if bake == "" {
		bake = def.Bake
	}
	if bake != "" {
		d, err := time.ParseDuration(bake)
		if err != nil || d < 0 || d > MaxBake {
			return w, fmt.Errorf("%s: bake %q: want a duration from 0s to %s, e.g. 10m", at, bake, MaxBake)
		}
		w.Bake = d
	}
	th := o.FailureThreshold
	if th == "" {
		th = def.FailureThreshold
	}
	t, err := ParseThreshold(th)
	if err != nil {
		return w, fmt.Errorf("%s: %w", at, err)
	}
	w.FailureThreshold = t
	return w, nil
}

// match resolves patterns against known (sorted), in name order, each
// workspace once.
func match(patterns, known []string, at string) ([]string, error) {
	if len(patterns) == 0 {
		return nil, fmt.Errorf("%s: workspaces: name at least one workspace or glob", at)
	}
	hit := map[string]bool{}
	for _, p := range patterns {
		if p == "" {
			return nil, fmt.Errorf("%s: workspaces: an empty pattern", at)
		}
		if _, err := path.Match(p, ""); err != nil || strings.Contains(p, "/") {
			return nil, fmt.Errorf("%s: workspaces: pattern %q is not a valid glob (*, ?, [a-z]; no '/')", at, p)
		}
		if !strings.ContainsAny(p, `*?[\`) {
			if !slices.Contains(known, p) {
				return nil, fmt.Errorf("%s: workspaces: workspace %q does not exist (kumo workspace list)", at, p)
			}
			hit[p] = true
			continue
		}
		n := 0
		for _, k := range known {
			if ok, _ := path.Match(p, k); ok {
				hit[k] = true
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("%s: workspaces: pattern %q matches no workspace (kumo workspace list)", at, p)
		}
	}
	out := make([]string, 0, len(hit))
	for _, k := range known {
		if hit[k] {
			out = append(out, k)
		}
	}
	return out, nil
}

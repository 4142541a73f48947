package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/input"
	"github.com/kumoproj/kumo/engine/resid"
)

// Operations are the runs POST runs starts, in kumo's words.
var Operations = []string{"generate", "preview", "apply", "destroy", "rollback", "drift-check"}

// RunRequest is the body of POST /api/v1/runs: the operation, what it runs
// on, and the options the CLI has.
type RunRequest struct {
	Operation string `json:"operation"`
	Project   string `json:"project"`
	Workspace string `json:"workspace"`
	// Stack names the stack (for the run's listing); StackDir is a stack
	// directory on the server, under its stack roots, to generate from.
	Stack    string `json:"stack,omitempty"`
	StackDir string `json:"stackDir,omitempty"`
	// Source is a git source (kumo source add) to generate from, at the
	// commit its ref is at when the run starts, or at Commit. A preview or
	// apply naming no source, stackDir or spec uses the workspace's default
	// source (sources.default).
	Source string `json:"source,omitempty"`
	Commit string `json:"commit,omitempty"`
	// Spec is the resource Spec: a JSON object, or a string holding the
	// Spec's YAML or JSON (preview, apply).
	Spec json.RawMessage `json:"spec,omitempty"`
	// Approval is "required" (default: the run waits for POST
	// runs/{id}/approve) or "auto" (apply, destroy, rollback).
	Approval        string `json:"approval,omitempty"`
	ApprovalTimeout string `json:"approvalTimeout,omitempty"`
	Parallelism     int    `json:"parallelism,omitempty"`
	// Wait is "healthy" (default) or "applied"; Timeout bounds each
	// resource's wait (apply, rollback).
	Wait              string `json:"wait,omitempty"`
	Timeout           string `json:"timeout,omitempty"`
	RollbackOnFailure bool   `json:"rollbackOnFailure,omitempty"`
	ForceConflicts    bool   `json:"forceConflicts,omitempty"`
	// Revision is the revision a rollback restores (default: the last
	// succeeded one before the latest); AllowFailed lets it be a failed one.
	Revision    int  `json:"revision,omitempty"`
	AllowFailed bool `json:"allowFailed,omitempty"`
	// Mode is a drift check's: "warn" (default) or "remediate".
	Mode             string `json:"mode,omitempty"`
	GeneratorTimeout string `json:"generatorTimeout,omitempty"`
	// Targets narrow a preview, apply or destroy to these resources (an ID,
	// kind/name or a glob each) and what they depend on; TargetDependents
	// keeps what depends on them too (kumo apply --target).
	Targets          []string `json:"targets,omitempty"`
	TargetDependents bool     `json:"targetDependents,omitempty"`
	// AllowProtectedDelete lets an apply, destroy or rollback delete
	// resources whose delete policy is protect; the run refuses it to
	// anyone but an admin of the project/workspace.
	AllowProtectedDelete bool `json:"allowProtectedDelete,omitempty"`
	// Version and Message name the release an apply makes (kumo apply
	// --version, --message); a rollback takes a message.
	Version string `json:"version,omitempty"`
	Message string `json:"message,omitempty"`
	// Queue puts an apply, destroy or rollback in the stack's run queue
	// instead of refusing it while another run holds the stack (kumo apply
	// --queue); without it, the workspace's runs.queue decides.
	Queue *bool `json:"queue,omitempty"`
}

// runOptions are a RunRequest checked and parsed.
type runOptions struct {
	RunRequest
	spec                                       *engine.Spec
	approvalTimeout, timeout, generatorTimeout time.Duration
}

// Defaults of the options, the CLI's.
const (
	defaultParallelism     = 10
	defaultApprovalTimeout = 24 * time.Hour
	defaultWaitTimeout     = 5 * time.Minute
)

// parseRunRequest decodes and checks a POST runs body: an unknown field, an
// option the operation does not take or a bad value is an error naming the
// field.
func parseRunRequest(body []byte) (*runOptions, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var o runOptions
	if err := dec.Decode(&o.RunRequest); err != nil {
		return nil, fmt.Errorf("body: %w", err)
	}
	if dec.More() {
		return nil, errors.New("body: more than one JSON value")
	}
	r := &o.RunRequest
	if !slices.Contains(Operations, r.Operation) {
		return nil, fmt.Errorf("operation %q: want one of %s", r.Operation, strings.Join(Operations, ", "))
	}
	for _, f := range []struct{ name, v string }{{"project", r.Project}, {"workspace", r.Workspace}} {
		if f.v == "" {
			return nil, fmt.Errorf("%s: required", f.name)
		}
	}
	// Which fields each operation takes: any other set is an error, not
	// quietly ignored.
	takes := map[string][]string{
		"generate":    {"stack", "stackDir", "generatorTimeout"},
		"preview":     {"stack", "stackDir", "source", "commit", "spec", "parallelism", "forceConflicts", "generatorTimeout", "targets", "targetDependents"},
		"apply":       {"stack", "stackDir", "source", "commit", "spec", "parallelism", "forceConflicts", "generatorTimeout", "approval", "approvalTimeout", "wait", "timeout", "rollbackOnFailure", "targets", "targetDependents", "allowProtectedDelete", "version", "message", "queue"},
		"destroy":     {"parallelism", "approval", "approvalTimeout", "targets", "targetDependents", "allowProtectedDelete", "queue"},
		"rollback":    {"parallelism", "forceConflicts", "approval", "approvalTimeout", "wait", "timeout", "revision", "allowFailed", "allowProtectedDelete", "message", "queue"},
		"drift-check": {"parallelism", "mode"},
	}[r.Operation]
	set := map[string]bool{
		"stack": r.Stack != "", "stackDir": r.StackDir != "", "source": r.Source != "", "commit": r.Commit != "", "spec": len(r.Spec) > 0, "parallelism": r.Parallelism != 0,
		"forceConflicts": r.ForceConflicts, "generatorTimeout": r.GeneratorTimeout != "", "approval": r.Approval != "",
		"approvalTimeout": r.ApprovalTimeout != "", "wait": r.Wait != "", "timeout": r.Timeout != "",
		"rollbackOnFailure": r.RollbackOnFailure, "revision": r.Revision != 0, "allowFailed": r.AllowFailed, "mode": r.Mode != "",
		"targets": len(r.Targets) > 0, "targetDependents": r.TargetDependents, "allowProtectedDelete": r.AllowProtectedDelete,
		"version": r.Version != "", "message": r.Message != "", "queue": r.Queue != nil,
	}
	for _, f := range sortedKeys(set) {
		if set[f] && !slices.Contains(takes, f) {
			return nil, fmt.Errorf("%s: a %s run does not take it", f, r.Operation)
		}
	}
	if err := (engine.ReleaseLabel{Version: r.Version, Message: r.Message}).Validate(); err != nil {
		// The fields are named as the flags are, less the dashes.
		return nil, errors.New(strings.TrimPrefix(err.Error(), "--"))
	}
	switch {
	case r.Operation == "generate" && r.StackDir == "":
		return nil, errors.New("stackDir: a generate run needs the stack directory to generate from")
	case (r.Operation == "preview" || r.Operation == "apply") && btoi(r.StackDir != "")+btoi(len(r.Spec) > 0)+btoi(r.Source != "") > 1:
		return nil, fmt.Errorf("spec, stackDir, source: a %s run takes one of them (a Spec, a stack directory on the server, or a git source to generate one from; none: the workspace's default source)", r.Operation)
	case r.Commit != "" && (r.StackDir != "" || len(r.Spec) > 0):
		return nil, errors.New("commit: pins the commit of a git source (source, or the workspace's default source); a spec or stackDir has none")
	case r.Parallelism < 0:
		return nil, fmt.Errorf("parallelism %d: want 1 or more", r.Parallelism)
	case r.Revision < 0:
		return nil, fmt.Errorf("revision %d: want 1 or more", r.Revision)
	case r.TargetDependents && len(r.Targets) == 0:
		return nil, errors.New("targetDependents: needs targets")
	}
	for i, t := range r.Targets {
		if _, err := resid.ParseTarget(t); err != nil {
			return nil, fmt.Errorf("targets[%d]: %w", i, err)
		}
	}
	if r.Parallelism == 0 {
		r.Parallelism = defaultParallelism
	}
	switch r.Approval {
	case "", "required", "auto":
	default:
		return nil, fmt.Errorf("approval %q: want required or auto", r.Approval)
	}
	switch r.Wait {
	case "", engine.WaitHealthy, engine.WaitApplied:
	default:
		return nil, fmt.Errorf("wait %q: want %s or %s", r.Wait, engine.WaitHealthy, engine.WaitApplied)
	}
	switch r.Mode {
	case "", "warn", "remediate":
	default:
		return nil, fmt.Errorf("mode %q: want warn or remediate", r.Mode)
	}
	var err error
	if o.approvalTimeout, err = duration("approvalTimeout", r.ApprovalTimeout, defaultApprovalTimeout); err != nil {
		return nil, err
	}
	if o.timeout, err = duration("timeout", r.Timeout, defaultWaitTimeout); err != nil {
		return nil, err
	}
	if o.generatorTimeout, err = duration("generatorTimeout", r.GeneratorTimeout, 0); err != nil {
		return nil, err
	}
	if len(r.Spec) > 0 {
		if o.spec, err = parseSpec(r.Spec); err != nil {
			return nil, err
		}
	}
	return &o, nil
}

// parseSpec reads the spec field: an object, or a string holding YAML or
// JSON, with the bounds and checks of a spec file.
func parseSpec(raw json.RawMessage) (*engine.Spec, error) {
	text := []byte(raw)
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("spec: %w", err)
		}
		text = []byte(s)
	}
	spec, err := input.ParseSpec(text, "spec")
	if err != nil {
		return nil, err
	}
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	return spec, nil
}

func duration(field, s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s %q: want a positive duration such as 90s, 10m or 24h", field, s)
	}
	return d, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// fingerprint identifies what a run request asks, whatever its spacing and
// field order: its fields re-encoded, the spec as parsed.
func (o *runOptions) fingerprint() string {
	r := o.RunRequest
	r.Spec = nil
	data, _ := json.Marshal(r)
	h := sha256.New()
	h.Write(data)
	if o.spec != nil {
		h.Write([]byte(engine.HashSpec(o.spec)))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

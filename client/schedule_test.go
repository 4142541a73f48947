package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/contrib/envconfig"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	k8s "k8s.io/client-go/kubernetes"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/internal/keyring"
	"github.com/kumoproj/kumo/internal/localcluster/localclustertest"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server/embedded"
	"github.com/kumoproj/kumo/worker"
)

// scheduleEnv is a stack applied to the local apiserver (a Namespace and a
// ConfigMap), on a Temporal that keeps running (an embedded server used as an
// external one, with its own worker), and a webhook receiver.
type scheduleEnv struct {
	t        *testing.T
	c        *Client
	ns       string
	kube     k8s.Interface
	settings runspec.RuntimeSettings
	home     string
	address  string
	hook     *hook
}

func newScheduleEnv(t *testing.T) *scheduleEnv {
	cluster := localclustertest.Start(t)
	ctx := context.Background()
	e := &scheduleEnv{t: t, ns: localclustertest.Namespace(t), settings: runspec.RuntimeSettings{Kubeconfig: cluster.Kubeconfig}, home: t.TempDir()}
	srv, err := embedded.Start(ctx, embedded.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	e.address = srv.Address()
	// A cluster's clients and workers share a codec key: the schedules'
	// action inputs and memos go through it like every other payload.
	keyFile := filepath.Join(t.TempDir(), "fleet.keys")
	if _, err := keyring.AddKey(keyFile); err != nil {
		t.Fatal(err)
	}
	owner := srv.PKI().OwnerCert()
	conn := envconfig.ClientConfigProfile{TLS: &envconfig.ClientConfigTLS{ClientCertPath: owner.CertFile, ClientKeyPath: owner.KeyFile, ServerCACertPath: srv.PKI().CAFile()}}
	if e.c, err = Open(Options{Home: e.home, TemporalAddress: srv.Address(), CodecKeyFile: keyFile, Connection: conn}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.c.Close() })
	tc, err := e.c.dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := worker.New(tc, e.c.backend)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	e.kube = k8s.NewForConfigOrDie(cluster.RESTConfig())
	e.hook = newHook(t)
	spec := &engine.Spec{Resources: []engine.Resource{
		{ID: "v1:Namespace:" + e.ns, Type: engine.Kubernetes, Attributes: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": e.ns}}},
		{ID: "v1:ConfigMap:" + e.ns + ":c", Type: engine.Kubernetes, DependsOn: []string{"v1:Namespace:" + e.ns}, Attributes: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": e.ns}, "data": map[string]any{"k": "v"}}},
	}}
	run, err := e.c.Apply(ctx, Request{Project: e.ns, Workspace: "default", Spec: spec, AutoApprove: true, Settings: e.settings})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	return e
}

// workspaceDrift sets the default workspace's drift config, with the webhook.
func (e *scheduleEnv) workspaceDrift(cfg drift.Config) {
	e.t.Helper()
	// A loopback receiver must be allowed explicitly; every POST is signed.
	e.t.Setenv("KUMO_WEBHOOK_TEST_SECRET", "s3cret")
	cfg.Webhook = drift.Webhook{URL: e.hook.srv.URL, AllowPrivate: true, SecretEnv: "KUMO_WEBHOOK_TEST_SECRET"}
	if err := e.c.UpdateWorkspace(context.Background(), &engine.Workspace{Name: engine.DefaultWorkspace, Drift: cfg}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *scheduleEnv) request(mode string) ScheduleRequest {
	return ScheduleRequest{DriftRequest: DriftRequest{Project: e.ns, Workspace: "default", Settings: e.settings, Mode: mode}, Every: time.Hour}
}

// editConfigMap changes data.k out of band, as field manager "editor".
func (e *scheduleEnv) editConfigMap(value string) {
	e.t.Helper()
	patch := fmt.Sprintf(`{"data":{"k":%q}}`, value)
	if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Patch(context.Background(), "c", types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "editor"}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *scheduleEnv) liveValue() string {
	e.t.Helper()
	cm, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(context.Background(), "c", metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return cm.Data["k"]
}

// trigger starts a check through the schedule and returns its report.
func (e *scheduleEnv) trigger() *drift.Report {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	run, err := e.c.TriggerDriftCheck(ctx, e.ns, "default")
	if err != nil {
		e.t.Fatal(err)
	}
	if !strings.HasPrefix(run.WorkflowID, "kumo-drift/"+e.ns+"/default/scheduled") {
		e.t.Errorf("check ID %s", run.WorkflowID)
	}
	r, err := e.c.WaitDriftCheck(ctx, run, e.ns, "default")
	if err != nil {
		e.t.Fatal(err)
	}
	what := "no remediation"
	if r.Remediation != nil {
		what = r.Remediation.State + " " + r.Remediation.Outcome
	}
	e.t.Logf("trigger to report: %s (%s)", time.Since(start).Round(time.Millisecond), what)
	return r
}

// hook is a webhook receiver that keeps the events it got.
type hook struct {
	srv    *httptest.Server
	mu     sync.Mutex
	events []drift.Event
}

func newHook(t *testing.T) *hook {
	h := &hook{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var e drift.Event
		if err := json.NewDecoder(r.Body).Decode(&e); err != nil || r.Header.Get("X-Kumo-Event-Id") != e.ID() {
			t.Errorf("webhook body: %v, event ID header %q", err, r.Header.Get("X-Kumo-Event-Id"))
		}
		h.mu.Lock()
		h.events = append(h.events, e)
		h.mu.Unlock()
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// take returns the event types received since the last take.
func (h *hook) take() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, e := range h.events {
		out = append(out, e.Event)
	}
	h.events = nil
	return strings.Join(out, ",")
}

// TestDriftSchedule: a schedule needs a Temporal that keeps running; once
// created it fires by itself at its 1-minute interval; creating it again is a
// clear error; describe and list show it; a triggered check reports the
// drift (the webhook hears of it once, and not again for the same drift);
// pause and unpause (with a note), update and delete behave.
func TestDriftSchedule(t *testing.T) {
	e := newScheduleEnv(t)
	ctx := context.Background()
	e.workspaceDrift(drift.Config{})

	oneShot, err := Open(Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer oneShot.Close()
	if _, err := oneShot.CreateDriftSchedule(ctx, e.request("")); err == nil || !strings.Contains(err.Error(), "kumo server") {
		t.Fatalf("one-shot kumo created a schedule: %v", err)
	}
	if oneShot.server != nil {
		t.Error("the one-shot client started its own server for a schedule")
	}
	bad := e.request("")
	bad.Every = 30 * time.Second
	if _, err := e.c.CreateDriftSchedule(ctx, bad); err == nil || !strings.Contains(err.Error(), "shortest interval is 1m") {
		t.Errorf("30s interval: %v", err)
	}

	req := e.request("")
	req.Every = time.Minute
	s, err := e.c.CreateDriftSchedule(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != "kumo-drift/"+e.ns+"/default" || s.Every != "1m0s" || s.Mode != drift.ModeWarn || s.Paused || len(s.Next) == 0 {
		t.Fatalf("created %+v", s)
	}
	atItsPhase(t, s)
	var exists *ScheduleExistsError
	if _, err := e.c.CreateDriftSchedule(ctx, req); !errors.As(err, &exists) {
		t.Fatalf("second create: %v", err)
	}
	// It fires by itself: wait for its first check (at its phase of the
	// minute, so within a minute).
	deadline := time.Now().Add(3 * time.Minute)
	for len(s.Recent) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no scheduled check within 3 minutes: %+v", s)
		}
		time.Sleep(time.Second)
		if s, err = e.c.DescribeDriftSchedule(ctx, e.ns, "default"); err != nil {
			t.Fatal(err)
		}
	}
	first, err := e.c.WaitDriftCheck(ctx, &Run{c: e.c, WorkflowID: s.Recent[0].WorkflowID, RunID: s.Recent[0].RunID}, e.ns, "default")
	if err != nil || first.Drifted() {
		t.Fatalf("scheduled check: %+v, %v", first, err)
	}

	// Slow it down for the rest of the test: triggered checks only.
	if s, err = e.c.UpdateDriftSchedule(ctx, e.request("")); err != nil || s.Every != "1h0m0s" {
		t.Fatalf("update: %+v, %v", s, err)
	}
	atItsPhase(t, s)
	list, err := e.c.ListDriftSchedules(ctx, e.ns)
	if err != nil || len(list) != 1 || list[0].ID != s.ID || list[0].Every != "1h0m0s" {
		t.Fatalf("list: %+v, %v", list, err)
	}

	e.editConfigMap("w")
	r := e.trigger()
	if r.Counts.Drifted != 1 || r.Resources[0].Fields[0].Manager != "editor" || r.Resources[0].Fields[0].Live != "w" {
		t.Fatalf("triggered check: %+v", r)
	}
	if got := e.hook.take(); got != drift.EventDetected {
		t.Errorf("webhook after new drift: %q", got)
	}
	if r = e.trigger(); r.Resources[0].ConsecutiveChecks != 2 {
		t.Fatalf("second check: %+v", r)
	}
	if got := e.hook.take(); got != "" {
		t.Errorf("webhook after the same drift: %q", got)
	}
	if e.liveValue() != "w" {
		t.Error("a warn-mode check changed the ConfigMap")
	}

	if err := e.c.ChangeDriftSchedule(ctx, e.ns, "default", SchedulePause, "maintenance"); err != nil {
		t.Fatal(err)
	}
	if s, err = e.c.DescribeDriftSchedule(ctx, e.ns, "default"); err != nil || !s.Paused || s.Note != "maintenance" || s.LastReport == nil || s.LastReport.RunID != r.RunID {
		t.Fatalf("paused: %+v, %v", s, err)
	}
	if err := e.c.ChangeDriftSchedule(ctx, e.ns, "default", ScheduleUnpause, ""); err != nil {
		t.Fatal(err)
	}
	if s, err = e.c.DescribeDriftSchedule(ctx, e.ns, "default"); err != nil || s.Paused {
		t.Fatalf("unpaused: %+v, %v", s, err)
	}
	if err := e.c.ChangeDriftSchedule(ctx, e.ns, "default", ScheduleDelete, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.DescribeDriftSchedule(ctx, e.ns, "default"); err == nil || !strings.Contains(err.Error(), "no drift schedule") {
		t.Fatalf("describe after delete: %v", err)
	}
}

// atItsPhase fails t unless each of s's next checks falls at its schedule's
// phase of the interval (runspec.SchedulePhase), not at the interval's start.
func atItsPhase(t *testing.T, s *DriftSchedule) {
	t.Helper()
	every, err := time.ParseDuration(s.Every)
	if err != nil {
		t.Fatalf("schedule %s: every %q: %v", s.ID, s.Every, err)
	}
	phase := runspec.SchedulePhase(s.ID, every)
	if len(s.Next) == 0 {
		t.Fatalf("schedule %s has no next check", s.ID)
	}
	for _, n := range s.Next {
		if got := time.Duration(n.UnixNano() % int64(every)); got != phase {
			t.Errorf("schedule %s: next check %s is %s into its %s interval, want its phase %s", s.ID, n.UTC().Format(time.RFC3339), got, every, phase)
		}
	}
}

// TestDriftRemediate: in remediate mode a triggered check that finds a
// ConfigMap changed by another field manager reports the field and manager,
// and puts it back with a new revision (operation remediate, its reason naming
// the check); the next check is in sync. A drift made again after every
// remediation stops after three: the check is drift-stuck and remediates no
// more. The webhook hears of each change of state once.
func TestDriftRemediate(t *testing.T) {
	e := newScheduleEnv(t)
	ctx := context.Background()
	e.workspaceDrift(drift.Config{Remediation: drift.Policy{Backoff: drift.Duration(time.Millisecond), MaxBackoff: drift.Duration(time.Millisecond)}})
	if _, err := e.c.CreateDriftSchedule(ctx, e.request(drift.ModeRemediate)); err != nil {
		t.Fatal(err)
	}

	e.editConfigMap("w")
	r := e.trigger()
	if r.Counts.Drifted != 1 || r.Resources[0].Fields[0].Path != "/data/k" || r.Resources[0].Fields[0].Manager != "editor" {
		t.Fatalf("check: %+v", r)
	}
	st := r.Remediation
	if st == nil || st.State != drift.Remediating || st.Outcome != drift.OutcomeSucceeded || st.Revision != 2 || st.Attempts != 1 {
		t.Fatalf("remediation: %+v", st)
	}
	rel, err := e.c.backend.GetRelease(ctx, e.ns, "default", 2)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Operation != engine.OperationRemediate || rel.Phase != engine.PhaseSucceeded || !strings.Contains(rel.Reason, r.RunID) {
		t.Errorf("release 2: %s %s reason %q", rel.Operation, rel.Phase, rel.Reason)
	}
	if v := e.liveValue(); v != "v" {
		t.Errorf("live value after remediation: %q", v)
	}
	if got := e.hook.take(); got != "drift-detected,remediation-started,remediated" {
		t.Errorf("webhook: %q", got)
	}
	if r = e.trigger(); r.Drifted() || r.Revision != 2 || r.Remediation != nil {
		t.Fatalf("check after remediation: %+v", r)
	}
	if got := e.hook.take(); got != drift.EventResolved {
		t.Errorf("webhook: %q", got)
	}

	// The drift comes back after every remediation.
	for attempt := 1; attempt <= 3; attempt++ {
		e.editConfigMap(fmt.Sprintf("again-%d", attempt))
		r = e.trigger()
		if st := r.Remediation; st == nil || st.State != drift.Remediating || st.Attempts != attempt || st.Outcome != drift.OutcomeSucceeded {
			t.Fatalf("attempt %d: %+v", attempt, st)
		}
	}
	e.editConfigMap("stuck")
	r = e.trigger()
	if st := r.Remediation; st == nil || st.State != drift.Stuck || st.Attempts != 3 || st.Outcome != "" {
		t.Fatalf("fourth drift: %+v", st)
	}
	if v := e.liveValue(); v != "stuck" {
		t.Errorf("a stuck check remediated: live %q", v)
	}
	if !strings.Contains(r.Summary(), "drift-stuck after 3 remediations") {
		t.Errorf("summary %q", r.Summary())
	}
	latest, err := e.c.backend.LatestRelease(ctx, e.ns, "default")
	if err != nil || latest.Revision != 5 {
		t.Fatalf("latest release %+v, %v (want revision 5: the first and three remediations after it)", latest, err)
	}
	runs, err := e.c.ListRuns(ctx, RunFilter{Project: e.ns, Operation: "drift", Limit: 1})
	if err != nil || len(runs) != 1 || runs[0].Status != string(drift.Stuck) {
		t.Errorf("run list of the stuck check: %+v, %v", runs, err)
	}
	// The resource stays drifted from check to check (each finds it changed
	// again), so only the first is news; then each remediation, and stuck once.
	if got := e.hook.take(); got != "drift-detected,remediation-started,remediated,remediation-started,remediated,remediation-started,remediated,drift-stuck" {
		t.Errorf("webhook during the stuck loop: %q", got)
	}
	if r = e.trigger(); r.Remediation == nil || r.Remediation.State != drift.Stuck {
		t.Fatalf("still stuck: %+v", r.Remediation)
	}
	if got := e.hook.take(); got != "" {
		t.Errorf("webhook while stuck: %q", got)
	}
}

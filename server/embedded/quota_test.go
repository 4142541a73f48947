package embedded

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/internal/pki"
	"github.com/kumoproj/kumo/internal/tlstest"
	"github.com/kumoproj/kumo/runspec"
)

// TestQuotaOfRunsInFlight: the frontend files each run under the subject
// that started it (whatever the client said) and counts them through
// visibility: a deployer with one run in flight and a quota of one is
// refused a second start, naming the quota, until the first ends; the home's
// owner is not limited.
func TestQuotaOfRunsInFlight(t *testing.T) {
	s, bob := startAsOperator(t, "grants:\n  - role: deployer\n    subjects: [bob]\n    scopes: [\"shop/*\"]\n", "bob", Options{Quota: authz.Quota{InFlight: 1}})
	ctx := ctxTimeout(t, time.Minute)
	apply := func(c client.Client, workspace string) error {
		// Nobody works on these runs: they stay running. The starter the
		// client claims is replaced by the frontend.
		_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: runspec.MutatingWorkflowID("shop", workspace), TaskQueue: runspec.TaskQueue,
			TypedSearchAttributes: temporal.NewSearchAttributes(temporal.NewSearchAttributeKeyKeyword(runspec.AttrStartedBy).ValueSet("someone-else")),
		}, runspec.ApplyWorkflow)
		return err
	}
	started := []string{"dev"}
	if err := apply(bob, "dev"); err != nil {
		t.Fatalf("bob's first run: %v", err)
	}
	// Visibility may lag a start by a moment, letting a run or two more in.
	var refused error
	for i := 1; i <= 20 && refused == nil; i++ {
		w := fmt.Sprintf("w%d", i)
		if refused = apply(bob, w); refused == nil {
			started = append(started, w)
			time.Sleep(200 * time.Millisecond)
		}
	}
	var precondition *serviceerror.FailedPrecondition
	if !errors.As(refused, &precondition) || !strings.Contains(refused.Error(), "bob has reached its quota of 1 runs in flight") {
		t.Fatalf("bob's runs beyond his quota: %v, want FailedPrecondition naming the quota", refused)
	}
	owner, err := client.Dial(client.Options{HostPort: s.Address(), Namespace: s.Namespace(), Logger: quietSDKLogger(), ConnectionOptions: ownerConnection(t, s)})
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	for _, w := range []string{"a", "b"} {
		if err := apply(owner, w); err != nil {
			t.Fatalf("the owner is limited: %v", err)
		}
	}
	for _, w := range started {
		if err := owner.TerminateWorkflow(ctx, runspec.MutatingWorkflowID("shop", w), "", "done"); err != nil {
			t.Fatal(err)
		}
	}
	var again error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if again = apply(bob, "qa"); again == nil {
			break
		}
	}
	if again != nil {
		t.Fatalf("bob's run after his others ended: %v", again)
	}
}

// startAsOperator starts a server with opts under an operator's CA and a
// policy file holding policy, and dials it as subject with a certificate of
// that CA.
func startAsOperator(t *testing.T, policy, subject string, opts Options) (*Server, client.Client) {
	t.Helper()
	ca := tlstest.NewCA(t, "operator")
	srvPair, pair := ca.Issue(t, "frontend"), ca.Issue(t, subject)
	opts.Dir = t.TempDir()
	opts.PolicyFile = filepath.Join(opts.Dir, "policy.yaml")
	if err := os.WriteFile(opts.PolicyFile, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	opts.TLS = &TLS{CertFile: srvPair.CertFile, KeyFile: srvPair.KeyFile, CAFile: ca.CertFile}
	s, err := Start(ctxTimeout(t, time.Minute), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	tlsCfg, err := s.ClientTLS(pki.Pair{CertFile: pair.CertFile, KeyFile: pair.KeyFile})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(client.Options{HostPort: s.Address(), Namespace: s.Namespace(), Logger: quietSDKLogger(), ConnectionOptions: client.ConnectionOptions{TLS: tlsCfg}})
	if err != nil {
		t.Fatalf("%s connects: %v", subject, err)
	}
	t.Cleanup(func() { c.Close() })
	return s, c
}

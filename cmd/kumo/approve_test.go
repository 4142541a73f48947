package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// approvalSpec is the namespace and ConfigMap a with data k: value.
func (e *env) approvalSpec(value string) string {
	e.t.Helper()
	cm := strings.Replace(configMap(e.ns, "a", "dependsOn: [v1:Namespace:"+e.ns+"]"), "data: {k: v}", "data: {k: "+value+"}", 1)
	return e.writeSpec("spec-"+value+".yaml", "resources:\n"+namespace(e.ns)+cm)
}

// startAwaiting starts `kumo apply` without --yes (its prompt never answered:
// its input stays open, since the end of input is a no) and returns once
// revision awaits approval, with the run's ID and a func that waits for the
// apply to end.
func (e *env) startAwaiting(revision int, args ...string) (runID string, wait func() result) {
	e.t.Helper()
	// A file, not an io.Reader: exec then copies nothing, and the apply's end
	// is not held up by its open input.
	answer, answerWriter, err := os.Pipe()
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { answerWriter.Close() })
	_, wait = e.background(answer, append([]string{"apply"}, args...)...)
	answer.Close()
	waitFor(e.t, fmt.Sprintf("revision %d to await approval", revision), time.Minute, func() bool {
		rows := e.releases() // oldest first
		return len(rows) == revision && rows[revision-1].Phase == "awaiting-approval"
	})
	runID, _ = e.release(revision)["runID"].(string)
	return runID, wait
}

func (e *env) liveValue() (string, bool) {
	cm, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(context.Background(), "a", metav1.GetOptions{})
	if err != nil {
		return "", false
	}
	return cm.Data["k"], true
}

// checkFailed: revision failed with msg, as the apply that followed it said.
func (e *env) checkFailed(revision int, r result, msg string) {
	e.t.Helper()
	if r.code == 0 || !strings.Contains(r.stderr, msg) {
		e.t.Errorf("apply of revision %d: want a failure with %q: %s", revision, msg, r)
	}
	if rel := e.release(revision); rel["phase"] != "failed" || !strings.Contains(fmt.Sprint(rel["error"]), msg) {
		e.t.Errorf("revision %d is %v (%v), want failed with %q", revision, rel["phase"], rel["error"], msg)
	}
}

// TestApprovalFromAnotherProcess: applies started without --yes wait for
// approval (a durable timer in the run, not the prompt); other kumo processes
// reject, approve (refused for a digest that is not the plan's), and a live
// change between preview and approval makes the plan stale. Runs go on on a
// worker of a shared Temporal server, as with kumo server.
func TestApprovalFromAnotherProcess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.flags = temporalServer(t).flags()
	e.worker()

	// Rejected: the release fails with the reason, nothing is created.
	runID, wait := e.startAwaiting(1, "-f", e.approvalSpec("one"))
	if r := e.ok("reject", runID, "--reason", "not on a Friday"); !strings.Contains(r.stdout, "Rejected apply run "+runID) {
		t.Errorf("reject: %s", r)
	}
	e.checkFailed(1, wait(), "not on a Friday")
	if names := e.configMapNames(); len(names) != 0 {
		t.Errorf("a rejected apply created %v", names)
	}
	e.checkPeople(runID, 1, "rejected")
	e.fails([]string{"approve", runID}, "has ended")

	// Approved, after an approval of another plan was refused.
	spec := e.approvalSpec("one")
	var preview struct {
		Digest string `json:"digest"`
	}
	if err := json.Unmarshal([]byte(e.ok("preview", "-f", spec, "-o", "json").stdout), &preview); err != nil || !strings.HasPrefix(preview.Digest, "sha256:") {
		t.Fatalf("preview digest %q (%v)", preview.Digest, err)
	}
	runID, wait = e.startAwaiting(2, "-f", spec)
	e.fails([]string{"approve", "--digest", "sha256:0123456789ab"}, "does not match the plan awaiting approval")
	if rel := e.release(2); rel["phase"] != "awaiting-approval" {
		t.Errorf("after a refused approval revision 2 is %v, want still awaiting-approval", rel["phase"])
	}
	if r := e.ok("approve", runID, "--digest", preview.Digest); !strings.Contains(r.stdout, preview.Digest) {
		t.Errorf("approve: %s", r)
	}
	if r := wait(); r.code != 0 || !strings.Contains(r.stdout, "Plan digest: "+preview.Digest) {
		t.Errorf("approved apply: %s", r)
	}
	if v, ok := e.liveValue(); !ok || v != "one" {
		t.Errorf("live value %q (exists %v), want one", v, ok)
	}
	e.checkPeople(runID, 2, "approved")

	// Stale: someone changes the ConfigMap between the preview and the approval.
	runID, wait = e.startAwaiting(3, "-f", e.approvalSpec("two"))
	cm, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(context.Background(), "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "changed-live"
	if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.ok("approve", runID)
	r := wait()
	e.checkFailed(3, r, "plan is stale: approved 1 to update")
	if !strings.Contains(r.stderr, `data.k: approved "one" -> "two", now "changed-live" -> "two"`) {
		t.Errorf("the stale plan's message does not name the change: %s", r.stderr)
	}
	if v, _ := e.liveValue(); v != "changed-live" {
		t.Errorf("live value %q after a stale plan, want the live change kept", v)
	}

	// Nobody answers: the run fails at its approval timeout.
	_, wait = e.startAwaiting(4, "-f", e.approvalSpec("three"), "--approval-timeout", "3s")
	e.checkFailed(4, wait(), "not approved within 3s")
	e.fails([]string{"approve"}, "nothing to answer")
}

// TestApprovalOutlivesTheTerminal: with the embedded server, the apply waiting
// at its prompt is interrupted; the run keeps waiting in the Temporal database,
// and `kumo approve` in a new process resumes it, applies and follows it.
func TestApprovalOutlivesTheTerminal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	answer, answerWriter := io.Pipe()
	defer answerWriter.Close()
	cli, wait := e.background(answer, "apply", "-f", e.approvalSpec("one"))
	waitFor(t, "the apply to await approval", time.Minute, func() bool {
		return strings.Contains(e.run("release", "list").stdout, "awaiting-approval")
	})
	time.Sleep(500 * time.Millisecond) // the prompt shows on the next poll
	if err := cli.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the interrupt, not the end of input, ends the prompt
	answerWriter.Close()        // exec waits for stdin copying to end
	if r := wait(); r.code != 130 || !strings.Contains(r.stderr, "still awaits approval") {
		t.Fatalf("interrupted apply: %s", r)
	}
	if rows := e.releases(); len(rows) != 1 || rows[0].Phase != "awaiting-approval" {
		t.Fatalf("releases after the interrupt %+v, want one awaiting approval", rows)
	}
	r := e.ok("approve")
	if !strings.Contains(r.stdout, "Approved apply run") || !strings.Contains(r.stdout, "Release 1 succeeded") {
		t.Errorf("approve: %s", r)
	}
	if v, ok := e.liveValue(); !ok || v != "one" {
		t.Errorf("live value %q (exists %v), want one", v, ok)
	}
}

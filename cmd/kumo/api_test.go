package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kumoproj/kumo/internal/pki"
)

// apiClient drives kumo's HTTP API as curl would: plain net/http requests
// with a bearer token.
type apiClient struct {
	t     *testing.T
	base  string
	token string
}

type apiResponse struct {
	code   int
	header http.Header
	body   []byte
}

func (r apiResponse) String() string { return fmt.Sprintf("%d %s", r.code, r.body) }

// json decodes the body into a map.
func (r apiResponse) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("response %s is not a JSON object: %v", r, err)
	}
	return m
}

func (a *apiClient) do(method, path, body string, header ...string) apiResponse {
	a.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return apiResponse{code: resp.StatusCode, header: resp.Header, body: data}
}

// want fails the test unless the response has status code.
func (a *apiClient) want(r apiResponse, code int, what string) apiResponse {
	a.t.Helper()
	if r.code != code {
		a.t.Fatalf("%s: got %s, want %d", what, r, code)
	}
	return r
}

// start POSTs a run and returns its ID.
func (a *apiClient) start(body string, header ...string) string {
	a.t.Helper()
	r := a.want(a.do(http.MethodPost, "/api/v1/runs", body, header...), http.StatusAccepted, "POST runs "+body)
	m := r.json(a.t)
	id, _ := m["id"].(string)
	if id == "" || r.header.Get("Location") != "/api/v1/runs/"+id || m["statusUrl"] != "/api/v1/runs/"+id {
		a.t.Fatalf("POST runs: no id, Location or statusUrl: %s %v", r, r.header)
	}
	return id
}

// waitStatus polls GET runs/{id} until its status is one of want.
func (a *apiClient) waitStatus(id string, want ...string) map[string]any {
	a.t.Helper()
	var last map[string]any
	waitFor(a.t, fmt.Sprintf("run %s to be %s", id, strings.Join(want, " or ")), 2*time.Minute, func() bool {
		r := a.do(http.MethodGet, "/api/v1/runs/"+id, "")
		if r.code != http.StatusOK {
			a.t.Fatalf("GET runs/%s: %s", id, r)
		}
		last = r.json(a.t)
		for _, w := range want {
			if last["status"] == w {
				return true
			}
		}
		switch last["status"] {
		case "succeeded", "failed", "cancelled", "terminated", "timed-out":
			a.t.Fatalf("run %s ended %s, want %s: %s", id, last["status"], want, r)
		}
		time.Sleep(100 * time.Millisecond)
		return false
	})
	return last
}

func (a *apiClient) result(id string) map[string]any {
	a.t.Helper()
	return a.want(a.do(http.MethodGet, "/api/v1/runs/"+id+"/result", ""), http.StatusOK, "GET result of "+id).json(a.t)
}

// problem checks a problem+json answer: its status, type and detail.
func (a *apiClient) problem(r apiResponse, code int, typ string, detail ...string) map[string]any {
	a.t.Helper()
	if r.code != code || r.header.Get("Content-Type") != "application/problem+json" {
		a.t.Fatalf("got %s (%s), want a %d problem", r, r.header.Get("Content-Type"), code)
	}
	p := r.json(a.t)
	if p["type"] != "urn:kumo:problem:"+typ {
		a.t.Errorf("problem type %v, want %s: %s", p["type"], typ, r)
	}
	for _, d := range detail {
		if !strings.Contains(p["detail"].(string), d) {
			a.t.Errorf("problem detail lacks %q: %s", d, r)
		}
	}
	return p
}

func apiSpec(ns, value string) string {
	return fmt.Sprintf(`resources:
- id: v1:Namespace:%[1]s
  type: Kubernetes
  attributes: {apiVersion: v1, kind: Namespace, metadata: {name: %[1]s}}
- id: v1:ConfigMap:%[1]s:web
  type: Kubernetes
  dependsOn: [v1:Namespace:%[1]s]
  attributes:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: web, namespace: %[1]s}
    data: {greeting: %[2]s}
`, ns, value)
}

// TestHTTPAPI drives a kumo server's HTTP API with curl-level requests only:
// a workspace, a preview, an apply that awaits approval and is approved by
// its digest (a wrong digest refused), one rejected, one cancelled, and a
// destroy; results, logs (plain and followed), ETags, Idempotency-Key, and
// refusals: no credential 401, a viewer 403 naming who, what and where. The
// runs record the token's subject as who started and approved them.
func TestHTTPAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	policy := fmt.Sprintf("grants:\n  - role: admin\n    subjects: [\"token:ci\"]\n    scopes: [\"*/*\"]\n  - role: viewer\n    subjects: [\"token:look\"]\n    scopes: [\"%s/*\"]\n", e.project)
	if err := os.WriteFile(filepath.Join(e.home, "policy.yaml"), []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	ciToken := strings.TrimSpace(e.ok("token", "create", "--subject", "ci", "--ttl", "1h").stdout)
	viewToken := strings.TrimSpace(e.ok("token", "create", "--subject", "look", "--ttl", "1h").stdout)
	srv := e.startServer("--kumo-tokens", "--headless")
	if srv.info.APIURL == "" {
		t.Fatalf("server.json records no apiURL: %+v", srv.info)
	}
	anon := &apiClient{t: t, base: srv.info.APIURL}
	ci := &apiClient{t: t, base: srv.info.APIURL, token: ciToken}
	viewer := &apiClient{t: t, base: srv.info.APIURL, token: viewToken}

	anon.problem(anon.do(http.MethodGet, "/api/v1/runs", ""), http.StatusUnauthorized, "unauthenticated", "authentication required")
	bad := &apiClient{t: t, base: srv.info.APIURL, token: "kumo_not.a-token"}
	bad.problem(bad.do(http.MethodGet, "/api/v1/runs", ""), http.StatusUnauthorized, "unauthenticated")
	anon.want(anon.do(http.MethodGet, "/openapi.json", ""), http.StatusOK, "the document is public")

	// A workspace whose runtime is the test cluster: created over HTTP.
	ws, _ := json.Marshal(map[string]any{"name": "kube", "workspace": "runtimes:\n  kubernetes:\n    kubeconfig: " + e.cluster.Kubeconfig + "\n"})
	ci.want(ci.do(http.MethodPost, "/api/v1/workspaces", string(ws)), http.StatusCreated, "POST workspaces")
	viewer.problem(viewer.do(http.MethodPost, "/api/v1/workspaces", string(ws)), http.StatusForbidden, "forbidden", "token:look may not workspace")
	run := func(op, value string, extra string) string {
		body := map[string]any{"operation": op, "project": e.project, "workspace": "kube"}
		if value != "" {
			body["spec"] = apiSpec(e.ns, value)
		}
		data, _ := json.Marshal(body)
		return strings.TrimSuffix(string(data), "}") + extra + "}"
	}

	// A viewer may not preview: 403 naming subject, action, project/workspace.
	p := viewer.problem(viewer.do(http.MethodPost, "/api/v1/runs", run("preview", "hello", "")), http.StatusForbidden, "forbidden",
		"token:look may not preview "+e.project+"/kube")
	if p["subject"] != "token:look" || p["action"] != "preview" || p["project"] != e.project || p["workspace"] != "kube" {
		t.Errorf("403 does not name subject, action, project and workspace: %v", p)
	}

	// Preview, retried with its Idempotency-Key: one run.
	preview := ci.start(run("preview", "hello", ""), "Idempotency-Key", "preview-1")
	again := ci.want(ci.do(http.MethodPost, "/api/v1/runs", run("preview", "hello", ""), "Idempotency-Key", "preview-1"), http.StatusAccepted, "retried POST").json(t)
	if again["id"] != preview || again["replayed"] != true {
		t.Errorf("a retried POST with the same Idempotency-Key: %v, want run %s replayed", again, preview)
	}
	ci.problem(ci.do(http.MethodPost, "/api/v1/runs", run("preview", "other", ""), "Idempotency-Key", "preview-1"), http.StatusUnprocessableEntity, "idempotency-key-reused")
	ci.waitStatus(preview, "succeeded")
	res := ci.result(preview)
	changes, _ := res["changes"].([]any)
	if len(changes) != 2 || !strings.HasPrefix(fmt.Sprint(res["digest"]), "sha256:") {
		t.Errorf("preview result: want 2 changes and a digest: %v", res)
	}
	list := ci.want(ci.do(http.MethodGet, "/api/v1/runs?project="+e.project+"&operation=preview", ""), http.StatusOK, "GET runs").json(t)
	if items, _ := list["items"].([]any); len(items) != 1 {
		t.Errorf("runs of the project: %v, want the one preview (the retried POST started none)", list)
	}
	// An unchanged run answers 304 to its ETag.
	r := ci.want(ci.do(http.MethodGet, "/api/v1/runs/"+preview, ""), http.StatusOK, "GET run")
	etag := r.header.Get("ETag")
	if etag == "" {
		t.Fatal("GET runs/{id} has no ETag")
	}
	if r := ci.do(http.MethodGet, "/api/v1/runs/"+preview, "", "If-None-Match", etag); r.code != http.StatusNotModified || len(r.body) != 0 {
		t.Errorf("If-None-Match on an unchanged run: %s, want 304 without a body", r)
	}
	if r := ci.do(http.MethodGet, "/api/v1/runs/"+preview, "", "If-None-Match", `"other"`); r.code != http.StatusOK {
		t.Errorf("If-None-Match of another tag: %s, want 200", r)
	}

	// Apply awaiting approval: a wrong digest is refused, the right one approves.
	apply := ci.start(run("apply", "hello", `,"version":"alpha1","message":"first"`))
	ci.waitStatus(apply, "awaiting-approval")
	plan := ci.result(apply)
	digest, _ := plan["digest"].(string)
	if digest == "" || plan["status"] != "awaiting-approval" {
		t.Fatalf("the result of an apply awaiting approval: %v", plan)
	}
	wrong := `{"digest":"sha256:` + strings.Repeat("0", 64) + `"}`
	ci.problem(ci.do(http.MethodPost, "/api/v1/runs/"+apply+"/approve", wrong), http.StatusConflict, "not-answerable")
	ci.problem(ci.do(http.MethodPost, "/api/v1/runs/"+apply+"/approve", `{}`), http.StatusBadRequest, "invalid-request", "digest")
	viewer.problem(viewer.do(http.MethodPost, "/api/v1/runs/"+apply+"/approve", `{"digest":"`+digest+`"}`), http.StatusForbidden, "forbidden", "token:look may not approve")
	ci.want(ci.do(http.MethodPost, "/api/v1/runs/"+apply+"/approve", `{"digest":"`+digest+`"}`), http.StatusOK, "approve with the plan's digest")
	done := ci.waitStatus(apply, "succeeded")
	people, _ := done["people"].(map[string]any)
	started, _ := people["startedBy"].(map[string]any)
	approvals, _ := people["approvals"].([]any)
	if started["name"] != "token:ci" || len(approvals) != 1 || approvals[0].(map[string]any)["name"] != "token:ci" {
		t.Errorf("the run records %v as its people, want token:ci as starter and approver", people)
	}
	out := ci.result(apply)
	resources, _ := out["resources"].([]any)
	if len(resources) != 2 || out["status"] != "succeeded" {
		t.Errorf("apply result: want 2 resource outcomes: %v", out)
	}
	for _, res := range resources {
		if res.(map[string]any)["result"] != "succeeded" {
			t.Errorf("resource outcome %v", res)
		}
	}
	cm, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil || cm.Data["greeting"] != "hello" {
		t.Fatalf("the applied ConfigMap: %v %v", cm, err)
	}
	logs := ci.want(ci.do(http.MethodGet, "/api/v1/runs/"+apply+"/logs", ""), http.StatusOK, "GET logs")
	if !strings.HasPrefix(logs.header.Get("Content-Type"), "text/plain") || !strings.Contains(string(logs.body), "v1:ConfigMap:"+e.ns+":web") {
		t.Errorf("the apply's log does not name its ConfigMap: %s", logs)
	}
	// The apply's page, served beside the API to a caller who may view
	// it, and linked from run show.
	page := ci.want(ci.do(http.MethodGet, "/runs/"+apply, ""), http.StatusOK, "GET the run's page")
	if !strings.Contains(string(page.body), "v1:ConfigMap:"+e.ns+":web") {
		t.Errorf("the run's page does not show its ConfigMap:\n%s", page.body)
	}
	anon = &apiClient{t: t, base: srv.info.APIURL}
	anon.want(anon.do(http.MethodGet, "/runs/"+apply, ""), http.StatusUnauthorized, "the run's page without credentials")
	if shown := e.ok("run", "show", apply).stdout; !strings.Contains(shown, srv.info.APIURL+"/runs/"+apply) {
		t.Errorf("run show does not link the run's page %s/runs/%s:\n%s", srv.info.APIURL, apply, shown)
	}
	rels := ci.want(ci.do(http.MethodGet, "/api/v1/projects/"+e.project+"/workspaces/kube/releases", ""), http.StatusOK, "GET releases").json(t)
	if items, _ := rels["items"].([]any); len(items) != 1 {
		t.Errorf("releases: %v", rels)
	} else if label, _ := items[0].(map[string]any)["label"].(map[string]any); label["version"] != "alpha1" || label["message"] != "first" {
		t.Errorf("the release's label: %v, want version alpha1 and message first", items[0])
	}

	// Rejected: the release does not change the ConfigMap.
	reject := ci.start(run("apply", "rejected", ""))
	ci.waitStatus(reject, "awaiting-approval")
	ci.want(ci.do(http.MethodPost, "/api/v1/runs/"+reject+"/reject", `{"reason":"not today"}`), http.StatusOK, "reject")
	ci.waitStatus(reject, "cancelled", "failed")

	// Cancelled while it awaits approval.
	cancel := ci.start(run("apply", "cancelled", ""))
	ci.waitStatus(cancel, "awaiting-approval")
	ci.want(ci.do(http.MethodPost, "/api/v1/runs/"+cancel+"/cancel", `{"reason":"changed my mind"}`), http.StatusAccepted, "cancel")
	ci.waitStatus(cancel, "cancelled", "failed")
	ci.problem(ci.do(http.MethodPost, "/api/v1/runs/"+cancel+"/cancel", ``), http.StatusConflict, "run-ended")
	if cm, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(context.Background(), "web", metav1.GetOptions{}); err != nil || cm.Data["greeting"] != "hello" {
		t.Errorf("after a rejected and a cancelled apply the ConfigMap is %v %v, want it unchanged", cm, err)
	}

	// A drift check, and a rollback to revision 1 without approval.
	check := ci.start(run("drift-check", "", ""))
	ci.waitStatus(check, "succeeded")
	report, _ := ci.result(check)["driftReport"].(map[string]any)
	if report == nil || report["runID"] != check {
		t.Errorf("the drift check's result holds no report of it: %v", report)
	}
	rollback := ci.start(run("rollback", "", `,"revision":1,"approval":"auto"`))
	ci.waitStatus(rollback, "succeeded")
	if out := ci.result(rollback); out["status"] != "succeeded" || out["revision"] == nil {
		t.Errorf("rollback result: %v", out)
	}

	// Destroy without approval, its log followed as server-sent events.
	destroy := ci.start(run("destroy", "", `,"approval":"auto"`))
	events := ci.follow(destroy)
	if !strings.Contains(events, "event: end") || !strings.Contains(events, `"status":"succeeded"`) || !strings.Contains(events, "event: log") {
		t.Errorf("the followed log of the destroy: %s", events)
	}
	ci.waitStatus(destroy, "succeeded")
	if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(context.Background(), "web", metav1.GetOptions{}); err == nil {
		t.Error("the ConfigMap is still there after the destroy")
	}
}

// follow reads GET runs/{id}/logs?follow=1 to its end event.
func (a *apiClient) follow(id string) string {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, a.base+"/api/v1/runs/"+id+"/logs?follow=1", nil)
	req.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		body, _ := io.ReadAll(resp.Body)
		a.t.Fatalf("follow: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "event: end") {
			sc.Scan()
			b.WriteString(sc.Text() + "\n")
			break
		}
	}
	return b.String()
}

// TestKumoAPIFleet: `kumo api` serves the same API against an existing
// Temporal cluster, beside a `kumo worker`: a token granted deployer
// previews over HTTP, a viewer's preview is refused by the API's own
// decision (the cluster knows only the API process), and nobody gets in
// without a credential. It refuses to start without a way to authenticate
// callers, a policy granting them anything, or TLS beyond loopback.
func TestKumoAPIFleet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tmp := temporalServer(t)
	e.flags = tmp.flags()
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte(fmt.Sprintf("grants:\n  - role: deployer\n    subjects: [\"token:ci\"]\n    scopes: [\"%[1]s/*\"]\n  - role: viewer\n    subjects: [\"token:look\"]\n    scopes: [\"%[1]s/*\"]\n", e.project)), 0o600); err != nil {
		t.Fatal(err)
	}
	e.fails([]string{"api", "--policy", policy}, "add --kumo-tokens or --oidc-issuer")
	e.fails([]string{"api", "--kumo-tokens"}, "the policy grants nobody a role")
	e.fails([]string{"api", "--kumo-tokens", "--policy", policy, "--address", "0.0.0.0:0"}, "listens beyond this machine", "--tls-cert")
	ciToken := strings.TrimSpace(e.ok("token", "create", "--subject", "ci", "--ttl", "1h").stdout)
	viewToken := strings.TrimSpace(e.ok("token", "create", "--subject", "look", "--ttl", "1h").stdout)

	ws := e.writeSpec("kube.yaml", "runtimes:\n  kubernetes:\n    kubeconfig: "+e.cluster.Kubeconfig+"\n")
	e.ok("workspace", "create", "kube", "--file", ws)
	e.worker()
	address := freeAddress(t)
	e.background(nil, "api", "--address", address, "--kumo-tokens", "--policy", policy)
	base := "http://" + address
	waitFor(t, "kumo api to listen", time.Minute, func() bool { return httpStatus(base+"/openapi.json") == http.StatusOK })

	anon := &apiClient{t: t, base: base}
	anon.problem(anon.do(http.MethodGet, "/api/v1/runs?project="+e.project, ""), http.StatusUnauthorized, "unauthenticated")
	ci := &apiClient{t: t, base: base, token: ciToken}
	viewer := &apiClient{t: t, base: base, token: viewToken}
	body := func() string {
		data, _ := json.Marshal(map[string]any{"operation": "preview", "project": e.project, "workspace": "kube", "spec": apiSpec(e.ns, "fleet")})
		return string(data)
	}
	viewer.problem(viewer.do(http.MethodPost, "/api/v1/runs", body()), http.StatusForbidden, "forbidden", "token:look may not preview "+e.project+"/kube")
	id := ci.start(body())
	ci.waitStatus(id, "succeeded")
	if res := ci.result(id); len(res["changes"].([]any)) != 2 {
		t.Errorf("preview result: %v", res)
	}
	list := ci.want(ci.do(http.MethodGet, "/api/v1/runs?project="+e.project, ""), http.StatusOK, "GET runs").json(t)
	if items, _ := list["items"].([]any); len(items) != 1 {
		t.Errorf("runs of the project: %v", list)
	}
	viewer.want(viewer.do(http.MethodGet, "/api/v1/runs/"+id, ""), http.StatusOK, "a viewer shows the run")
}

// TestHTTPAPIWebSession: a browser logged in to the Web UI calls the API
// with its session cookie alone; the API passes the session on to the
// frontend through the UI's certificate, so the run records the home's
// owner as its starter. Without the session, 401.
func TestHTTPAPIWebSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := e.startServer()
	if srv.info.LoginURL == "" || srv.info.APIURL == "" {
		t.Fatalf("server.json: %+v", srv.info)
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{Jar: jar}
	resp, err := browser.Get(srv.info.LoginURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	call := func(c *http.Client, method, path, body string) apiResponse {
		t.Helper()
		req, _ := http.NewRequest(method, srv.info.APIURL+path, strings.NewReader(body))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return apiResponse{code: resp.StatusCode, header: resp.Header, body: data}
	}
	if r := call(http.DefaultClient, http.MethodGet, "/api/v1/runs", ""); r.code != http.StatusUnauthorized {
		t.Fatalf("without the session: %s", r)
	}
	body, _ := json.Marshal(map[string]any{"operation": "preview", "project": e.project, "workspace": "default", "spec": map[string]any{"resources": []any{}}})
	r := call(browser, http.MethodPost, "/api/v1/runs", string(body))
	if r.code != http.StatusAccepted {
		t.Fatalf("POST runs with the session: %s", r)
	}
	id := r.json(t)["id"].(string)
	var run map[string]any
	waitFor(t, "the preview to end", time.Minute, func() bool {
		r := call(browser, http.MethodGet, "/api/v1/runs/"+id, "")
		if r.code != http.StatusOK {
			t.Fatalf("GET runs/%s with the session: %s", id, r)
		}
		run = r.json(t)
		return run["status"] == "succeeded"
	})
	owner, err := pki.HomeOwner(e.home)
	if err != nil {
		t.Fatal(err)
	}
	started, _ := run["people"].(map[string]any)["startedBy"].(map[string]any)
	if started["name"] != owner || started["verified"] != true {
		t.Errorf("started by %v, want the home's owner %s, verified", started, owner)
	}

	// An Idempotency-Key holds across a restart of the server.
	keyed := func(c *http.Client) apiResponse {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.info.APIURL+"/api/v1/runs", strings.NewReader(string(body)))
		req.Header.Set("Idempotency-Key", "nightly-7")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return apiResponse{code: resp.StatusCode, header: resp.Header, body: data}
	}
	first := keyed(browser)
	if first.code != http.StatusAccepted {
		t.Fatalf("POST runs with a key: %s", first)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if r := srv.wait(); r.code != 0 {
		t.Fatalf("kumo server stopped with %s", r)
	}
	srv = e.startServer()
	jar, _ = cookiejar.New(nil) // the restart logged everyone out
	browser = &http.Client{Jar: jar}
	if resp, err := browser.Get(srv.info.LoginURL); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	again := keyed(browser)
	if again.code != http.StatusAccepted || again.json(t)["id"] != first.json(t)["id"] || again.json(t)["replayed"] != true {
		t.Errorf("the keyed POST retried after a restart: %s, want the first run %s replayed", again, first.json(t)["id"])
	}
	list := call(browser, http.MethodGet, "/api/v1/runs?project="+e.project, "")
	if items, _ := list.json(t)["items"].([]any); len(items) != 2 {
		t.Errorf("runs after the retry: %s, want 2 (the retry started none)", list)
	}
}

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/cookiejar"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kumoproj/kumo/codec"
	"github.com/kumoproj/kumo/server"
)

func marker(t *testing.T, what string) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return what + "-" + hex.EncodeToString(b)
}

func secretSpec(ns, secret, visible string) string {
	return "resources:\n" + namespace(ns) + fmt.Sprintf(`- id: v1:Secret:%[1]s:db
  type: Kubernetes
  dependsOn: [v1:Namespace:%[1]s]
  attributes:
    apiVersion: v1
    kind: Secret
    metadata: {name: db, namespace: %[1]s}
    data: {password: %[2]s}
    stringData: {token: %[3]s}
- id: v1:ConfigMap:%[1]s:visible
  type: Kubernetes
  dependsOn: [v1:Namespace:%[1]s]
  attributes:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: visible, namespace: %[1]s}
    data: {value: %[4]s}
`, ns, base64.StdEncoding.EncodeToString([]byte(secret)), secret, visible)
}

// TestSecretsNeverReachHistoryFilesOrOutputInClear is issue 17's test: a Secret
// whose values are random markers is applied, then changed, through kumo
// server. Neither marker (nor its base64, as Kubernetes holds it) appears in
// the runs' whole Temporal history, in any file under KUMO_HOME (the embedded
// database, release files, specs, state, run logs), in the server's log or in
// any command's output; `release show --reveal` shows it. A ConfigMap value,
// which is not sensitive, shows in previews but travels encrypted: the codec
// endpoint decodes it from the history, which holds only ciphertext.
func TestSecretsNeverReachHistoryFilesOrOutputInClear(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := e.startServer()
	if srv.info.CodecURL == "" || srv.info.CodecKeyFile != filepath.Join(e.home, "codec.keys") {
		t.Fatalf("server.json: codec endpoint %q, key file %q", srv.info.CodecURL, srv.info.CodecKeyFile)
	}
	first, second := marker(t, "first-secret"), marker(t, "second-secret")
	visible1, visible2 := marker(t, "visible"), marker(t, "visible")
	secrets := []string{first, second}
	for _, s := range []string{first, second} {
		secrets = append(secrets, base64.StdEncoding.EncodeToString([]byte(s)))
	}

	var outputs []result
	run := func(args ...string) result {
		t.Helper()
		r := e.ok(args...)
		outputs = append(outputs, r)
		return r
	}
	run("apply", "--yes", "-f", e.writeSpec("v1.yaml", secretSpec(e.ns, first, visible1)))
	spec2 := e.writeSpec("v2.yaml", secretSpec(e.ns, second, visible2))

	// The change shows, masked.
	preview := run("preview", "-f", spec2, "-o", "json")
	var p struct{ Changes []change }
	if err := json.Unmarshal([]byte(preview.stdout), &p); err != nil {
		t.Fatal(err)
	}
	var secretFields []string
	for _, c := range p.Changes {
		if c.ID != "v1:Secret:"+e.ns+":db" {
			continue
		}
		for _, f := range c.Fields {
			if f.Before != "(sensitive)" || f.After != "(sensitive)" {
				t.Errorf("preview of the Secret: %s: %v -> %v", f.Path, f.Before, f.After)
			}
			secretFields = append(secretFields, f.Path)
		}
		if c.Action != "Update" {
			t.Errorf("the changed Secret previews as %s", c.Action)
		}
	}
	if strings.Join(secretFields, ",") != "data.password,data.token" {
		t.Errorf("preview of the Secret lists %v, want data.password and data.token (masked)", secretFields)
	}
	if !strings.Contains(preview.stdout, visible2) {
		t.Errorf("the ConfigMap's new value is not in the preview: %s", preview.stdout)
	}
	run("preview", "-f", spec2)
	run("apply", "--yes", "-f", spec2)

	live, err := e.kube.CoreV1().Secrets(e.ns).Get(context.Background(), "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(live.Data["password"]) != second || string(live.Data["token"]) != second {
		t.Fatalf("the cluster holds %q, %q; want the second marker", live.Data["password"], live.Data["token"])
	}

	for _, row := range e.runList() {
		run("run", "show", row.RunID)
		run("run", "show", row.RunID, "-o", "json")
		if row.Operation != "preview" {
			run("run", "logs", row.RunID)
		}
	}
	run("release", "list")
	run("release", "show")
	run("release", "show", "--revision", "1", "-o", "json")
	run("release", "diff", "1", "2")
	run("release", "diff", "1", "2", "-o", "json")
	if r := e.ok("release", "show", "--reveal"); !strings.Contains(r.stdout, second) {
		t.Errorf("release show --reveal lacks the Secret's value:\n%s", r.stdout)
	}

	// The whole history of every run, as the Temporal API returns it.
	history, payloads, summaries := dumpHistories(t, e.home, srv.info.Address)
	if !bytes.Contains(history, []byte(codec.EncodingEncrypted)) {
		t.Fatal("no encrypted payload in the histories")
	}
	// Summaries are payloads too: the Web UI shows them only through the codec
	// endpoint (TestWebUI finds the run's summary on its page).
	for _, p := range summaries {
		if string(p.Metadata[codec.MetadataEncoding]) != codec.EncodingEncrypted {
			t.Errorf("a summary is stored in clear: %s", p.Data)
		}
	}
	if len(summaries) == 0 {
		t.Error("no summary in the histories")
	}
	for _, m := range append(secrets, visible2) {
		if bytes.Contains(history, []byte(m)) {
			t.Errorf("the Temporal history holds %s in clear", m)
		}
	}
	// The codec endpoint decodes them: the ConfigMap's value is there, the
	// Secret's is not (it never entered a payload).
	if code := decodeStatus(t, http.DefaultClient, srv.info.CodecURL+"/default/decode", payloads); code != http.StatusUnauthorized {
		t.Errorf("the codec endpoint answered a caller that did not log in: %d, want 401", code)
	}
	decoded := decodeThrough(t, loggedIn(t, srv.info), srv.info.CodecURL+"/default/decode", payloads)
	if !bytes.Contains(decoded, []byte(visible2)) {
		t.Error("the codec endpoint's decoded payloads lack the ConfigMap's value")
	}
	for _, m := range secrets {
		if bytes.Contains(decoded, []byte(m)) {
			t.Errorf("a decoded payload holds the Secret's value %s", m)
		}
	}
	// The Web UI is configured with the endpoint.
	resp, err := http.Get(srv.info.UIURL + "/api/v1/settings")
	if err != nil {
		t.Fatal(err)
	}
	settings, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(settings), srv.info.CodecURL) {
		t.Errorf("the UI's settings do not name the codec endpoint %s: %s", srv.info.CodecURL, settings)
	}

	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, srv.wait())
	for _, r := range outputs {
		for _, m := range secrets {
			if strings.Contains(r.stdout+r.stderr, m) {
				t.Errorf("output holds %s in clear:\n%s", m, r)
			}
		}
	}
	files := checkStoredFiles(t, e.home, secrets)
	t.Logf("%d history bytes, %d payloads, %d files under KUMO_HOME checked", len(history), len(payloads), files)
}

// dumpHistories returns every event of every run in the namespace, as the
// protobuf bytes the API sent, the payloads in them, and the summaries among
// those.
func dumpHistories(t *testing.T, home, address string) (all []byte, payloads, summaries []*commonpb.Payload) {
	t.Helper()
	ctx := context.Background()
	tc, err := sdkclient.Dial(sdkclient.Options{HostPort: address, Logger: sdklog.NewStructuredLogger(quietLogger()), ConnectionOptions: ownerConnection(t, home)})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	list, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Executions) == 0 {
		t.Fatal("no runs")
	}
	for _, ex := range list.Executions {
		it := tc.GetWorkflowHistory(ctx, ex.Execution.WorkflowId, ex.Execution.RunId, false, 0)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			data, err := proto.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, data...)
			payloads = append(payloads, payloadsIn(ev.ProtoReflect())...)
			if s := ev.GetUserMetadata().GetSummary(); s != nil {
				summaries = append(summaries, s)
			}
		}
	}
	return all, payloads, summaries
}

// payloadsIn finds every Payload message in m.
func payloadsIn(m protoreflect.Message) []*commonpb.Payload {
	if p, ok := m.Interface().(*commonpb.Payload); ok {
		return []*commonpb.Payload{p}
	}
	var out []*commonpb.Payload
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				out = append(out, payloadsIn(mv.Message())...)
				return true
			})
		case fd.IsList() && fd.Message() != nil:
			for i := range v.List().Len() {
				out = append(out, payloadsIn(v.List().Get(i).Message())...)
			}
		case fd.Message() != nil && !fd.IsMap() && !fd.IsList():
			out = append(out, payloadsIn(v.Message())...)
		}
		return true
	})
	return out
}

// decodeThrough posts payloads to a codec endpoint and returns the decoded
// payloads' data, concatenated.
func decodeThrough(t *testing.T, c *http.Client, url string, payloads []*commonpb.Payload) []byte {
	t.Helper()
	resp := postPayloads(t, c, url, payloads)
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("codec endpoint: %s %s", resp.Status, answer)
	}
	var out commonpb.Payloads
	if err := protojson.Unmarshal(answer, &out); err != nil {
		t.Fatalf("codec endpoint answer: %v", err)
	}
	var data []byte
	for _, p := range out.Payloads {
		if string(p.Metadata[codec.MetadataEncoding]) == codec.EncodingEncrypted {
			t.Errorf("the codec endpoint left a payload encrypted")
		}
		data = append(data, p.Data...)
	}
	return data
}

// TestSealedValueCopiedBetweenResourcesIsRefused is issue 27's: a sealed value
// copied from project A's release file into a Secret of project B, or into
// another resource of A, is refused before anything is applied, naming the
// resource and field; A's release still reveals its value.
func TestSealedValueCopiedBetweenResourcesIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	secret := marker(t, "sealed-secret")
	e.ok("apply", "--yes", "-f", e.writeSpec("a.yaml", secretSpec(e.ns, secret, "v")))

	sealedRE := regexp.MustCompile(`kumo:sealed:v1:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+`)
	var stolen string
	_ = filepath.WalkDir(e.home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || stolen != "" {
			return err
		}
		if data, err := readStored(path); err == nil {
			stolen = string(sealedRE.Find(data))
		}
		return nil
	})
	if stolen == "" {
		t.Fatal("no sealed value under KUMO_HOME")
	}
	copySpec := func(ns, name string) string {
		return "resources:\n" + namespace(ns) + fmt.Sprintf(`- id: v1:Secret:%[1]s:%[2]s
  type: Kubernetes
  dependsOn: [v1:Namespace:%[1]s]
  attributes:
    apiVersion: v1
    kind: Secret
    metadata: {name: %[2]s, namespace: %[1]s}
    data: {password: "%[3]s"}
`, ns, name, stolen)
	}
	b := *e
	b.project = e.project + "-b"
	b.ns = e.ns + "-b"
	for _, c := range []struct {
		who  *env
		name string
	}{{&b, "db"}, {e, "copy"}} {
		spec := c.who.writeSpec("copy.yaml", copySpec(c.who.ns, c.name))
		for _, cmd := range [][]string{{"preview", "-f", spec}, {"apply", "--yes", "-f", spec}} {
			r := c.who.fails(cmd, "sealed values cannot be copied between resources", "v1:Secret:"+c.who.ns+":"+c.name, "data/password")
			if strings.Contains(r.stderr, stolen) {
				t.Errorf("kumo %v shows the sealed value: %s", cmd, r.stderr)
			}
		}
	}
	if _, err := e.kube.CoreV1().Secrets(e.ns).Get(context.Background(), "copy", metav1.GetOptions{}); err == nil {
		t.Error("the copied Secret was applied")
	}
	if r := e.ok("release", "show", "--reveal"); !strings.Contains(r.stdout, secret) {
		t.Errorf("release show --reveal lacks the Secret's value:\n%s", r.stdout)
	}
}

// decodeStatus is the codec endpoint's answer to c's decode request.
func decodeStatus(t *testing.T, c *http.Client, url string, payloads []*commonpb.Payload) int {
	t.Helper()
	resp := postPayloads(t, c, url, payloads)
	resp.Body.Close()
	return resp.StatusCode
}

func postPayloads(t *testing.T, c *http.Client, url string, payloads []*commonpb.Payload) *http.Response {
	t.Helper()
	body, err := protojson.Marshal(&commonpb.Payloads{Payloads: payloads})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// loggedIn is an HTTP client that opened the server's login URL, as the
// owner's browser does.
func loggedIn(t *testing.T, info server.Info) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar}
	resp, err := c.Get(info.LoginURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("log in at %s: %s", info.LoginURL, resp.Status)
	}
	return c
}

package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kumoproj/kumo/codec"
	"github.com/kumoproj/kumo/internal/keyring"
)

// TestDriftWebhookTokenAndSecretStayOut: a drift webhook whose URL holds a
// token (in its path and query) and whose HMAC key is in the worker's
// environment is told of drift, signed; its first POST fails, so a failure
// is recorded too. Neither the token nor the key is in any run's history,
// not even with every payload decoded with the codec key, nor in the run
// logs, the files under KUMO_HOME other than the workspace that configures
// the URL, the server's output or any command's output.
func TestDriftWebhookTokenAndSecretStayOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	token, secret := marker(t, "hooktoken"), marker(t, "hooksecret")
	var mu sync.Mutex
	var posts, verified int
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		posts++
		if !strings.Contains(r.URL.String(), token) {
			t.Errorf("the POST went to %s, without the URL's token", r.URL)
		}
		if verify([]byte(secret), r, body) {
			verified++
		}
		if posts == 1 {
			w.WriteHeader(http.StatusInternalServerError) // recorded as a failure, retried
		}
	}))
	defer hook.Close()
	e.environ = append(e.environ, "KUMO_WEBHOOK_TEST_SECRET="+secret)
	srv := e.startServer("--headless")

	var outputs []result
	run := func(want int, args ...string) result {
		t.Helper()
		r := e.run(args...)
		if r.code != want {
			t.Fatalf("kumo %s: exit %d, want %d: %s", strings.Join(args, " "), r.code, want, r)
		}
		outputs = append(outputs, r)
		return r
	}
	url := fmt.Sprintf("%s/hooks/%s?key=%s", hook.URL, token, token)
	run(0, "workspace", "create", "dev", "--file", e.writeSpec("dev.yaml", fmt.Sprintf(
		"drift:\n  webhook:\n    url: %q\n    secretEnv: KUMO_WEBHOOK_TEST_SECRET\n    allowPrivate: true\n", url)))
	run(0, "apply", "--yes", "--workspace", "dev", "-f", e.writeSpec("spec.yaml", "resources:\n"+namespace(e.ns)+fmt.Sprintf(`- id: v1:ConfigMap:%[1]s:settings
  type: Kubernetes
  dependsOn: [v1:Namespace:%[1]s]
  attributes: {apiVersion: v1, kind: ConfigMap, metadata: {name: settings, namespace: %[1]s}, data: {color: blue}}
`, e.ns)))
	if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Patch(context.Background(), "settings", types.MergePatchType,
		[]byte(`{"data":{"color":"red"}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	run(2, "drift", "check", "--workspace", "dev")
	run(2, "drift", "check", "--workspace", "dev", "-o", "json")
	mu.Lock()
	if posts < 2 || verified != posts {
		t.Errorf("the receiver got %d POSTs, %d with a valid signature; want the drift-detected event twice (a failure, then its retry), all signed", posts, verified)
	}
	mu.Unlock()
	for _, row := range e.runList("--workspace", "dev") {
		outputs = append(outputs, e.run("run", "logs", row.RunID), e.run("run", "show", row.RunID, "-o", "json"))
	}

	marks := []string{token, secret}
	history, payloads, _ := dumpHistories(t, e.home, srv.info.Address)
	keys, err := keyring.Load(filepath.Join(e.home, "codec.keys"))
	if err != nil {
		t.Fatal(err)
	}
	// Every payload as the codec key opens it (a plain one, such as the
	// subject header, as it is).
	var clear []byte
	for _, p := range payloads {
		if string(p.Metadata[codec.MetadataEncoding]) != codec.EncodingEncrypted {
			clear = append(clear, p.Data...)
			continue
		}
		decoded, err := codec.New(keys).Decode([]*commonpb.Payload{p})
		if err != nil {
			t.Fatal(err)
		}
		clear = append(clear, decoded[0].Data...)
	}
	if !bytes.Contains(clear, []byte("KUMO_WEBHOOK_TEST_SECRET")) {
		t.Fatal("no decoded payload names the webhook's secret variable: the check is not looking at the drift runs")
	}
	for _, m := range marks {
		if bytes.Contains(history, []byte(m)) {
			t.Errorf("the Temporal history holds %s", m)
		}
		if bytes.Contains(clear, []byte(m)) {
			t.Errorf("a payload decoded with the codec key holds %s", m)
		}
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, srv.wait())
	for _, r := range outputs {
		for _, m := range marks {
			if strings.Contains(r.stdout+r.stderr, m) {
				t.Errorf("output holds %s:\n%s", m, r)
			}
		}
	}
	err = filepath.WalkDir(e.home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if filepath.Base(filepath.Dir(path)) == "workspaces" {
			return nil // the workspace configures the URL
		}
		data, err := readStored(path)
		if err != nil {
			return err
		}
		for _, m := range marks {
			if bytes.Contains(data, []byte(m)) {
				t.Errorf("%s holds %s", path, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// verify is docs/secrets.md's receiver check, as a receiver would write it.
func verify(secret []byte, r *http.Request, body []byte) bool {
	ts := r.Header.Get("X-Kumo-Timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		return false // missing, malformed or outside the window
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts + "." + string(body)))
	want := "sha256=" + hex.EncodeToString(m.Sum(nil))
	return hmac.Equal([]byte(r.Header.Get("X-Kumo-Signature")), []byte(want))
}

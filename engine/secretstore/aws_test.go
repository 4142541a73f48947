package secretstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/kumoproj/kumo/engine"
)

// smServer is AWS Secrets Manager's GetSecretValue as documented (JSON 1.1
// protocol: POST /, X-Amz-Target secretsmanager.GetSecretValue, errors as
// {"__type": ...} with status 400), refusing any request whose SigV4
// signature does not verify with the test's key.
type smServer struct {
	region  string
	key     aws.Credentials
	secrets map[string]map[string]smVersion // name -> version id -> version
	mu      sync.Mutex
	calls   []map[string]string
}

type smVersion struct {
	stages []string
	str    *string
	bin    []byte
}

var authRE = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$`)

func (s *smServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	fail := func(status int, typ, msg string) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"__type": typ, "message": msg})
	}
	if r.Method != http.MethodPost || r.URL.Path != "/" || r.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue" ||
		r.Header.Get("Content-Type") != "application/x-amz-json-1.1" {
		fail(400, "InvalidRequestException", fmt.Sprintf("unexpected %s %s target %q", r.Method, r.URL.Path, r.Header.Get("X-Amz-Target")))
		return
	}
	if err := s.verify(r, body); err != nil {
		fail(403, "InvalidSignatureException", err.Error())
		return
	}
	var in struct {
		SecretId, VersionId, VersionStage string
	}
	if err := json.Unmarshal(body, &in); err != nil || in.SecretId == "" {
		fail(400, "InvalidParameterException", "SecretId is required")
		return
	}
	s.mu.Lock()
	s.calls = append(s.calls, map[string]string{"SecretId": in.SecretId, "VersionId": in.VersionId, "VersionStage": in.VersionStage})
	s.mu.Unlock()
	versions, ok := s.secrets[in.SecretId]
	if !ok {
		fail(400, "ResourceNotFoundException", "Secrets Manager can't find the specified secret.")
		return
	}
	for id, v := range versions {
		if in.VersionId != "" && id != in.VersionId {
			continue
		}
		stage := in.VersionStage
		if stage == "" && in.VersionId == "" {
			stage = "AWSCURRENT"
		}
		if stage != "" && !contains(v.stages, stage) {
			continue
		}
		out := map[string]any{"ARN": "arn:aws:secretsmanager:" + s.region + ":123456789012:secret:" + in.SecretId + "-AbCdEf",
			"Name": in.SecretId, "VersionId": id, "VersionStages": v.stages, "CreatedDate": 1.7e9}
		if v.str != nil {
			out["SecretString"] = *v.str
		} else {
			out["SecretBinary"] = base64.StdEncoding.EncodeToString(v.bin)
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		_ = json.NewEncoder(w).Encode(out)
		return
	}
	fail(400, "ResourceNotFoundException", "Secrets Manager can't find the specified secret value for staging label: "+in.VersionStage)
}

// verify checks r's SigV4 signature: the credential scope names the test's
// key, today, the region and secretsmanager, and the signature over the
// headers it names and the body is the one the key makes.
func (s *smServer) verify(r *http.Request, body []byte) error {
	m := authRE.FindStringSubmatch(r.Header.Get("Authorization"))
	if m == nil {
		return fmt.Errorf("no SigV4 Authorization header: %q", r.Header.Get("Authorization"))
	}
	if m[1] != s.key.AccessKeyID || m[3] != s.region || m[4] != "secretsmanager" {
		return fmt.Errorf("credential scope %s/%s/%s", m[1], m[3], m[4])
	}
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil || when.Format("20060102") != m[2] || time.Since(when).Abs() > 5*time.Minute {
		return fmt.Errorf("X-Amz-Date %q", r.Header.Get("X-Amz-Date"))
	}
	sum := sha256.Sum256(body)
	again, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	for _, h := range strings.Split(m[5], ";") {
		if h == "host" {
			continue
		}
		again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
	}
	again.ContentLength = r.ContentLength
	if err := v4.NewSigner().SignHTTP(context.Background(), s.key, again, hex.EncodeToString(sum[:]), "secretsmanager", s.region, when); err != nil {
		return err
	}
	if got := authRE.FindStringSubmatch(again.Header.Get("Authorization")); got == nil || got[6] != m[6] {
		return errors.New("the signature does not match")
	}
	return nil
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

// startSM serves s and points the SDK's default configuration at it (the
// worker's environment: endpoint, static keys, no shared files).
func startSM(t testing.TB, s *smServer) {
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", srv.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", s.key.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s.key.SecretAccessKey)
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_MAX_ATTEMPTS", "1")
}

func ptr(s string) *string { return &s }

// References to AWS Secrets Manager read through aws-sdk-go-v2 as Kusion
// reads them: a property of a JSON secret string (nested with dots), the
// whole string or binary (a one-segment reference: "ref://a/b" is property b
// of secret a), a staging label or a "uuid/" version ID; signed
// with the worker's key. A missing secret or property is an error naming
// the resource, field, reference and store, and is permanent.
func TestAWSSecretsManager(t *testing.T) {
	s := &smServer{region: "eu-west-1",
		key: aws.Credentials{AccessKeyID: "AKIDKUMOTEST", SecretAccessKey: "kumo-test-secret-key"},
		secrets: map[string]map[string]smVersion{
			"prod/db": {
				"v-new": {stages: []string{"AWSCURRENT"}, str: ptr(`{"password":"n3w","user":"app","conn":{"host":"db.internal","port":5432}}`)},
				"v-old": {stages: []string{"AWSPREVIOUS"}, str: ptr(`{"password":"0ld"}`)},
			},
			"plain": {"v1": {stages: []string{"AWSCURRENT"}, str: ptr("just text")}},
			"bin":   {"v1": {stages: []string{"AWSCURRENT"}, bin: []byte{0, 1, 2}}},
		}}
	startSM(t, s)
	store := &engine.WorkspaceSecretStore{Provider: engine.SecretProvider{AWS: &engine.AWSStore{Region: "eu-west-1"}}, AllowedNames: []string{"prod/*", "plain", "bin"}}
	ctx := context.Background()
	r, err := Open(ctx, store.Provider, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	ref := func(field, key, text string) engine.SecretRefField {
		parsed, err := engine.ParseSecretRef(text)
		if err != nil {
			t.Fatal(err)
		}
		return engine.SecretRefField{Field: field, Key: key, Ref: parsed}
	}
	refs := []engine.SecretRefField{
		ref("stringData", "pw", "ref://prod/db/password"),
		ref("stringData", "user", "ref://prod/db/user"),
		ref("stringData", "host", "ref://prod/db/conn.host"),
		ref("stringData", "port", "ref://prod/db/conn.port"),
		ref("stringData", "old", "ref://prod/db/password?version=AWSPREVIOUS"),
		ref("stringData", "byid", "ref://prod/db/password?version=uuid/v-old"),
		ref("stringData", "plain", "ref://plain"),
		ref("data", "bin", "ref://bin"),
	}
	got, err := Resolve(ctx, "v1:Secret:demo:db", refs, store, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"n3w", "app", "db.internal", "5432", "0ld", "0ld", "just text", "\x00\x01\x02"}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("%s = %q, want %q", refs[i].Ref, got[i], want[i])
		}
	}
	// prod/db (current) was read once for its four properties.
	wantCalls := []map[string]string{
		{"SecretId": "prod/db", "VersionId": "", "VersionStage": "AWSCURRENT"},
		{"SecretId": "prod/db", "VersionId": "", "VersionStage": "AWSPREVIOUS"},
		{"SecretId": "prod/db", "VersionId": "v-old", "VersionStage": ""},
		{"SecretId": "plain", "VersionId": "", "VersionStage": "AWSCURRENT"},
		{"SecretId": "bin", "VersionId": "", "VersionStage": "AWSCURRENT"},
	}
	if g, w := fmt.Sprint(s.calls), fmt.Sprint(wantCalls); g != w {
		t.Errorf("requests:\n%s\nwant\n%s", g, w)
	}

	for text, msg := range map[string]string{
		"ref://prod/missing/x":  `v1:Secret:demo:db: stringData.k: ref://prod/missing/x (secret store aws secrets manager eu-west-1): secret "prod/missing": not found`,
		"ref://prod/db/nope":    `v1:Secret:demo:db: stringData.k: ref://prod/db/nope (secret store aws secrets manager eu-west-1): the secret has no property "nope"`,
		"ref://plain/x":         `v1:Secret:demo:db: stringData.k: ref://plain/x (secret store aws secrets manager eu-west-1): the secret is not a JSON object, so it has no property "x"`,
		"ref://staging/db/pass": `v1:Secret:demo:db: stringData.k: ref://staging/db/pass (secret store aws secrets manager eu-west-1): secret "staging/db" is not among the names this workspace's specs may read (secretStore.allowedNames)`,
	} {
		_, err := Resolve(ctx, "v1:Secret:demo:db", []engine.SecretRefField{ref("stringData", "k", text)}, store, r)
		if err == nil || err.Error() != msg || !Permanent(err) {
			t.Errorf("%s: %v (permanent %v)\nwant %s", text, err, Permanent(err), msg)
		}
		if err != nil && strings.Contains(err.Error(), "n3w") {
			t.Errorf("%s: the error holds a secret value: %v", text, err)
		}
	}
	if n := len(s.calls); n != len(wantCalls)+3 {
		t.Errorf("%d requests; the reference the workspace does not allow must not be read", n)
	}

	// A wrong key is refused by the server's signature check.
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong")
	r2, err := Open(ctx, store.Provider, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Read(ctx, "prod/db", ""); err == nil || !strings.Contains(err.Error(), "InvalidSignatureException") {
		t.Errorf("read with a wrong key: %v", err)
	}
}

// BenchmarkResolve20AWS is BenchmarkResolve20 against the recorded-protocol
// Secrets Manager server: 20 references to 20 secrets, signed requests.
func BenchmarkResolve20AWS(b *testing.B) {
	s := &smServer{region: "eu-west-1", key: aws.Credentials{AccessKeyID: "AKIDKUMOBENCH", SecretAccessKey: "bench"},
		secrets: map[string]map[string]smVersion{}}
	var refs []engine.SecretRefField
	for i := range 20 {
		name := fmt.Sprintf("bench/s%d", i)
		s.secrets[name] = map[string]smVersion{"v1": {stages: []string{"AWSCURRENT"}, str: ptr(fmt.Sprintf(`{"value":"%d"}`, i))}}
		r, _ := engine.ParseSecretRef("ref://" + name + "/value")
		refs = append(refs, engine.SecretRefField{Field: "stringData", Key: fmt.Sprint("k", i), Ref: r})
	}
	startSM(b, s)
	store := &engine.WorkspaceSecretStore{Provider: engine.SecretProvider{AWS: &engine.AWSStore{Region: "eu-west-1"}}, AllowedNames: []string{"bench/*"}}
	ctx := context.Background()
	r, err := Open(ctx, store.Provider, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Resolve(ctx, "v1:Secret:bench:s", refs, store, r); err != nil {
			b.Fatal(err)
		}
	}
}

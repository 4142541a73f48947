package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kumoproj/kumo/internal/hydratest"
	"github.com/kumoproj/kumo/internal/localcluster/localclustertest"
	"github.com/kumoproj/kumo/server"
)

// TestWebUISSO: with `--oidc-client-secret-file`, people log in to kumo
// server's Web UI through the OIDC provider (a real ory/hydra, its login
// page typed into by a real headless Chromium). Alice, a viewer of shop/*
// through her group, sees shop's runs and not another project's (which the
// owner sees), and a shop run's input and result decoded: the browser sent
// her session to the codec endpoint, which refuses a caller without one, a
// forged session and an unsigned token.
func TestWebUISSO(t *testing.T) {
	t.Parallel()
	browser := chromiumPath()
	if browser == "" {
		t.Skip("no chromium binary installed (Debian: apt-get install chromium); skipping the Web UI browser test")
	}
	alice := hydratest.User{Subject: "alice", Email: "alice@example.com", Groups: []string{"shop-viewers"}}
	idp := hydratest.Start(t, hydratest.WithUsers(alice))
	// The codec endpoint, where the provider sends browsers back, on a port
	// the client's redirect URI can name.
	web := freeAddress(t)
	app := idp.NewClient(t, "http://"+web+server.SSOCallbackPath)
	dir := t.TempDir()
	secretFile, policy := filepath.Join(dir, "client-secret"), filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(secretFile, []byte(app.Secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(policy, []byte("grants:\n  - role: viewer\n    subjects: [\"group:shop-viewers\"]\n    scopes: [\"shop/*\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// The owner's runs in two projects, before the server starts.
	e := newEnv(t)
	e.project, e.flags = "shop", []string{"--workspace", "dev"}
	other := *e
	other.project, other.ns = "billing", localclustertest.Namespace(t)
	e.ok("workspace", "create", "dev", "--file", e.writeSpec("dev.yaml", "context: {}\n"))
	for _, x := range []*env{e, &other} {
		x.ok("apply", "--yes", "-f", x.writeSpec("v1.yaml", manyConfigMaps(x.ns, 2)))
	}
	shopRun, _ := e.release(1)["runID"].(string)

	e.fails([]string{"server", "--address", "127.0.0.1:0", "--oidc-client-secret-file", secretFile}, "--oidc-client-secret-file is set but --oidc-issuer is not")
	srv := e.startServer("--codec-address", web, "--policy", policy,
		"--oidc-issuer", idp.Issuer, "--oidc-client-id", app.ID, "--oidc-client-secret-file", secretFile)
	if srv.info.SSOLoginURL == "" || srv.info.SSOCallbackURL != app.RedirectURI {
		t.Fatalf("server.json: SSO login %q, callback %q; want a login URL and callback %s", srv.info.SSOLoginURL, srv.info.SSOCallbackURL, app.RedirectURI)
	}

	// The owner, logged in with the URL the server printed, sees both
	// projects' runs: what alice does not see is hidden from her.
	jar, _ := cookiejar.New(nil)
	owner := &http.Client{Jar: jar}
	if resp, err := owner.Get(srv.info.LoginURL); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	if got := listedWorkflows(t, owner, srv.info); !got["kumo/shop/dev"] || !got["kumo/billing/dev"] {
		t.Fatalf("the owner's list: %v, want both projects' runs", got)
	}

	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1440, 900))...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start %s: %v", browser, err)
	}
	ctx, cancel := context.WithTimeout(bctx, 2*time.Minute)
	defer cancel()

	// Alice logs in: kumo sends her to the provider, whose login page she
	// types her name into; the provider sends her back, and kumo on to the
	// runs.
	start := time.Now()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.info.SSOLoginURL),
		chromedp.WaitVisible(chromedp.CSS("#username")),
		chromedp.SendKeys(chromedp.CSS("#username"), alice.Subject),
		chromedp.Click(chromedp.CSS("#login")),
		chromedp.WaitVisible(chromedp.Search(`//a[contains(., "kumo/shop/dev")]`)),
	); err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
		t.Fatalf("log in through the provider and see shop's runs: %v\npage:\n%.2000s", err, body)
	}
	t.Logf("SSO login until the runs show: %s", time.Since(start).Round(time.Millisecond))
	list, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(ctx, t, "web-ui-sso-workflows.png")
	if strings.Contains(list, "billing") {
		t.Errorf("alice, a viewer of shop/* only, sees another project's runs:\n%s", list)
	}

	// The run's page, from its link: its input and result are payloads
	// stored encrypted; the page shows them as JSON only because the browser
	// decoded them through the codec endpoint with alice's session. (A call
	// refused there, such as describing the run's task queue, would send her
	// to the UI's login page instead.)
	var page string
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.Search(`//a[contains(., "`+shopRun+`")]`))); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		page, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
		if err == nil && strings.Contains(page, `"specHash"`) && strings.Contains(page, `"revision"`) {
			break
		}
		if time.Now().After(deadline) {
			screenshot(ctx, t, "web-ui-sso-run.png")
			t.Fatalf("the run's page shows no decoded input and result after 1m (%v):\n%.4000s", err, page)
		}
	}
	screenshot(ctx, t, "web-ui-sso-run.png")
	if strings.Contains(page, "binary/encrypted") {
		t.Errorf("the run's page shows an encrypted payload:\n%s", page)
	}

	// The browser's session is what the codec endpoint answers: from the
	// UI's page, as the UI calls it, a round trip through /encode and
	// /decode.
	roundTrip, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(() => {
		const call = (op, body) => {
			const x = new XMLHttpRequest();
			x.open("POST", %q + "/" + op, false);
			x.withCredentials = true;
			x.setRequestHeader("Content-Type", "application/json");
			x.setRequestHeader("X-Namespace", "default");
			x.send(JSON.stringify(body));
			if (x.status !== 200) throw new Error(op + ": " + x.status + " " + x.responseText);
			return JSON.parse(x.responseText);
		};
		const sealed = call("encode", {payloads: [{metadata: {encoding: btoa("json/plain")}, data: btoa('"for alice"')}]});
		if (atob(sealed.payloads[0].metadata.encoding) === "json/plain") throw new Error("encode left the payload plain");
		return atob(call("decode", sealed).payloads[0].data);
	})()`, srv.info.CodecURL)))
	if err != nil || roundTrip != `"for alice"` {
		t.Errorf("codec round trip from alice's browser: %q, %v", roundTrip, err)
	}

	// Without her session, the codec endpoint answers nobody.
	decode := func(header, value string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.info.CodecURL+"/default/decode", strings.NewReader(`{"payloads":[]}`))
		req.Header.Set("Content-Type", "application/json")
		if header != "" {
			req.Header.Set(header, value)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := decode("", ""); code != http.StatusUnauthorized {
		t.Errorf("decode without credentials: %d %s, want 401", code, body)
	}
	if code, body := decode("Cookie", server.SessionCookie+"="+forgedSession(t, "alice", "shop-viewers")); code != http.StatusUnauthorized {
		t.Errorf("decode with a forged session: %d %s, want 401", code, body)
	}
	if code, body := decode("Authorization", "Bearer "+unsignedJWT(t, idp.Issuer, app.ID, "alice")); code != http.StatusUnauthorized {
		t.Errorf("decode with an unsigned token: %d %s, want 401", code, body)
	}
}

// listedWorkflows is the set of workflow IDs the UI server's list API
// returns to c.
func listedWorkflows(t *testing.T, c *http.Client, info server.Info) map[string]bool {
	t.Helper()
	var page struct {
		Executions []struct{ Execution struct{ WorkflowID string } }
	}
	getJSONWith(t, c, info.UIURL+"/api/v1/namespaces/"+url.PathEscape(info.Namespace)+"/workflows", &page)
	got := map[string]bool{}
	for _, x := range page.Executions {
		got[x.Execution.WorkflowID] = true
	}
	return got
}

// forgedSession is a session cookie's value in the server's format, for
// subject in group, signed by a key that is not the server's.
func forgedSession(t *testing.T, subject, group string) string {
	t.Helper()
	who, _ := json.Marshal(map[string]any{"n": subject, "g": []string{group}})
	payload := fmt.Sprintf("v2.%d.%s", time.Now().Add(time.Hour).Unix(), base64.RawURLEncoding.EncodeToString(who))
	sig := make([]byte, 32)
	if _, err := rand.Read(sig); err != nil {
		t.Fatal(err)
	}
	return payload + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// unsignedJWT is an ID token for subject with every claim right and no
// signature (alg "none").
func unsignedJWT(t *testing.T, issuer, audience, subject string) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	now := time.Now().Unix()
	return enc(map[string]any{"alg": "none", "typ": "JWT"}) + "." +
		enc(map[string]any{"iss": issuer, "aud": []string{audience}, "sub": subject, "iat": now, "exp": now + 3600, "groups": []string{"shop-viewers"}}) + "."
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestWebUI: kumo server's Web UI lists a project's runs, those made by a
// one-shot command before the server started included, reads them without
// offering to change them, and renders them in a real browser.
func TestWebUI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.project = "shop" // the home is the test's own; the name reads well in the screenshot
	e.ok("workspace", "create", "dev", "--file", e.writeSpec("dev.yaml", "context: {}\n"))
	e.flags = []string{"--workspace", "dev"}
	first := e.writeSpec("v1.yaml", manyConfigMaps(e.ns, 4))
	second := e.writeSpec("v2.yaml", manyConfigMaps(e.ns, 6))

	e.ok("apply", "--yes", "-f", first) // before the server: a one-shot run
	srv := e.startServer()
	e.detach("apply", "--yes", "-f", second)
	if rel := e.waitFinal(2 * time.Minute); rel.Phase != "succeeded" {
		t.Fatalf("detached apply: %+v", rel)
	}
	var runIDs []string
	for _, rev := range []int{1, 2} {
		id, _ := e.release(rev)["runID"].(string)
		runIDs = append(runIDs, id)
	}
	workflowID := "kumo/shop/dev"
	query := `KumoProject="shop" AND KumoWorkspace="dev"`

	t.Run("api", func(t *testing.T) {
		// Without logging in, the UI server's calls carry no credential and
		// the frontend refuses them.
		if code := httpStatus(srv.info.UIURL + "/api/v1/namespaces/default/workflows"); code != http.StatusUnauthorized {
			t.Errorf("the UI's API without a session: %d, want 401", code)
		}
		// The owner logs in with the URL the server printed, and the session
		// cookie it sets goes with every later call.
		jar, err := cookiejar.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		owner := &http.Client{Jar: jar}
		if resp, err := owner.Get(srv.info.LoginURL); err != nil {
			t.Fatal(err)
		} else {
			resp.Body.Close()
		}
		// The UI server's own API, as the UI's pages call it.
		var listed []string
		waitFor(t, "both runs in the UI's list", 30*time.Second, func() bool {
			var page struct {
				Executions []struct {
					Execution struct{ WorkflowID, RunID string }
				}
			}
			getJSONWith(t, owner, srv.info.UIURL+"/api/v1/namespaces/default/workflows?query="+url.QueryEscape(query), &page)
			listed = listed[:0]
			for _, x := range page.Executions {
				if x.Execution.WorkflowID == workflowID {
					listed = append(listed, x.Execution.RunID)
				}
			}
			return len(listed) == 2
		})
		for _, id := range runIDs {
			if !strings.Contains(strings.Join(listed, " "), id) {
				t.Errorf("run %s is not listed: %v", id, listed)
			}
		}

		var settings map[string]any
		getJSON(t, srv.info.UIURL+"/api/v1/settings", &settings)
		for _, k := range []string{"DisableWriteActions", "WorkflowTerminateDisabled", "WorkflowCancelDisabled", "WorkflowSignalDisabled"} {
			if settings[k] != true {
				t.Errorf("UI setting %s = %v, want true (read-only UI)", k, settings[k])
			}
		}
		// A write through the API is refused. (The Authorization header stands
		// in for a token, as an API client sends; it skips the CSRF check.)
		req, _ := http.NewRequest(http.MethodPost, srv.info.UIURL+"/api/v1/namespaces/default/workflows/"+url.PathEscape(workflowID)+"/terminate", strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer test")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("terminate through the read-only UI: %s, want 405", resp.Status)
		}
	})

	t.Run("chromium", func(t *testing.T) {
		browser := chromiumPath()
		if browser == "" {
			t.Skip("no chromium binary installed (Debian: apt-get install chromium); skipping the Web UI browser test")
		}
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1440, 900))...)
		defer cancelAlloc()
		bctx, cancelBrowser := chromedp.NewContext(actx)
		defer cancelBrowser()
		// Start the browser before timing the page, with no deadline: the
		// first call's context is the browser's life.
		if err := chromedp.Do(bctx); err != nil {
			t.Fatalf("start %s: %v", browser, err)
		}
		ctx, cancel := context.WithTimeout(bctx, 3*time.Minute) // a guard against a hang, not a timing: a loaded CI machine is slow
		defer cancel()

		summary := "apply shop/dev"
		start := time.Now()
		// The owner's browser logs in with the URL the server printed; the
		// login sends it to the runs.
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.info.LoginURL)); err != nil {
			t.Fatalf("log in: %v", err)
		}
		if err := chromedp.Do(ctx,
			chromedp.Navigate(srv.info.WorkflowsURL(query)),
			chromedp.WaitVisible(chromedp.Search(fmt.Sprintf(`//a[contains(., %q)]`, workflowID))),
		); err != nil {
			t.Fatalf("the workflows page lists no %s: %v", workflowID, err)
		}
		t.Logf("UI workflows page, first load until the runs show: %s", time.Since(start).Round(time.Millisecond))
		list, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
		if err != nil {
			t.Fatal(err)
		}
		screenshot(ctx, t, "web-ui-workflows.png")
		// The list has no room for summaries (the UI's list API carries none):
		// the run's page, as --detach links it, shows them. Summaries are
		// payloads, stored encrypted: the page shows them only because the
		// browser decodes them through kumo server's codec endpoint.
		if err := chromedp.Do(ctx,
			chromedp.Navigate(srv.info.RunURL(workflowID, runIDs[1])),
			chromedp.WaitVisible(chromedp.Search(fmt.Sprintf(`//*[contains(text(), %q)]`, summary))),
		); err != nil {
			t.Fatalf("the run's page shows no summary %q: %v", summary, err)
		}
		screenshot(ctx, t, "web-ui-run.png")
		for _, id := range runIDs {
			if !strings.Contains(list, id) {
				t.Errorf("the page does not show run %s", id)
			}
		}
	})
}

// screenshot saves the page as a test artifact (go test -artifacts).
func screenshot(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// chromiumPath is the first Chromium or Chrome on PATH, else "".
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	getJSONWith(t, http.DefaultClient, u, v)
}

func getJSONWith(t *testing.T, c *http.Client, u string, v any) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", u, resp.Status, data)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("GET %s: %v\n%s", u, err, data)
	}
}

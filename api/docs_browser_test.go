package api

import (
	"context"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDocsPageInChromium: /docs in headless Chromium lists every operation
// of the document, and its form sends a request to this server and shows
// the answer (here the 401 of a caller without a credential).
func TestDocsPageInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("no chromium binary installed (Debian: apt-get install chromium)")
	}
	srv := httptest.NewServer(newTestAPI(t))
	defer srv.Close()
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.Flag("disable-dev-shm-usage", true))...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start %s: %v", browser, err)
	}
	ctx, cancel := context.WithTimeout(bctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/docs"), chromedp.WaitVisible(chromedp.CSS("details"))); err != nil {
		t.Fatal(err)
	}
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("details").length`))
	if err != nil || n != len(routes) {
		t.Errorf("the page lists %d operations (%v), the document %d", n, err, len(routes))
	}
	// Try GET /api/v1/runs from its form.
	const sel = `//details[.//code[text()="/api/v1/runs"] and .//span[text()="GET"]]`
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.Search(sel+`/summary`)),
		chromedp.Click(chromedp.Search(sel+`//button`)),
		chromedp.WaitVisible(chromedp.Search(sel+`//pre[contains(., "401")]`)),
	); err != nil {
		t.Fatalf("send from the page: %v", err)
	}
	out, err := chromedp.Run(ctx, chromedp.Text(chromedp.Search(sel+`//pre`)))
	if err != nil || !strings.Contains(out, "urn:kumo:problem:unauthenticated") {
		t.Errorf("the page's answer: %q %v", out, err)
	}
}

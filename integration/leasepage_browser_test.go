package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/leasepage"
	"github.com/sqsloop/sqsloop/memmailbox"
	"github.com/sqsloop/sqsloop/visibility"
)

// chromium returns the browser the page tests drive: $CHROMIUM (which
// scripts/test.sh sets, after scripts/install-chromium.sh installed
// Debian's chromium when missing), else one on the PATH. Without one the
// test skips, saying how to get one, except under CI=true, where it fails.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium: scripts/test.sh installs it (scripts/install-chromium.sh)")
	}
	t.Skip("\n*** SKIPPING: no Chromium to render the lease page in; run scripts/install-chromium.sh or set CHROMIUM")
	return ""
}

// The lease page in a real headless Chromium: a consumer on memmailbox has
// four handlers running, three beating and one that never beats; the page,
// served over HTTP, shows one row per in-flight message, with its message
// ID, and a lease bar for each (the beating ones marked with beats, the
// other orange). The screenshot is kept as the test's artifact
// (leasepage.png; go test -artifacts keeps it).
func TestLeasePageInChromium(t *testing.T) {
	browser := chromium(t)
	b := new(memmailbox.Broker)
	defer b.Close()
	q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	res, err := q.Send(ctx, []sqsloop.OutgoingMessage{{Body: "beat"}, {Body: "beat"}, {Body: "beat"}, {Body: "stuck"}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range res {
		ids = append(ids, r.MessageID)
	}
	page := leasepage.New(leasepage.Options{Title: "jobs"})
	release := make(chan struct{})
	var started sync.WaitGroup
	started.Add(len(ids))
	c, err := consumer.New(q, func(ctx context.Context, m *sqsloop.Message) error {
		started.Done()
		for {
			if m.Body == "beat" {
				heartbeat.Beat(ctx)
			}
			select {
			case <-release:
				return nil
			case <-time.After(100 * time.Millisecond):
			}
		}
	}, consumer.Config{Concurrency: 4, VisibilityTimeout: 10 * time.Second, WaitTime: time.Second,
		Visibility: visibility.Config{Interval: 500 * time.Millisecond, Extension: 10 * time.Second}, Logger: quietLogger, Observer: page})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(context.Background()) }()
	defer func() {
		close(release)
		if err := c.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	started.Wait()
	srv := httptest.NewServer(page)
	defer srv.Close()
	// The beating leases' first extensions (as their deadlines near, 1.25 s
	// before them), so the page shows extensions and beats: waiting on the
	// page's own count (its JSON) rather than on time.
	for deadline := time.Now().Add(2 * patience); ; time.Sleep(50 * time.Millisecond) {
		var v struct{ Extensions int }
		resp, err := http.Get(srv.URL + "?format=json")
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if v.Extensions >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d extensions within %v, want 3 (one per beating lease)", v.Extensions, 2*patience)
		}
	}

	actx, cancel := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(browser), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 700))
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	// The first call starts the browser, so it gets no timeout of its own
	// (that would stop the browser); the later ones do.
	if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/debug/sqsloop"), chromedp.WaitVisible("#in-flight")); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(bctx, time.Minute)
	defer cancel()
	shown, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('tr.lease')).map(r => r.dataset.messageId)`))
	if err != nil {
		t.Fatal(err)
	}
	bars, err := chromedp.Run(tctx, chromedp.Evaluate[int](`document.querySelectorAll('tr.lease svg.bar rect.lease').length`))
	if err != nil {
		t.Fatal(err)
	}
	beats, err := chromedp.Run(tctx, chromedp.Evaluate[int](`document.querySelectorAll('tr.lease svg.bar line.beat').length`))
	if err != nil {
		t.Fatal(err)
	}
	never, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.querySelector('tr.lease[data-message-id="`+ids[3]+`"] td:nth-child(5)').textContent`))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	artifact := filepath.Join(t.ArtifactDir(), "leasepage.png")
	if err := os.WriteFile(artifact, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", artifact, len(shot))
	if !slices.Equal(sorted(shown), sorted(ids)) {
		t.Errorf("the page shows rows %v, want the four in flight %v", shown, ids)
	}
	if never != "never" {
		t.Errorf("the stuck handler's row says %q since its last beat, want never", never)
	}
	if bars != 4 || beats < 6 {
		t.Errorf("%d lease bars with %d beats marked, want 4 bars and the three beating handlers' beats (≥ 6)", bars, beats)
	}
}

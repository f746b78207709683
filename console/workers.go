package console

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// withDefaults returns w with its name and drain URL filled in.
func (w Worker) withDefaults() Worker {
	u, _ := url.Parse(w.LeasePage) // checked by Options.validate
	if w.Name == "" {
		w.Name = u.Host
	}
	if w.Drain == "" {
		w.Drain = u.Scheme + "://" + u.Host
	}
	w.Drain = strings.TrimSuffix(w.Drain, "/")
	return w
}

// workerView is one worker as the workers page shows it: its lease page
// (as leasepage serves it in JSON, the fields the console shows) and its
// drain state.
type workerView struct {
	Index int
	Name  string
	URL   string
	Err   string
	Page  struct {
		InFlight []struct {
			MessageID    string   `json:"message_id"`
			State        string   `json:"state"`
			ReceiveCount int      `json:"receive_count"`
			MessageGroup string   `json:"message_group"`
			Age          float64  `json:"age_seconds"`
			SinceBeat    *float64 `json:"since_beat_seconds"`
			DeadlineIn   float64  `json:"deadline_in_seconds"`
			Extensions   int      `json:"extensions"`
		} `json:"in_flight"`
		Outcomes map[string]int64 `json:"outcomes"`
		Receives int64            `json:"receives"`
		Held     int              `json:"held"`
	}
	Drain struct {
		State string `json:"state"`
		Loops []struct {
			Name     string `json:"name"`
			State    string `json:"state"`
			InFlight int    `json:"in_flight"`
		} `json:"loops"`
	}
	DrainErr string
}

// readWorkers reads every worker's lease page and drain state at once,
// each within the console's HTTP client's timeout.
func (c *Console) readWorkers(ctx context.Context) []workerView {
	out := make([]workerView, len(c.workers))
	var wg sync.WaitGroup
	for i, w := range c.workers {
		out[i] = workerView{Index: i, Name: w.Name, URL: w.LeasePage}
		wg.Go(func() {
			v := &out[i]
			u, _ := url.Parse(w.LeasePage)
			q := u.Query()
			q.Set("format", "json")
			u.RawQuery = q.Encode()
			if err := c.getJSON(ctx, u.String(), &v.Page); err != nil {
				v.Err = err.Error()
			}
			if err := c.getJSON(ctx, w.Drain+"/drain", &v.Drain); err != nil {
				v.DrainErr = err.Error()
			}
		})
	}
	wg.Wait()
	return out
}

// getJSON reads the JSON at u into v.
func (c *Console) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s: %s: %s", u, resp.Status, strings.TrimSpace(string(b)))
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(v)
}

// drainWorker POSTs to worker i's drain endpoint: op is "drain" or
// "resume".
func (c *Console) drainWorker(ctx context.Context, i int, op string) error {
	if i < 0 || i >= len(c.workers) || (op != "drain" && op != "resume") {
		return fmt.Errorf("no worker %d, or no operation %q", i, op)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.workers[i].Drain+"/"+op, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s %s: %s: %s", op, c.workers[i].Name, resp.Status, strings.TrimSpace(string(b)))
	}
	return nil
}

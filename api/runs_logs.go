package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/runspec"
)

// logPollInterval is how often a followed log is looked at, as `kumo run
// logs --follow` does.
const logPollInterval = 500 * time.Millisecond

func getRunLogs(c *call) error {
	info, err := c.findRun(authz.Logs)
	if err != nil {
		return err
	}
	switch c.r.URL.Query().Get("follow") {
	case "", "0", "false":
		log, err := c.kc.RunLog(c.ctx, info.RunID)
		if err != nil {
			return err
		}
		writeBody(c.w, c.r, http.StatusOK, "text/plain; charset=utf-8", log, true)
		return nil
	case "1", "true":
		return c.followLog(info)
	}
	return invalid(fmt.Errorf("follow %q: want 1 or 0", c.r.URL.Query().Get("follow")))
}

// followLog streams the run's log as server-sent events while the run
// goes: a "log" event per new line, a "node" event per resource whose step
// changed, and one "end" event with the run's status when it has ended.
func (c *call) followLog(info *client.RunInfo) error {
	flusher, ok := c.w.(http.Flusher)
	if !ok {
		return fmt.Errorf("the connection cannot stream")
	}
	run, _, err := c.kc.OpenRun(c.ctx, info.Project, info.RunID)
	if err != nil {
		return err
	}
	h := c.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	c.w.WriteHeader(http.StatusOK)
	send := func(event string, data []byte) {
		fmt.Fprintf(c.w, "event: %s\n", event)
		for _, line := range bytes.Split(data, []byte("\n")) {
			fmt.Fprintf(c.w, "data: %s\n", line)
		}
		fmt.Fprint(c.w, "\n")
	}
	var printed []byte
	sendNew := func(ctx context.Context) {
		log, err := c.kc.RunLog(ctx, info.RunID)
		if err != nil || !bytes.HasPrefix(log, printed) {
			return // none yet; a part is only ever added after the ones before it
		}
		for _, line := range strings.SplitAfter(string(log[len(printed):]), "\n") {
			if line == "" {
				continue
			}
			if !strings.HasSuffix(line, "\n") {
				break // the rest of the line comes with the next part
			}
			send("log", []byte(strings.TrimSuffix(line, "\n")))
			printed = append(printed, line...)
		}
	}
	nodes := map[string]runspec.NodeStatus{}
	var seq uint64
	ticker := time.NewTicker(logPollInterval)
	defer ticker.Stop()
	for {
		sendNew(c.ctx)
		now, err := run.Info(c.ctx)
		if err != nil {
			send("error", []byte(err.Error()))
			flusher.Flush()
			return nil
		}
		if !now.Running() {
			sendNew(c.ctx) // the last part is written as the run ends
			end, _ := json.Marshal(map[string]string{"id": now.RunID, "status": now.Status})
			send("end", end)
			flusher.Flush()
			return nil
		}
		if p, next, err := run.ProgressSince(c.ctx, seq, false); err == nil {
			seq = next
			for _, n := range p.Nodes {
				if nodes[n.ID] != n.Status {
					nodes[n.ID] = n.Status
					data, _ := json.Marshal(n)
					send("node", data)
				}
			}
		}
		flusher.Flush()
		select {
		case <-c.r.Context().Done():
			return nil
		case <-ticker.C:
		}
	}
}

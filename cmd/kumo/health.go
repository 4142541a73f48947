package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// healthServer serves /livez (the process answers) and /readyz (the worker
// polls: not before it started, not once it is stopping) for probes.
type healthServer struct {
	ready atomic.Bool
	srv   *http.Server
}

func startHealth(address string, log *slog.Logger) (*healthServer, error) {
	h := &healthServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/livez", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !h.ready.Load() {
			http.Error(w, "not polling", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return h, serve(address, "health", mux, &h.srv, log)
}

// serve listens on address (so a taken port fails the command at once) and
// serves handler in the background.
func serve(address, what string, handler http.Handler, srv **http.Server, log *slog.Logger) error {
	ln, err := net.Listen("tcp", address)
	if err != nil {
		return fmt.Errorf("--%s-address: %w", what, err)
	}
	*srv = &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := (*srv).Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("serve "+what, "error", err)
		}
	}()
	log.Info("serving "+what, "address", ln.Addr().String())
	return nil
}

func (h *healthServer) stop() {
	if h == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = h.srv.Shutdown(ctx)
}

func (h *healthServer) setReady(ready bool) {
	if h != nil {
		h.ready.Store(ready)
	}
}

// logger is the worker's slog logger on stderr: --log-format text or json,
// debug with --debug.
func logger(format string, debug bool) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if debug {
		opts.Level = slog.LevelDebug
	}
	switch format {
	case "", "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

const slogWarn = slog.LevelWarn

// slogAtLeast is log without the records below level.
func slogAtLeast(log *slog.Logger, level slog.Level) *slog.Logger {
	return slog.New(minLevel{log.Handler(), level})
}

type minLevel struct {
	slog.Handler
	level slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.level && m.Handler.Enabled(ctx, l)
}
func (m minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{m.Handler.WithAttrs(a), m.level}
}
func (m minLevel) WithGroup(g string) slog.Handler { return minLevel{m.Handler.WithGroup(g), m.level} }

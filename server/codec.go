package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/kumoproj/kumo/codec"
	"github.com/kumoproj/kumo/internal/keyring"
)

// codecServer serves the Temporal codec server protocol for the Web UI (and
// the temporal CLI's --codec-endpoint) on its own listener: whoever reaches it
// can read every payload, so it listens on loopback unless told otherwise.
type codecServer struct {
	url     string
	handler *codec.Handler
	srv     *http.Server
	done    chan struct{}
}

// startCodecServer listens on address (host:port, port 0 for any free one).
func startCodecServer(address string, keys *keyring.Ring) (*codecServer, error) {
	l, err := net.Listen("tcp", address)
	if err != nil {
		return nil, fmt.Errorf("codec endpoint address %s is not available (in use by another program?): %w", address, err)
	}
	cs := &codecServer{
		url:     "http://" + l.Addr().String(),
		handler: codec.NewHandler(keys),
		done:    make(chan struct{}),
	}
	cs.srv = &http.Server{Handler: cs.handler, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(cs.done)
		if err := cs.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener is gone: requests fail, the server goes on
		}
	}()
	return cs, nil
}

func (cs *codecServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = cs.srv.Shutdown(ctx)
	<-cs.done
}

// allowUI lets the Web UI at uiURL call the endpoint from the browser, under
// any of the loopback names it may be opened by when it listens on loopback.
func (cs *codecServer) allowUI(uiURL string) {
	cs.handler.AllowOrigin(uiURL)
	u, err := url.Parse(uiURL)
	if err != nil {
		return
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return
	}
	for _, h := range []string{"localhost", "127.0.0.1", "[::1]"} {
		cs.handler.AllowOrigin(u.Scheme + "://" + h + ":" + u.Port())
	}
}

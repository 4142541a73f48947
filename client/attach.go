package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/kumoproj/kumo/server/embedded"
)

// ServerFileName is the file under $KUMO_HOME in which a running `kumo server`
// says where it is.
const ServerFileName = "server.json"

// ServerInfo is what `kumo server` records in $KUMO_HOME/server.json while it
// runs, for the other kumo commands on that home to attach to it.
type ServerInfo struct {
	PID int `json:"pid"`
	// Address is the Temporal frontend, host:port.
	Address   string `json:"address"`
	Namespace string `json:"namespace"`
	// UIURL is the Web UI's root; empty when the server is headless.
	UIURL string `json:"uiURL,omitempty"`
	// Backend is the server worker's --backend; empty for the home itself.
	Backend string    `json:"backend,omitempty"`
	Started time.Time `json:"started"`
	// CodecKeyFile holds the keys the server's worker decrypts payloads with;
	// empty when the codec is off.
	CodecKeyFile string `json:"codecKeyFile,omitempty"`
	// CodecURL is the codec endpoint (POST /decode, /encode) the Web UI uses.
	CodecURL string `json:"codecURL,omitempty"`
}

// WorkflowsURL is the UI's list of runs, filtered by a visibility query if
// query is not empty; "" when the server has no UI.
func (s *ServerInfo) WorkflowsURL(query string) string {
	if s.UIURL == "" {
		return ""
	}
	u := s.UIURL + "/namespaces/" + url.PathEscape(s.Namespace) + "/workflows"
	if query != "" {
		u += "?query=" + url.QueryEscape(query)
	}
	return u
}

// RunURL is the UI's page of one run; "" when the server has no UI.
func (s *ServerInfo) RunURL(workflowID, runID string) string {
	if s.UIURL == "" {
		return ""
	}
	// The UI takes the workflow ID as one path segment: kumo/shop/dev is
	// kumo%2Fshop%2Fdev.
	return s.UIURL + "/namespaces/" + url.PathEscape(s.Namespace) + "/workflows/" +
		url.PathEscape(workflowID) + "/" + url.PathEscape(runID) + "/history"
}

func serverFile(home string) string { return filepath.Join(home, ServerFileName) }

func temporalDir(home string) string { return filepath.Join(home, "temporal") }

// writeServerInfo records info in home's server.json, atomically: readers
// see the old file or the new one, never half of it.
func writeServerInfo(home string, info ServerInfo) error {
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	path := serverFile(home)
	tmp := path + ".tmp-" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// removeServerInfo removes home's server.json if it is still this process's.
func removeServerInfo(home string) error {
	info, err := readServerInfo(home)
	if err != nil || info == nil || info.PID != os.Getpid() {
		return err
	}
	if err := os.Remove(serverFile(home)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// readServerInfo reads home's server.json: nil if there is none, or if it is
// not a server's record (nothing to attach to).
func readServerInfo(home string) (*ServerInfo, error) {
	data, err := os.ReadFile(serverFile(home))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", serverFile(home), err)
	}
	var info ServerInfo
	if err := json.Unmarshal(data, &info); err != nil || info.PID <= 0 || info.Address == "" {
		return nil, nil
	}
	return &info, nil
}

// LiveServer returns the `kumo server` running on home, or nil if there is
// none. A server.json left by a killed server is ignored: the server must be
// alive and hold the home's Temporal database lock, which the kernel releases
// when a process dies, so a reused pid cannot pass for it.
func LiveServer(home string) (*ServerInfo, error) {
	info, err := readServerInfo(home)
	if err != nil || info == nil {
		return nil, err
	}
	if err := syscall.Kill(info.PID, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return nil, nil // no such process
	}
	pid, held, err := embedded.Holder(temporalDir(home))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", serverFile(home), err)
	}
	if !held || pid != info.PID {
		return nil, nil
	}
	return info, nil
}

// ErrNoServer is returned by a client that must not start an embedded server
// (see RequireServer) when no kumo server runs on its home.
var ErrNoServer = errors.New("no kumo server is running")

// RequireServer makes the client refuse to run Temporal in its own process:
// it attaches to a kumo server (or uses the address given) or fails with
// ErrNoServer. For runs that must go on after the command exits.
func (c *Client) RequireServer() { c.requireServer = true }

// Server is the kumo server this client attached to; nil if it did not (yet).
func (c *Client) Server() *ServerInfo { return c.attached }

// temporalAddress finds this client's Temporal: the address it was given,
// else a live kumo server on its home (attach: no embedded server, no lock),
// else a one-shot embedded server started in this process.
func (c *Client) temporalAddress(ctx context.Context) (string, error) {
	if c.opts.TemporalAddress != "" {
		return c.opts.TemporalAddress, nil
	}
	home := absHome(c.opts.Home)
	info, err := LiveServer(home)
	if err != nil {
		return "", err
	}
	if info != nil {
		if err := c.canAttach(home, info); err != nil {
			return "", err
		}
		c.attached = info
		return info.Address, nil
	}
	if c.requireServer {
		return "", fmt.Errorf("%w on %s: start one with `kumo server --home %s`, or pass --temporal-address", ErrNoServer, home, home)
	}
	srv, err := embedded.Start(ctx, embedded.Options{Dir: temporalDir(home), Namespace: c.opts.Namespace, Logger: c.opts.Logger})
	var locked *embedded.LockedError
	if errors.As(err, &locked) {
		return "", &homeBusyError{home: home, locked: locked}
	}
	if err != nil {
		return "", err
	}
	c.server = srv
	return srv.Address(), nil
}

// canAttach refuses a server that would run this client's runs somewhere else
// than where the client reads them.
func (c *Client) canAttach(home string, info *ServerInfo) error {
	if info.Namespace != c.opts.Namespace {
		return fmt.Errorf("the kumo server on %s (pid %d) serves Temporal namespace %q, not %q: use --temporal-namespace %s, or stop it and start `kumo server --temporal-namespace %s`",
			home, info.PID, info.Namespace, c.opts.Namespace, info.Namespace, c.opts.Namespace)
	}
	if info.CodecKeyFile != keyFile(c.keys) {
		return fmt.Errorf("the kumo server on %s (pid %d) encrypts payloads with the codec key file %q, this command with %q: use the same KUMO_CODEC_KEY_FILE for both",
			home, info.PID, info.CodecKeyFile, keyFile(c.keys))
	}
	if info.Backend != c.opts.Backend {
		return fmt.Errorf("the kumo server on %s (pid %d) keeps releases in %s, this command in %s: stop it and start `kumo server --backend %s`",
			home, info.PID, backendName(info.Backend, home), backendName(c.opts.Backend, home), c.opts.Backend)
	}
	return nil
}

func backendName(backend, home string) string {
	if backend == "" {
		return home
	}
	return backend
}

// homeBusyError: without a kumo server, one kumo command at a time may use a
// home's Temporal database.
type homeBusyError struct {
	home   string
	locked *embedded.LockedError
}

func (e *homeBusyError) Error() string {
	return fmt.Sprintf("another kumo command%s is using %s; wait for it to finish, or start `kumo server --home %s` so that any number of kumo commands can use it at once",
		e.locked.Holder(), e.home, e.home)
}

func (e *homeBusyError) Unwrap() error { return e.locked }

func absHome(home string) string {
	if a, err := filepath.Abs(home); err == nil {
		return a
	}
	return home
}

package server

import (
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

// FileName is the file under $KUMO_HOME in which a running `kumo server`
// says where it is.
const FileName = "server.json"

// Info is what `kumo server` records in $KUMO_HOME/server.json while it
// runs, for the other kumo commands on that home to attach to it.
type Info struct {
	PID int `json:"pid"`
	// Address is the Temporal frontend, host:port, as a client on this
	// machine dials it.
	Address string `json:"address"`
	// Listen is the address the frontend is bound to (0.0.0.0:7233 for every
	// interface).
	Listen string `json:"listen,omitempty"`
	// TLSCAFile is the operator's CA when the frontend serves the operator's
	// certificate; clients of the home trust it besides the home's CA.
	TLSCAFile string `json:"tlsCAFile,omitempty"`
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
	// APIURL is the root of the HTTP API (/api/v1), its document
	// (/openapi.json) and docs page (/docs); empty when none is served.
	APIURL string `json:"apiURL,omitempty"`
	// LoginURL logs the home's owner in to the Web UI (a browser without the
	// session it sets can call nothing); the file is readable by the owner
	// only.
	LoginURL string `json:"loginURL,omitempty"`
	// SSOLoginURL logs anyone in to the Web UI through the OIDC issuer, and
	// SSOCallbackURL is where the issuer sends them back (the redirect URI
	// registered for the client); empty without single sign-on.
	SSOLoginURL    string `json:"ssoLoginURL,omitempty"`
	SSOCallbackURL string `json:"ssoCallbackURL,omitempty"`
}

// WorkflowsURL is the UI's list of runs, filtered by a visibility query if
// query is not empty; "" when the server has no UI.
func (s *Info) WorkflowsURL(query string) string {
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
func (s *Info) RunURL(workflowID, runID string) string {
	if s.UIURL == "" {
		return ""
	}
	// The UI takes the workflow ID as one path segment: kumo/shop/dev is
	// kumo%2Fshop%2Fdev.
	return s.UIURL + "/namespaces/" + url.PathEscape(s.Namespace) + "/workflows/" +
		url.PathEscape(workflowID) + "/" + url.PathEscape(runID) + "/history"
}

func infoFile(home string) string { return filepath.Join(home, FileName) }

// TemporalDir is where home's Temporal database lives: the server's, and that
// of the one-shot embedded server a command starts when no server runs.
func TemporalDir(home string) string { return filepath.Join(home, "temporal") }

// writeInfo records info in home's server.json, atomically: readers see the
// old file or the new one, never half of it.
func writeInfo(home string, info Info) error {
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	path := infoFile(home)
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

// removeInfo removes home's server.json if it is still this process's.
func removeInfo(home string) error {
	info, err := ReadInfo(home)
	if err != nil || info == nil || info.PID != os.Getpid() {
		return err
	}
	if err := os.Remove(infoFile(home)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// ReadInfo reads home's server.json: nil if there is none, or if it is not a
// server's record (nothing to attach to). The server may have died since it
// wrote it: Live is the one to attach to.
func ReadInfo(home string) (*Info, error) {
	data, err := os.ReadFile(infoFile(home))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", infoFile(home), err)
	}
	var info Info
	if err := json.Unmarshal(data, &info); err != nil || info.PID <= 0 || info.Address == "" {
		return nil, nil
	}
	return &info, nil
}

// Live returns the `kumo server` running on home, or nil if there is none. A
// server.json left by a killed server is ignored: the server must be alive
// and hold the home's Temporal database lock, which the kernel releases when a
// process dies, so a reused pid cannot pass for it.
func Live(home string) (*Info, error) {
	info, err := ReadInfo(home)
	if err != nil || info == nil {
		return nil, err
	}
	if err := syscall.Kill(info.PID, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return nil, nil // no such process
	}
	pid, held, err := embedded.Holder(TemporalDir(home))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", infoFile(home), err)
	}
	if !held || pid != info.PID {
		return nil, nil
	}
	return info, nil
}

package tfhttp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/kumoproj/kumo/backend"
)

// Options say where the state service is and how to speak to it.
type Options struct {
	// Base is the URL documents are named under: <Base>/<escaped name>.
	Base *url.URL
	// UpdateMethod stores a document: POST (Terraform's default) or PUT.
	UpdateMethod string
	// LockMethod and UnlockMethod lock and unlock a document: LOCK and UNLOCK
	// (Terraform's defaults), or POST and DELETE for GitLab.
	LockMethod, UnlockMethod string
	// LockSuffix is appended to a document's address to make its lock address
	// ("" : the document's own address; GitLab: "/lock").
	LockSuffix string
	// Username and Password are sent as basic auth; Token as a bearer token.
	// At most one of the two is set.
	Username, Password, Token string
	// Client sends the requests (nil: a client with a 30 s timeout).
	Client *http.Client
}

// StaleLock is how old a lock kumo took must be before another kumo breaks it:
// kumo holds a lock for a few requests, never minutes.
const StaleLock = 2 * time.Minute

// Backend stores kumo's records in a Terraform http state service.
type Backend struct {
	*backend.Store
	driver *Driver
}

var _ backend.Backend = (*Backend)(nil)

// IsURL reports whether raw names an http state service.
func IsURL(raw string) bool {
	return strings.HasPrefix(raw, "https://") || strings.HasPrefix(raw, "http://")
}

// ParseURL reads a backend URL: https://host[:port]/path[?options], where the
// options are update_method, lock_method, unlock_method and lock_suffix.
// Credentials come from the environment (getenv), never from the URL.
func ParseURL(raw string, getenv func(string) string) (Options, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Options{}, fmt.Errorf("backend URL: does not parse as https://host/path")
	}
	where := Redact(raw)
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return Options{}, fmt.Errorf("backend URL %s: want https://host/path", where)
	}
	if _, ok := u.User.Password(); ok {
		return Options{}, fmt.Errorf("backend URL %s: holds a password: remove it and set TF_HTTP_PASSWORD (or TF_HTTP_PASSWORD_FILE), or KUMO_HTTP_TOKEN for a bearer token; a URL is seen in process lists and project files", where)
	}
	if u.Fragment != "" {
		return Options{}, fmt.Errorf("backend URL %s: a fragment is not allowed", where)
	}
	o := Options{UpdateMethod: http.MethodPost, LockMethod: "LOCK", UnlockMethod: "UNLOCK"}
	for k, v := range u.Query() {
		if len(v) != 1 {
			return Options{}, fmt.Errorf("backend URL %s: option %s is given %d times", where, k, len(v))
		}
		switch val := v[0]; k {
		case "update_method":
			if val != http.MethodPost && val != http.MethodPut {
				return Options{}, fmt.Errorf("backend URL %s: update_method must be POST or PUT", where)
			}
			o.UpdateMethod = val
		case "lock_method":
			o.LockMethod = val
		case "unlock_method":
			o.UnlockMethod = val
		case "lock_suffix":
			if val != "" && (!strings.HasPrefix(val, "/") || strings.ContainsAny(val, "?#")) {
				return Options{}, fmt.Errorf("backend URL %s: lock_suffix must be a path starting with '/'", where)
			}
			o.LockSuffix = val
		default:
			return Options{}, fmt.Errorf("backend URL %s: unknown option %q (known: update_method, lock_method, unlock_method, lock_suffix)", where, k)
		}
	}
	base := *u
	base.RawQuery, base.User = "", nil
	base.Path = strings.TrimSuffix(base.Path, "/")
	base.RawPath = ""
	o.Base = &base
	if u.User != nil {
		o.Username = u.User.Username()
	}
	if err := o.credentials(getenv); err != nil {
		return Options{}, fmt.Errorf("backend URL %s: %w", where, err)
	}
	if o.Username != "" || o.Token != "" {
		if u.Scheme == "http" && !isLoopback(u.Hostname()) {
			return Options{}, fmt.Errorf("backend URL %s: refusing to send credentials over plain http to a host that is not loopback: use https", where)
		}
	}
	return o, nil
}

// credentials reads basic auth or a bearer token from the environment.
func (o *Options) credentials(getenv func(string) string) error {
	if u := getenv("TF_HTTP_USERNAME"); u != "" {
		o.Username = u
	}
	pw, err := secret(getenv, "TF_HTTP_PASSWORD")
	if err != nil {
		return err
	}
	token, err := secret(getenv, "KUMO_HTTP_TOKEN")
	if err != nil {
		return err
	}
	switch {
	case token != "" && (pw != "" || o.Username != ""):
		return errors.New("both basic auth (TF_HTTP_USERNAME/TF_HTTP_PASSWORD) and a bearer token (KUMO_HTTP_TOKEN) are set: set one")
	case pw != "" && o.Username == "":
		return errors.New("TF_HTTP_PASSWORD is set without a user name: set TF_HTTP_USERNAME")
	}
	o.Password, o.Token = pw, token
	return nil
}

// secret reads name, or the file name_FILE names; both set is an error.
func secret(getenv func(string) string, name string) (string, error) {
	val, file := getenv(name), getenv(name+"_FILE")
	switch {
	case val != "" && file != "":
		return "", fmt.Errorf("both %s and %s_FILE are set: set one", name, name)
	case file != "":
		data, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("%s_FILE: %w", name, err)
		}
		s := strings.TrimSpace(string(data))
		if s == "" {
			return "", fmt.Errorf("%s_FILE: %s is empty", name, file)
		}
		return s, nil
	}
	return val, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Redact returns raw without a password, for messages.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		scheme, _, _ := strings.Cut(raw, ":")
		return scheme + "://(unparsable URL)"
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	return u.String()
}

// New connects to the service raw names, with credentials from the
// environment, and checks that it answers and accepts them (a GET of the root
// index), so a misconfiguration fails before any run starts.
func New(ctx context.Context, raw string) (*Backend, error) {
	o, err := ParseURL(raw, os.Getenv)
	if err != nil {
		return nil, err
	}
	d, err := NewDriver(ctx, o)
	if err != nil {
		return nil, err
	}
	return &Backend{Store: backend.NewStore(d), driver: d}, nil
}

// NewDriver returns the driver over the service o names, after one GET that
// checks the service answers and accepts the credentials.
func NewDriver(ctx context.Context, o Options) (*Driver, error) {
	if o.Base == nil {
		return nil, errors.New("http backend: no URL given")
	}
	if o.UpdateMethod == "" {
		o.UpdateMethod = http.MethodPost
	}
	if o.LockMethod == "" {
		o.LockMethod = "LOCK"
	}
	if o.UnlockMethod == "" {
		o.UnlockMethod = "UNLOCK"
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 30 * time.Second}
	}
	d := &Driver{o: o, who: who()}
	if _, _, err := d.getIndex(ctx, ""); err != nil {
		return nil, fmt.Errorf("http backend %s: %w", o.Base.Redacted(), err)
	}
	return d, nil
}

// who names this process in lock infos: host and process ID.
func who() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("kumo@%s (pid %d)", host, os.Getpid())
}

// String names the backend by its base URL.
func (b *Backend) String() string { return b.driver.o.Base.String() }

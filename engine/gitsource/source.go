// Package gitsource reads stacks from git repositories: a Source names a
// repository, a ref and the stack's path in it, with the credentials to reach
// it (files on the worker, never their content); Resolve asks the remote which
// commit the ref is at (one ls-remote), and Fetch puts one commit's tree into a
// cache directory keyed by commit, shallow, size-limited, without submodules,
// refusing paths and symlinks that lead out of the checkout.
//
// It runs the git CLI with an environment of its own: no system or global git
// configuration, no prompts, only the https, http and ssh transports, and
// credentials passed in the environment (never on a command line another user
// can read, never in an error).
package gitsource

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"regexp"
	"strings"
)

// Source is a stack in a git repository, as an administrator added it.
type Source struct {
	Name string `json:"name"`
	// Project and Stack are the project.yaml and stack.yaml names found at
	// Path when the source was added: runs started from the source are
	// runs of that project's stack.
	Project string `json:"project"`
	Stack   string `json:"stack,omitempty"`
	// URL is the repository: https://host/path, ssh://[user@]host[:port]/path,
	// user@host:path, or http:// to a loopback host.
	URL string `json:"url"`
	// Ref is a branch or tag name (main, v1.2.0) or a full ref (refs/heads/main).
	Ref string `json:"ref"`
	// Path is the stack directory inside the repository ("" is its root).
	Path string `json:"path,omitempty"`
	Auth Auth   `json:"auth,omitzero"`
	// KnownHosts is the known_hosts file an ssh URL's host key is checked
	// against (required for ssh).
	KnownHosts string `json:"knownHosts,omitempty"`
	// WebhookSecretFile holds the HMAC secret of POST /hooks/git for this
	// source's repository (none: the webhook ignores the source).
	WebhookSecretFile string `json:"webhookSecretFile,omitempty"`
}

// Auth names the files holding a source's credentials; the files are read
// when git runs, so their content is never stored, logged or in a history.
type Auth struct {
	// TokenFile holds an HTTPS access token (GitHub, GitLab, Gitea).
	TokenFile string `json:"tokenFile,omitempty"`
	// SSHKeyFile holds a private key for an ssh URL.
	SSHKeyFile string `json:"sshKeyFile,omitempty"`
}

// ParseAuth reads the --auth flag: token-file=F or ssh-key=F.
func ParseAuth(s string) (Auth, error) {
	kind, file, ok := strings.Cut(s, "=")
	if !ok || file == "" {
		return Auth{}, fmt.Errorf("--auth %q: want token-file=FILE or ssh-key=FILE", s)
	}
	switch kind {
	case "token-file":
		return Auth{TokenFile: file}, nil
	case "ssh-key":
		return Auth{SSHKeyFile: file}, nil
	}
	return Auth{}, fmt.Errorf("--auth %q: unknown kind %q, want token-file=FILE or ssh-key=FILE", s, kind)
}

// transport is how a URL is reached.
type transport int

const (
	transportHTTPS transport = iota
	transportHTTP
	transportSSH
)

var (
	// scpLike is git's user@host:path form (ssh).
	scpLike = regexp.MustCompile(`^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^:]`)
	hexID   = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)
)

// classify checks a repository URL and says how it is reached. Credentials
// in the URL are refused (they would be stored and shown): they go in a file.
func classify(raw string) (transport, error) {
	switch {
	case raw == "":
		return 0, fmt.Errorf("--git: the repository URL is empty")
	case strings.HasPrefix(raw, "-"), strings.ContainsAny(raw, " \t\r\n\x00"):
		return 0, fmt.Errorf("--git %q: not a repository URL", raw)
	case scpLike.MatchString(raw) && !strings.Contains(raw, "://"):
		return transportSSH, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return 0, fmt.Errorf("--git %q: %v", raw, err)
	}
	if u.Host == "" {
		return 0, fmt.Errorf("--git %q: want https://HOST/PATH, ssh://HOST/PATH or USER@HOST:PATH (local paths and file:// are not read)", raw)
	}
	if _, has := u.User.Password(); has || (u.User != nil && u.Scheme != "ssh") {
		return 0, fmt.Errorf("--git %s: credentials in the URL would be stored and shown: put the token in a file and pass --auth token-file=FILE", u.Redacted())
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return 0, fmt.Errorf("--git %q: a repository URL has no query or fragment", raw)
	}
	switch u.Scheme {
	case "https":
		return transportHTTPS, nil
	case "ssh":
		return transportSSH, nil
	case "http":
		if !loopback(u.Hostname()) {
			return 0, fmt.Errorf("--git %s: plain http only reaches a loopback host; use https", raw)
		}
		return transportHTTP, nil
	}
	return 0, fmt.Errorf("--git %q: scheme %q is not read; want https, ssh (or http to a loopback host)", raw, u.Scheme)
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkRef applies git's rules for ref names (git check-ref-format) that
// matter here, and refuses what git would read as an option.
func checkRef(ref string) error {
	bad := func(why string) error { return fmt.Errorf("--ref %q: %s", ref, why) }
	switch {
	case ref == "":
		return bad("empty")
	case len(ref) > 255:
		return bad("longer than 255 characters")
	case strings.HasPrefix(ref, "-"), strings.HasPrefix(ref, "/"), strings.HasSuffix(ref, "/"), strings.HasSuffix(ref, "."):
		return bad("a ref name may not start with '-' or '/' nor end with '/' or '.'")
	case strings.Contains(ref, ".."), strings.Contains(ref, "//"), strings.Contains(ref, "@{"), strings.HasSuffix(ref, ".lock"):
		return bad("a ref name may not contain '..', '//', '@{' nor end with .lock")
	case hexID.MatchString(ref):
		return bad("a commit ID is not a ref: name a branch or tag (a run pins the commit the ref is at)")
	}
	for _, r := range ref {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return bad(fmt.Sprintf("a ref name may not contain %q", r))
		}
	}
	for _, part := range strings.Split(ref, "/") {
		if strings.HasPrefix(part, ".") {
			return bad("no part of a ref name may start with '.'")
		}
	}
	return nil
}

// CleanPath checks a stack path inside a repository and returns it cleaned
// ("" for the root): relative, slash-separated, never leaving the repository.
func CleanPath(p string) (string, error) {
	if p == "" || p == "." {
		return "", nil
	}
	if strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("--path %q: want a relative slash-separated directory inside the repository", p)
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("--path %q leads out of the repository", p)
	}
	if c == "." {
		return "", nil
	}
	return c, nil
}

// Validate checks a source as it is added or read back: every error names
// the flag that set the field.
func (s *Source) Validate() error {
	if s.Name == "" {
		return fmt.Errorf("source: the name is empty")
	}
	t, err := classify(s.URL)
	if err != nil {
		return err
	}
	if err := checkRef(s.Ref); err != nil {
		return err
	}
	if s.Path, err = CleanPath(s.Path); err != nil {
		return err
	}
	if s.Auth.TokenFile != "" && s.Auth.SSHKeyFile != "" {
		return fmt.Errorf("source %s: --auth takes a token file or an ssh key, not both", s.Name)
	}
	switch t {
	case transportSSH:
		if s.Auth.TokenFile != "" {
			return fmt.Errorf("source %s: --auth token-file is for https URLs; an ssh URL takes --auth ssh-key=FILE", s.Name)
		}
		if s.KnownHosts == "" {
			return fmt.Errorf("source %s: an ssh URL needs --known-hosts FILE (its host key is checked, never accepted blindly)", s.Name)
		}
		for _, f := range []string{s.KnownHosts, s.Auth.SSHKeyFile} {
			if strings.ContainsAny(f, "'\n") {
				return fmt.Errorf("source %s: file name %q: quotes and newlines are not allowed", s.Name, f)
			}
		}
	default:
		if s.Auth.SSHKeyFile != "" {
			return fmt.Errorf("source %s: --auth ssh-key is for ssh URLs; an https URL takes --auth token-file=FILE", s.Name)
		}
		if s.KnownHosts != "" {
			return fmt.Errorf("source %s: --known-hosts is for ssh URLs", s.Name)
		}
	}
	return nil
}

// CheckCommit reports whether c is a full commit ID (SHA-1 or SHA-256).
func CheckCommit(c string) error {
	if !hexID.MatchString(c) {
		return fmt.Errorf("commit %q: want a full git commit ID (40 or 64 lowercase hex digits)", c)
	}
	return nil
}

// SameRepository reports whether two repository URLs name the same
// repository, whatever the transport: host (case-insensitive), port aside,
// and path without a trailing ".git" or "/" (https://h/o/r.git,
// git@h:o/r and ssh://git@h/o/r are the same).
func SameRepository(a, b string) bool {
	ka, kb := repoIdentity(a), repoIdentity(b)
	return ka != "" && ka == kb
}

func repoIdentity(raw string) string {
	var host, p string
	if scpLike.MatchString(raw) && !strings.Contains(raw, "://") {
		_, rest, _ := strings.Cut(raw, "@")
		host, p, _ = strings.Cut(rest, ":")
	} else {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return ""
		}
		host, p = u.Hostname(), u.Path
	}
	p = strings.TrimSuffix(strings.Trim(p, "/"), ".git")
	if host == "" || p == "" {
		return ""
	}
	return strings.ToLower(host) + "/" + p
}

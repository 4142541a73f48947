package engine

import (
	"fmt"
	"path/filepath"
)

// WorkspaceSources is a workspace's settings for git sources: the source a
// run uses when it names no stack, and whether only signed commits may be
// deployed here.
type WorkspaceSources struct {
	// Default is the git source (kumo source add) a preview, apply or sync
	// schedule of this workspace reads when none is named and no stack
	// directory, spec or chart is given.
	Default string `json:"default,omitempty"`
	// RequireSignedCommits refuses, before anything is generated or
	// applied, a commit of a git source that is not signed by one of the
	// allowed keys.
	RequireSignedCommits bool `json:"requireSignedCommits,omitempty"`
	// AllowedSignersFile is an SSH allowed-signers file on the worker, in
	// the format of git's gpg.ssh.allowedSignersFile (ssh-keygen(1),
	// ALLOWED SIGNERS): the SSH keys whose signatures are accepted.
	AllowedSignersFile string `json:"allowedSignersFile,omitempty"`
	// GPGKeyringFile is a file on the worker holding the OpenPGP public
	// keys (armored or binary, as `gpg --export` writes them) whose
	// signatures are accepted.
	GPGKeyringFile string `json:"gpgKeyringFile,omitempty"`
}

// Validate checks the settings as a workspace file is saved: a requirement
// with no key to satisfy it would refuse every commit, and key files are
// absolute paths the worker reads.
func (s WorkspaceSources) Validate() error {
	for field, f := range map[string]string{"allowedSignersFile": s.AllowedSignersFile, "gpgKeyringFile": s.GPGKeyringFile} {
		if f != "" && !filepath.IsAbs(f) {
			return fmt.Errorf("sources.%s: %q: want an absolute path on the worker", field, f)
		}
	}
	if s.RequireSignedCommits && s.AllowedSignersFile == "" && s.GPGKeyringFile == "" {
		return fmt.Errorf("sources.requireSignedCommits: name the allowed keys in sources.allowedSignersFile (SSH) or sources.gpgKeyringFile (GPG)")
	}
	if !s.RequireSignedCommits && (s.AllowedSignersFile != "" || s.GPGKeyringFile != "") {
		return fmt.Errorf("sources: allowed signing keys are given but sources.requireSignedCommits is false: set it, or remove the keys")
	}
	return nil
}

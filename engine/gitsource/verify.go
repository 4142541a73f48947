package gitsource

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// SigningKeys are the keys a workspace accepts commit signatures from: an
// SSH allowed-signers file (git's gpg.ssh.allowedSignersFile) and an
// OpenPGP keyring file. Either may be empty; both empty accepts nothing.
type SigningKeys struct {
	AllowedSignersFile string
	GPGKeyringFile     string
}

// ErrUnsigned: a commit carries no signature, or none by an allowed key.
var ErrUnsigned = errors.New("not signed by an allowed key")

// commitObjectFile is where Fetch keeps the raw commit object beside the
// commit's tree: its signature is checked from it on every use, cached or not.
func (g *Git) commitObjectFile(s *Source, commit string) string {
	return filepath.Join(g.Cache, RepoKey(s.URL), commit+".commit")
}

// fetchObject fetches commit into a scratch repository only to keep its
// object (a tree cached before objects were kept is left as it is).
func (g *Git) fetchObject(ctx context.Context, s *Source, commit string) error {
	repoDir := filepath.Join(g.Cache, RepoKey(s.URL))
	if err := os.MkdirAll(repoDir, 0o700); err != nil {
		return err
	}
	gitDir, err := os.MkdirTemp(repoDir, ".fetch-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(gitDir)
	if err := g.run(ctx, s, gitDir, io.Discard, "init", "--bare", "--quiet", "."); err != nil {
		return err
	}
	if err := g.fetch(ctx, s, gitDir, commit); err != nil {
		return err
	}
	return g.keepCommitObject(ctx, s, gitDir, commit)
}

// keepCommitObject writes the fetched commit object (header, signature,
// message) into the cache.
func (g *Git) keepCommitObject(ctx context.Context, s *Source, gitDir, commit string) error {
	var raw bytes.Buffer
	if err := g.run(ctx, s, gitDir, &raw, "cat-file", "commit", commit); err != nil {
		return fmt.Errorf("source %s: reading commit %.12s: %w", s.Name, commit, err)
	}
	return writeAtomic(g.commitObjectFile(s, commit), raw.Bytes())
}

func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".obj-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // gone once renamed
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// commitObject reads the cached commit object and checks that it is the
// object commit names (its hash), fetching the commit when the cache has
// its tree from before objects were kept.
func (g *Git) commitObject(ctx context.Context, s *Source, commit string) ([]byte, error) {
	raw, err := os.ReadFile(g.commitObjectFile(s, commit))
	if errors.Is(err, os.ErrNotExist) {
		if err := g.fetchObject(ctx, s, commit); err != nil {
			return nil, err
		}
		raw, err = os.ReadFile(g.commitObjectFile(s, commit))
	}
	if err != nil {
		return nil, err
	}
	if id := objectID(raw, len(commit) == 64); id != commit {
		return nil, fmt.Errorf("source %s: the cached object of commit %.12s hashes to %.12s: the cache is damaged", s.Name, commit, id)
	}
	return raw, nil
}

// objectID is git's ID of a commit object.
func objectID(raw []byte, sha256ID bool) string {
	header := fmt.Sprintf("commit %d\x00", len(raw))
	if sha256ID {
		h := sha256.New()
		h.Write([]byte(header))
		h.Write(raw)
		return hex.EncodeToString(h.Sum(nil))
	}
	h := sha1.New()
	h.Write([]byte(header))
	h.Write(raw)
	return hex.EncodeToString(h.Sum(nil))
}

// signed reports whether a commit object's header carries a signature.
func signed(raw []byte) bool {
	header, _, _ := bytes.Cut(raw, []byte("\n\n"))
	for _, line := range strings.Split(string(header), "\n") {
		if strings.HasPrefix(line, "gpgsig ") || strings.HasPrefix(line, "gpgsig-sha256 ") {
			return true
		}
	}
	return false
}

// Verify checks that commit of s (fetched into the cache first if needed)
// is signed by one of keys, with git's own verification (git verify-commit:
// ssh-keygen -Y for SSH signatures, gpg for OpenPGP ones) run in a scratch
// repository holding only that commit object, with no configuration but
// the allowed keys: an OpenPGP keyring imported into a scratch GNUPGHOME,
// the SSH allowed-signers file as gpg.ssh.allowedSignersFile, X.509
// signatures refused. The error wraps ErrUnsigned when the commit is not
// signed or its signature is not by an allowed key.
func (g *Git) Verify(ctx context.Context, s *Source, commit string, keys SigningKeys) error {
	if err := CheckCommit(commit); err != nil {
		return err
	}
	if keys.AllowedSignersFile == "" && keys.GPGKeyringFile == "" {
		return fmt.Errorf("commit %s: %w (no allowed keys are configured)", commit, ErrUnsigned)
	}
	raw, err := g.commitObject(ctx, s, commit)
	if err != nil {
		return err
	}
	if !signed(raw) {
		return fmt.Errorf("commit %s: %w: the commit carries no signature", commit, ErrUnsigned)
	}
	scratch, err := os.MkdirTemp("", "kumo-verify-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	gnupg := filepath.Join(scratch, "gnupg")
	if err := os.Mkdir(gnupg, 0o700); err != nil {
		return err
	}
	extra := []string{"GNUPGHOME=" + gnupg}
	if f := keys.GPGKeyringFile; f != "" {
		if err := importKeyring(ctx, f, gnupg); err != nil {
			return err
		}
	}
	repo := filepath.Join(scratch, "repo")
	format := "--object-format=sha1"
	if len(commit) == 64 {
		format = "--object-format=sha256"
	}
	if err := g.runWith(ctx, s, scratch, nil, io.Discard, extra, "init", "--bare", "--quiet", format, repo); err != nil {
		return err
	}
	var id bytes.Buffer
	if err := g.runWith(ctx, s, repo, bytes.NewReader(raw), &id, extra, "hash-object", "-t", "commit", "-w", "--stdin"); err != nil {
		return err
	}
	if got := strings.TrimSpace(id.String()); got != commit {
		return fmt.Errorf("source %s: commit %.12s was stored as %.12s", s.Name, commit, got)
	}
	args := []string{
		"-c", "gpg.program=gpg",
		"-c", "gpg.ssh.program=ssh-keygen",
		"-c", "gpg.x509.program=false",
		"-c", "gpg.minTrustLevel=undefined",
	}
	if f := keys.AllowedSignersFile; f != "" {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("sources.allowedSignersFile: %w", err)
		}
		args = append(args, "-c", "gpg.ssh.allowedSignersFile="+f)
	} else {
		args = append(args, "-c", "gpg.ssh.allowedSignersFile=/dev/null")
	}
	args = append(args, "verify-commit", "--raw", commit)
	var out bytes.Buffer
	err = g.runWith(ctx, s, repo, nil, &out, extra, args...)
	if err != nil {
		return fmt.Errorf("commit %s: %w: %s", commit, ErrUnsigned, verifyReason(err, out.String()))
	}
	return nil
}

// verifyReason is the line of git's verification output that says why a
// signature was refused.
func verifyReason(err error, out string) string {
	msg := err.Error()
	if _, after, ok := strings.Cut(msg, ": "); ok {
		msg = after
	}
	if _, after, ok := strings.Cut(msg, ": "); ok {
		msg = after
	}
	for _, line := range strings.Split(msg+"\n"+out, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.Contains(line, "No principal matched"), strings.Contains(line, "NO_PUBKEY"), strings.Contains(line, "BADSIG"),
			strings.Contains(line, "allowedSignersFile needs to be configured"), strings.Contains(line, "EXPKEYSIG"), strings.Contains(line, "REVKEYSIG"),
			strings.Contains(line, "Could not verify signature"), strings.Contains(line, "Signature verification failed"):
			return line
		}
	}
	first, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	return first
}

// importKeyring imports the OpenPGP keys of file into the scratch GNUPGHOME
// home: public keys only, nothing fetched from a key server.
func importKeyring(ctx context.Context, file, home string) error {
	if _, err := os.Stat(file); err != nil {
		return fmt.Errorf("sources.gpgKeyringFile: %w", err)
	}
	cmd := exec.CommandContext(ctx, "gpg", "--batch", "--no-autostart", "--no-tty", "--homedir", home,
		"--import-options", "import-minimal", "--import", file)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LANG=C", "LC_ALL=C", "HOME=" + home, "GNUPGHOME=" + home}
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{buf: &stderr, max: maxStderr}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("sources.gpgKeyringFile %s: gpg --import: %v: %s", file, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Signer signs commits: an SSH key made with ssh-keygen or an OpenPGP key
// made with gpg in a home of its own.
type Signer struct {
	// Config are the git -c settings that sign a commit with the key.
	config []string
	env    []string
	// AllowedSigners is the key's line of an SSH allowed-signers file
	// (SSH signers only).
	AllowedSigners string
	// Keyring is a file holding the OpenPGP public key, armored (GPG
	// signers only).
	Keyring string
}

// SSHSigner makes an ed25519 key that signs commits as email.
func SSHSigner(t testing.TB, email string) *Signer {
	t.Helper()
	dir := t.TempDir()
	key := filepath.Join(dir, "id_ed25519")
	run(t, nil, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", email, "-f", key)
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return &Signer{
		config:         []string{"gpg.format=ssh", "user.signingkey=" + key},
		AllowedSigners: email + ` namespaces="git" ` + strings.TrimSpace(string(pub)) + "\n",
	}
}

// GPGSigner makes an ed25519 OpenPGP key (no passphrase) that signs
// commits as email; its gpg-agent is stopped when the test ends.
func GPGSigner(t testing.TB, email string) *Signer {
	t.Helper()
	home, err := os.MkdirTemp("", "kumo-gpg-") // short: gpg-agent's socket lives in it
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"GNUPGHOME=" + home}
	t.Cleanup(func() {
		_ = exec.Command("gpgconf", "--homedir", home, "--kill", "all").Run()
		_ = os.RemoveAll(home)
	})
	run(t, env, "gpg", "--batch", "--passphrase", "", "--quick-gen-key", "kumo test <"+email+">", "ed25519", "sign", "never")
	fpr := ""
	for _, line := range strings.Split(run(t, env, "gpg", "--batch", "--with-colons", "--list-secret-keys"), "\n") {
		if f := strings.Split(line, ":"); len(f) > 9 && f[0] == "fpr" {
			fpr = f[9]
			break
		}
	}
	if fpr == "" {
		t.Fatal("gpg made no key")
	}
	keyring := filepath.Join(t.TempDir(), "allowed.asc")
	if err := os.WriteFile(keyring, []byte(run(t, env, "gpg", "--batch", "--armor", "--export", fpr)), 0o644); err != nil {
		t.Fatal(err)
	}
	return &Signer{config: []string{"gpg.format=openpgp", "user.signingkey=" + fpr}, env: env, Keyring: keyring}
}

// CommitSigned is Commit with the commit signed by signer.
func (r *Repo) CommitSigned(signer *Signer, msg string, files map[string]string) string {
	r.write(files)
	args := []string{}
	for _, c := range signer.config {
		args = append(args, "-c", c)
	}
	args = append(args, "-c", "user.name=kumo test", "-c", "user.email=test@kumo.invalid", "commit", "--quiet", "--allow-empty", "-S", "-m", msg)
	gitEnv(r.t, r.work, signer.env, args...)
	id := strings.TrimSpace(git(r.t, r.work, "rev-parse", "HEAD"))
	r.Push(id)
	return id
}

func run(t testing.TB, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, msg)
	}
	return string(out)
}

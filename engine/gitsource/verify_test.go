package gitsource_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine/gitsource"
	"github.com/kumoproj/kumo/internal/gittest"
)

// TestVerifySignedCommits: a commit signed by an allowed SSH or GPG key
// passes; an unsigned one, one signed by another key, and one signed by a
// key of the other kind than the one allowed are refused with ErrUnsigned,
// naming the commit; the check is made again from the cache, and a damaged
// cached object is refused.
func TestVerifySignedCommits(t *testing.T) {
	srv := gittest.New(t, "")
	repo := srv.Repo("shop")
	ctx := context.Background()
	g := &gitsource.Git{Cache: t.TempDir()}
	s := source(repo.URL)
	files := func(n string) map[string]string {
		return map[string]string{"stacks/prod/stack.yaml": "name: prod # " + n + "\n", "project.yaml": "name: shop\n"}
	}

	alice := gittest.SSHSigner(t, "alice@kumo.invalid")
	mallory := gittest.SSHSigner(t, "mallory@kumo.invalid")
	carol := gittest.GPGSigner(t, "carol@kumo.invalid")
	signers := filepath.Join(t.TempDir(), "allowed_signers")
	if err := os.WriteFile(signers, []byte(alice.AllowedSigners), 0o644); err != nil {
		t.Fatal(err)
	}
	sshOnly := gitsource.SigningKeys{AllowedSignersFile: signers}
	gpgOnly := gitsource.SigningKeys{GPGKeyringFile: carol.Keyring}

	unsigned := repo.Commit("unsigned", files("1"))
	byAlice := repo.CommitSigned(alice, "by alice", files("2"))
	byMallory := repo.CommitSigned(mallory, "by mallory", files("3"))
	byCarol := repo.CommitSigned(carol, "by carol", files("4"))

	for _, c := range []string{unsigned, byAlice, byMallory, byCarol} {
		if _, err := g.Fetch(ctx, s, c); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		commit string
		keys   gitsource.SigningKeys
		ok     bool
		reason string
	}{
		{"ssh allowed", byAlice, sshOnly, true, ""},
		{"gpg allowed", byCarol, gpgOnly, true, ""},
		{"both kinds allowed, ssh", byAlice, gitsource.SigningKeys{AllowedSignersFile: signers, GPGKeyringFile: carol.Keyring}, true, ""},
		{"both kinds allowed, gpg", byCarol, gitsource.SigningKeys{AllowedSignersFile: signers, GPGKeyringFile: carol.Keyring}, true, ""},
		{"unsigned", unsigned, sshOnly, false, "carries no signature"},
		{"ssh key not allowed", byMallory, sshOnly, false, ""},
		{"gpg commit, only ssh keys", byCarol, sshOnly, false, ""},
		{"ssh commit, only gpg keys", byAlice, gpgOnly, false, ""},
		{"no keys", byAlice, gitsource.SigningKeys{}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := g.Verify(ctx, s, tc.commit, tc.keys)
			if tc.ok {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			if !errors.Is(err, gitsource.ErrUnsigned) {
				t.Fatalf("Verify = %v, want ErrUnsigned", err)
			}
			t.Log(err)
			if !strings.Contains(err.Error(), tc.commit[:12]) || !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("error %q does not name the commit %.12s and %q", err, tc.commit, tc.reason)
			}
		})
	}

	// The cached object is what is checked: a forged one (alice's
	// signature moved onto mallory's commit) no longer hashes to its ID.
	obj := filepath.Join(g.Cache, gitsource.RepoKey(s.URL), byMallory+".commit")
	good, err := os.ReadFile(filepath.Join(g.Cache, gitsource.RepoKey(s.URL), byAlice+".commit"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(obj, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := g.Verify(ctx, s, byMallory, sshOnly); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("Verify of a swapped cached object = %v, want a damaged cache", err)
	}
	// A tree cached without its object (an older cache) is fetched again.
	if err := os.Remove(filepath.Join(g.Cache, gitsource.RepoKey(s.URL), byAlice+".commit")); err != nil {
		t.Fatal(err)
	}
	if err := g.Verify(ctx, s, byAlice, sshOnly); err != nil {
		t.Fatalf("Verify without a cached object: %v", err)
	}
}

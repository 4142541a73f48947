package token

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func refusedFor(t *testing.T, err error, want Reason) *Error {
	t.Helper()
	var te *Error
	if !errors.As(err, &te) {
		t.Fatalf("err = %v, want a *token.Error (%s)", err, want)
	}
	if te.Reason != want {
		t.Fatalf("refused for %q (%v), want %q", te.Reason, err, want)
	}
	return te
}

func TestCreateVerify(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "auth")
	s := Open(dir)
	tok, rec, err := s.Create("ci-deployer", []string{"deployers", "ci", "ci"}, 8*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, Prefix) || !IsToken(tok) {
		t.Fatalf("token %q lacks the %s prefix", tok, Prefix)
	}
	if got := rec.Expires.Sub(rec.Created); got != 8*time.Hour {
		t.Errorf("record lives %v, want 8h", got)
	}
	for _, name := range []string{"", KeyFile, RecordsFile} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o600)
		if name == "" {
			want = 0o700
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", filepath.Join(dir, name), st.Mode().Perm(), want)
		}
	}
	data, _ := os.ReadFile(filepath.Join(dir, RecordsFile))
	if strings.Contains(string(data), strings.TrimPrefix(tok, Prefix)[:20]) {
		t.Error("the records file holds the token")
	}
	v, err := NewVerifier(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := v.Verify(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	if c.Subject != "ci-deployer" || strings.Join(c.Groups, ",") != "ci,deployers" || c.ID != rec.ID {
		t.Errorf("claims = %+v, want subject ci-deployer, groups ci,deployers, id %s", c, rec.ID)
	}
}

func TestVerifyRefuses(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir)
	tok, rec, err := s.Create("bot", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	body, sig, _ := strings.Cut(strings.TrimPrefix(tok, Prefix), ".")

	t.Run("tampered claims", func(t *testing.T) {
		payload, _ := base64.RawURLEncoding.DecodeString(body)
		forged := strings.Replace(string(payload), `"sub":"bot"`, `"sub":"admin"`, 1)
		_, err := v.Verify(ctx, Prefix+base64.RawURLEncoding.EncodeToString([]byte(forged))+"."+sig)
		refusedFor(t, err, BadSignature)
	})
	t.Run("another home's key", func(t *testing.T) {
		other, _, err := Open(t.TempDir()).Create("bot", nil, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		_, err = v.Verify(ctx, other)
		refusedFor(t, err, BadSignature)
		if strings.Contains(err.Error(), other[len(Prefix):]) || strings.Contains(err.Error(), sig) {
			t.Errorf("error %q echoes the token", err)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		for _, bad := range []string{"", "kumo_", "kumo_abc", "Bearer " + tok, tok + ".x", "kumo_" + body + ".!!!", strings.Repeat("k", maxTokenLen+1)} {
			_, err := v.Verify(ctx, bad)
			var te *Error
			if !errors.As(err, &te) || (te.Reason != Malformed && te.Reason != BadSignature) {
				t.Errorf("Verify(%.30q) = %v, want malformed or bad signature", bad, err)
			}
		}
	})
	t.Run("expired", func(t *testing.T) {
		v.Now = func() time.Time { return rec.Expires }
		defer func() { v.Now = time.Now }()
		te := refusedFor(t, mustFail(v.Verify(ctx, tok)), Expired)
		if te.ID != rec.ID {
			t.Errorf("expired error names %q, want the token ID %s", te.ID, rec.ID)
		}
	})
	t.Run("unrecorded", func(t *testing.T) {
		// A signed token whose record is gone (records file lost) is refused.
		if err := os.Remove(filepath.Join(dir, RecordsFile)); err != nil {
			t.Fatal(err)
		}
		refusedFor(t, mustFail(v.Verify(ctx, tok)), Unknown)
	})
}

func mustFail(_ Claims, err error) error { return err }

// TestRevokeReachesRunningVerifier: a verifier that verified a token before
// refuses it once another process (here, another Store) revoked it, without
// being rebuilt.
func TestRevokeReachesRunningVerifier(t *testing.T) {
	dir := t.TempDir()
	tok, rec, err := Open(dir).Create("ci", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	keep, _, err := Open(dir).Create("other", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := v.Verify(ctx, tok); err != nil {
		t.Fatal(err)
	}
	got, err := Open(dir).Revoke(rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Revoked == nil {
		t.Fatal("Revoke returned a record without its revocation time")
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		_, err := v.Verify(ctx, tok)
		if err != nil {
			refusedFor(t, err, Revoked)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a revoked token still verifies 2s after revocation")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := v.Verify(ctx, keep); err != nil {
		t.Errorf("revoking one token refused another: %v", err)
	}
	if _, err := Open(dir).Revoke("tnope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("revoking an unknown ID: %v, want ErrNotFound", err)
	}
	again, err := Open(dir).Revoke(rec.ID)
	if err != nil || !again.Revoked.Equal(*got.Revoked) {
		t.Errorf("revoking twice: %v, revoked %v, want the first time %v", err, again.Revoked, got.Revoked)
	}
}

// TestCorruptRecordsFailClosed: records that cannot be read refuse every
// token, even one that verified before.
func TestCorruptRecordsFailClosed(t *testing.T) {
	dir := t.TempDir()
	tok, _, err := Open(dir).Create("ci", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, RecordsFile), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), tok); err == nil || !strings.Contains(err.Error(), RecordsFile) {
		t.Fatalf("corrupt records: %v, want a refusal naming %s", err, RecordsFile)
	}
}

// TestConcurrentCreate: writers in parallel lose no record.
func TestConcurrentCreate(t *testing.T) {
	dir := t.TempDir()
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A Store per writer, as separate `kumo token` processes would be.
			_, _, err := Open(dir).Create(fmt.Sprintf("bot-%d", i), nil, time.Hour)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	recs, err := Open(dir).List()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != n {
		t.Fatalf("%d records after %d concurrent creates", len(recs), n)
	}
}

func TestTTLAndNames(t *testing.T) {
	for in, want := range map[string]time.Duration{"8h": 8 * time.Hour, "30d": 30 * 24 * time.Hour, "90d": MaxTTL, "15m": 15 * time.Minute} {
		got, err := ParseTTL(in)
		if err != nil || got != want {
			t.Errorf("ParseTTL(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0s", "-1h", "91d", "2161h", "1e6d", "99999999999999d", "d", "3x"} {
		if _, err := ParseTTL(bad); err == nil {
			t.Errorf("ParseTTL(%q) accepted", bad)
		}
	}
	s := Open(t.TempDir())
	for _, c := range []struct {
		sub    string
		groups []string
		ttl    time.Duration
	}{{"", nil, time.Hour}, {"a b", nil, time.Hour}, {"ok", []string{"g\n"}, time.Hour}, {"ok", nil, 0}, {"ok", nil, MaxTTL + time.Second}} {
		if _, _, err := s.Create(c.sub, c.groups, c.ttl); err == nil {
			t.Errorf("Create(%q, %q, %v) accepted", c.sub, c.groups, c.ttl)
		}
	}
}

// TestKeyReadableByOthersRefused: a key another account could read may have
// been copied; it is refused rather than trusted.
func TestKeyReadableByOthersRefused(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Open(dir).Create("ci", nil, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, KeyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewVerifier(dir); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("NewVerifier with a 0644 key: %v", err)
	}
}

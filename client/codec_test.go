package client

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/internal/keyring"
	"github.com/kumoproj/kumo/server"
)

func TestCodecKeysByMode(t *testing.T) {
	home := t.TempDir()
	keys, err := CodecKeys(Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(home, keyring.FileName)
	if keys == nil || keys.Path() != want {
		t.Fatalf("embedded server: keys %v, want the home's %s", keys, want)
	}
	if fi, err := os.Stat(want); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("home key file: %v, %v", fi, err)
	}
	// An existing cluster without a key file: refused, saying what plaintext
	// exposes and how to go on; with InsecurePlaintext, the codec is off.
	var pe *PlaintextError
	if keys, err := CodecKeys(Options{Home: home, TemporalAddress: "temporal:7233"}); keys != nil || !errors.As(err, &pe) ||
		!strings.Contains(err.Error(), "temporal:7233") || !strings.Contains(err.Error(), "--insecure-plaintext") ||
		!strings.Contains(err.Error(), "Secret values") || !strings.Contains(err.Error(), "--codec-key-file") {
		t.Errorf("existing cluster without a key file: %v, %v; want a PlaintextError", keys, err)
	}
	if keys, err := CodecKeys(Options{Home: home, TemporalAddress: "temporal:7233", InsecurePlaintext: true}); err != nil || keys != nil {
		t.Errorf("existing cluster without a key file, --insecure-plaintext: %v, %v; want the codec off", keys, err)
	}
	if _, err := OpenContext(context.Background(), Options{Home: home, TemporalAddress: "temporal:7233"}); !errors.As(err, &pe) {
		t.Errorf("a client of an existing cluster without a key file: %v, want a PlaintextError", err)
	}
	// A worker given the address of the kumo server recorded in its home
	// (running, or killed a moment ago) decrypts with that server's keys.
	writeServerRecord(t, home, server.Info{PID: 1, Address: "127.0.0.1:7233", Namespace: "default", CodecKeyFile: want})
	if keys, err := CodecKeys(Options{Home: home, TemporalAddress: "127.0.0.1:7233"}); err != nil || keys == nil || keys.Path() != want {
		t.Errorf("worker beside kumo server: %v, %v; want the server's %s", keys, err, want)
	}
	if keys, err := CodecKeys(Options{Home: home, TemporalAddress: "temporal:7233"}); keys != nil || !errors.As(err, &pe) {
		t.Errorf("another cluster than the home's server: %v, %v; want a PlaintextError", keys, err)
	}
	if keys, err := CodecKeys(Options{Home: home, TemporalAddress: "127.0.0.1:7233", InsecurePlaintext: true}); err != nil || keys == nil || keys.Path() != want {
		t.Errorf("worker beside kumo server, --insecure-plaintext: %v, %v; want the server's key all the same", keys, err)
	}
	if keys, err := CodecKeys(Options{Home: t.TempDir(), TemporalAddress: "temporal:7233", CodecKeyFile: want}); err != nil || keys == nil || keys.Path() != want {
		t.Errorf("existing cluster with a key file: %v, %v", keys, err)
	}
	missing := filepath.Join(t.TempDir(), "nope.keys")
	if _, err := CodecKeys(Options{Home: home, CodecKeyFile: missing}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("a missing key file: %v, want an error naming it", err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("a named key file was created: clients and workers would not share it")
	}
}

// A command with another key file than the server's would start runs the
// server's worker cannot decrypt: it refuses to attach.
func TestAttachNeedsTheServersKeyFile(t *testing.T) {
	home := t.TempDir()
	other := filepath.Join(t.TempDir(), "other.keys")
	if _, err := keyring.AddKey(other); err != nil {
		t.Fatal(err)
	}
	info := &server.Info{PID: 1, Address: "127.0.0.1:7233", Namespace: "default", CodecKeyFile: filepath.Join(home, keyring.FileName)}
	same, err := OpenContext(context.Background(), Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	if err := same.canAttach(home, info); err != nil {
		t.Errorf("same key file: %v", err)
	}
	c, err := OpenContext(context.Background(), Options{Home: home, CodecKeyFile: other})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.canAttach(home, info); err == nil || !strings.Contains(err.Error(), other) || !strings.Contains(err.Error(), "KUMO_CODEC_KEY_FILE") {
		t.Errorf("another key file: %v", err)
	}
}

// writeServerRecord writes home's server.json as a kumo server would have.
func writeServerRecord(t *testing.T, home string, info server.Info) {
	t.Helper()
	data, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, server.FileName), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

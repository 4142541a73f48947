package client

import (
	"fmt"
	"path/filepath"

	"go.temporal.io/sdk/converter"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/codec"
	"github.com/kumoproj/kumo/internal/keyring"
	"github.com/kumoproj/kumo/server"
)

// CodecKeys returns the keys that encrypt this client's Temporal payloads and
// the sensitive values of its release files: those of opts.CodecKeyFile
// (KUMO_CODEC_KEY_FILE, --codec-key-file) if given; else, for the embedded
// server and `kumo server` (no TemporalAddress), $KUMO_HOME/codec.keys, created
// on first use; else, for the address of the `kumo server` that records itself
// in $KUMO_HOME/server.json (a `kumo worker --temporal-address` beside it), that
// server's key file. Against any other cluster a key file is required, shared
// by every client and worker of that cluster: without one CodecKeys fails with
// a *PlaintextError, unless opts.InsecurePlaintext accepts running without
// encryption (nil keys).
func CodecKeys(opts Options) (*keyring.Ring, error) {
	home := opts.Home
	if home == "" {
		home = DefaultHome()
	}
	home = absHome(home)
	switch {
	case opts.CodecKeyFile != "":
		return keyring.Load(absPath(opts.CodecKeyFile))
	case opts.TemporalAddress == "":
		return keyring.LoadOrCreate(filepath.Join(home, keyring.FileName))
	}
	// The record of a server killed a moment ago still names its key file:
	// a worker restarted before the server comes back must decrypt too.
	if info, err := server.ReadInfo(home); err == nil && info != nil && info.CodecKeyFile != "" && info.Address == opts.TemporalAddress {
		return keyring.Load(info.CodecKeyFile)
	}
	if !opts.InsecurePlaintext {
		return nil, &PlaintextError{Address: opts.TemporalAddress}
	}
	return nil, nil
}

// PlaintextExposes says what running against a cluster without a codec key
// leaves in clear.
const PlaintextExposes = "Secret values (Kubernetes Secret data, sensitive Terraform attributes) are then kept in clear in the backend's spec and release files " +
	"(an S3 bucket, for a fleet) and in every Temporal payload (run inputs, results, history), readable by whoever reads the bucket or the cluster's history"

// PlaintextError is CodecKeys refusing to run against an existing Temporal
// cluster without a codec key.
type PlaintextError struct{ Address string }

func (e *PlaintextError) Error() string {
	return fmt.Sprintf("no codec key for the Temporal cluster at %s: %s. "+
		"Give every worker and client of that cluster the same key file (kumo codec new-key FILE, then --codec-key-file FILE or KUMO_CODEC_KEY_FILE), "+
		"or accept plaintext with --insecure-plaintext", e.Address, PlaintextExposes)
}

// Encrypted reports whether the codec is on: false only for a cluster run
// with Options.InsecurePlaintext.
func (c *Client) Encrypted() bool { return c.keys != nil }

// DataConverter is the data converter of every Temporal client and worker
// this client makes: through the payload codec when the codec is on.
func (c *Client) DataConverter() converter.DataConverter { return codec.DataConverter(c.keys) }

// sealWith makes b keep sensitive values encrypted with keys (nil: in clear).
func sealWith(b backend.Backend, keys *keyring.Ring) {
	if keys == nil {
		return
	}
	if s, ok := b.(interface{ SetSealer(backend.Sealer) }); ok {
		s.SetSealer(keys)
	}
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func keyFile(keys *keyring.Ring) string {
	if keys == nil {
		return ""
	}
	return keys.Path()
}

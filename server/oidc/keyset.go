package oidc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// minRefetch is the least time between two fetches of the issuer's key set.
// go-oidc's RemoteKeySet fetches it again on every token whose signature
// does not verify, so anyone could make the server hammer the issuer with
// garbage tokens; this key set fetches again only for a key ID it does not
// hold, at most once per minRefetch (a caller waits for its turn rather than
// being refused, so a token of a freshly rotated key still verifies).
const minRefetch = time.Second

// maxJWKSSize bounds the key set document.
const maxJWKSSize = 1 << 20

// signingAlgs are the algorithms a key set may verify; the verifier has
// already narrowed a token's to the issuer's before asking.
var signingAlgs = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// keySet is the issuer's JWKS, cached, implementing go-oidc's KeySet.
type keySet struct {
	url    string
	client *http.Client

	fetch   sync.Mutex // one fetch at a time
	mu      sync.RWMutex
	keys    []jose.JSONWebKey
	fetched time.Time
}

// newKeySet fetches the key set at url once, so a server whose issuer
// publishes no usable key does not start.
func newKeySet(ctx context.Context, url string, client *http.Client) (*keySet, error) {
	ks := &keySet{url: url, client: client}
	if _, err := ks.refresh(ctx, time.Time{}); err != nil {
		return nil, err
	}
	return ks, nil
}

// VerifySignature implements go-oidc's KeySet.
func (ks *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSigned(raw, signingAlgs)
	if err != nil {
		return nil, fmt.Errorf("malformed jwt: %v", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("malformed jwt: want exactly one signature")
	}
	kid := jws.Signatures[0].Header.KeyID
	ks.mu.RLock()
	keys, seen := ks.keys, ks.fetched
	ks.mu.RUnlock()
	payload, known := verifyWith(jws, kid, keys)
	if payload != nil {
		return payload, nil
	}
	if known {
		// The key it names is the issuer's, and does not verify it: fetching
		// again would not change that.
		return nil, errors.New("failed to verify signature with the issuer's key " + fmt.Sprintf("%.64q", kid))
	}
	if keys, err = ks.refresh(ctx, seen); err != nil {
		return nil, fmt.Errorf("failed to verify signature: fetching keys: %w", err)
	}
	if payload, _ = verifyWith(jws, kid, keys); payload != nil {
		return payload, nil
	}
	return nil, fmt.Errorf("failed to verify signature: the issuer publishes no key %.64q that verifies it", kid)
}

// verifyWith tries the keys kid names (all of them when kid is empty);
// known reports whether kid named one.
func verifyWith(jws *jose.JSONWebSignature, kid string, keys []jose.JSONWebKey) (payload []byte, known bool) {
	for i := range keys {
		if kid != "" && keys[i].KeyID != kid {
			continue
		}
		known = kid != ""
		if p, err := jws.Verify(&keys[i]); err == nil {
			return p, known
		}
	}
	return nil, known
}

// refresh fetches the key set unless it was fetched after seen (by a caller
// that was waiting too), no sooner than minRefetch after the last fetch.
func (ks *keySet) refresh(ctx context.Context, seen time.Time) ([]jose.JSONWebKey, error) {
	ks.fetch.Lock()
	defer ks.fetch.Unlock()
	ks.mu.RLock()
	keys, last := ks.keys, ks.fetched
	ks.mu.RUnlock()
	if last.After(seen) {
		return keys, nil
	}
	if wait := minRefetch - time.Since(last); wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	keys, err := ks.get(ctx)
	ks.mu.Lock()
	defer ks.mu.Unlock()
	ks.fetched = time.Now() // a failed fetch counts too: it is not retried sooner
	if err != nil {
		return ks.keys, err
	}
	ks.keys = keys
	return keys, nil
}

// get downloads the key set, keeping the signing keys go-jose can read and
// skipping the others (as go-oidc does), so one exotic key does not void the
// set.
func (ks *keySet) get(ctx context.Context) ([]jose.JSONWebKey, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ks.url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := ks.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSSize+1))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", ks.url, resp.Status)
	}
	if len(body) > maxJWKSSize {
		return nil, fmt.Errorf("%s: the key set is larger than %d bytes", ks.url, maxJWKSSize)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("%s: %w", ks.url, err)
	}
	var keys []jose.JSONWebKey
	for _, raw := range set.Keys {
		var k jose.JSONWebKey
		if json.Unmarshal(raw, &k) != nil || !k.Valid() || !k.IsPublic() || (k.Use != "" && k.Use != "sig") {
			continue
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s holds no public signing key kumo can use", ks.url)
	}
	return keys, nil
}

package api

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// IdempotencyHeader names the key a client sends with POST runs so that a
// retry of the request (a timeout, a dropped connection) starts no second
// run and gets the first one's answer.
const IdempotencyHeader = "Idempotency-Key"

// maxIdempotencyKey bounds the key's length (a UUID is 36).
const maxIdempotencyKey = 255

// requestKey is the backend's name for a caller's idempotency key: a hash
// of the subject and the key, so that one caller's key never answers
// another caller's request, and the backend holds neither in clear. The
// record lives in the backend (client.StartOnce) rather than on the run: a
// claim there is one create-only write that exactly one of two concurrent
// first requests wins, before any run starts, and it holds across restarts
// and API processes sharing the backend; Temporal's visibility could find
// a run by a memo only after the fact, and a new search attribute would
// need every existing cluster set up again.
func requestKey(subject, key string) (string, error) {
	if len(key) == 0 || len(key) > maxIdempotencyKey {
		return "", fmt.Errorf("%s: want 1 to %d characters", IdempotencyHeader, maxIdempotencyKey)
	}
	for _, c := range key {
		if c < 0x21 || c > 0x7e {
			return "", fmt.Errorf("%s: only visible ASCII characters", IdempotencyHeader)
		}
	}
	h := sha256.Sum256([]byte(subject + "\x00" + key))
	return "idem-" + hex.EncodeToString(h[:]), nil
}

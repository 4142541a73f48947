package api

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Page tokens are opaque to clients: base64url of JSON holding where the
// next page starts (Temporal's own visibility token, or an offset into a
// list the backend returns whole) and a fingerprint of the filter that made
// it. A token replayed with another filter is refused instead of silently
// answering a page of something else.

// pageToken is where a page starts.
type pageToken struct {
	Filter string `json:"f"`
	// Next is Temporal's visibility page token (runs).
	Next []byte `json:"n,omitempty"`
	// Offset is the index of the first item (lists the backend returns whole).
	Offset int `json:"o,omitempty"`
}

// filterPrint is the fingerprint of the filter parts.
func filterPrint(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(strconv.Quote(p)))
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:9])
}

func (t pageToken) encode() string {
	data, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(data)
}

// errBadPageToken is wrapped by decodePageToken's errors.
var errBadPageToken = errors.New("page_token")

// decodePageToken reads s, made for the filter with fingerprint filter;
// "" is the first page.
func decodePageToken(s, filter string) (pageToken, error) {
	if s == "" {
		return pageToken{Filter: filter}, nil
	}
	data, err := base64.RawURLEncoding.DecodeString(s)
	var t pageToken
	if err == nil {
		err = json.Unmarshal(data, &t)
	}
	switch {
	case err != nil:
		return t, fmt.Errorf("%w: not a token this API returned", errBadPageToken)
	case t.Filter != filter:
		return t, fmt.Errorf("%w: the token was returned for other filters; repeat the query parameters of the request that returned it", errBadPageToken)
	case t.Offset < 0:
		return t, fmt.Errorf("%w: not a token this API returned", errBadPageToken)
	}
	return t, nil
}

// Page limits: a client asks for limit items, at most maxLimit.
const (
	defaultLimit = 50
	maxLimit     = 500
)

// page reads the request's limit and page_token query parameters, the token
// made for the filter whose parts are given; either one bad is the caller's
// error.
func (c *call) page(filter ...string) (pageToken, int, error) {
	q := c.r.URL.Query()
	limit, err := parseLimit(q.Get("limit"))
	if err != nil {
		return pageToken{}, 0, invalid(err)
	}
	tok, err := decodePageToken(q.Get("page_token"), filterPrint(filter...))
	if err != nil {
		return pageToken{}, 0, invalid(err)
	}
	return tok, limit, nil
}

// parseLimit reads the limit query parameter.
func parseLimit(s string) (int, error) {
	if s == "" {
		return defaultLimit, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxLimit {
		return 0, fmt.Errorf("limit %q: want a number from 1 to %d", s, maxLimit)
	}
	return n, nil
}

// offsetPage is the page of items from t's offset, at most limit, and the
// token of the next page ("" after the last).
func offsetPage[T any](items []T, t pageToken, limit int) ([]T, string) {
	if t.Offset >= len(items) {
		return []T{}, ""
	}
	end := min(t.Offset+limit, len(items))
	next := ""
	if end < len(items) {
		next = pageToken{Filter: t.Filter, Offset: end}.encode()
	}
	return items[t.Offset:end], next
}

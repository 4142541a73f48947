package api

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// etagOf is the strong ETag of a representation: a hash of its bytes, so
// that an unchanged resource keeps its tag across requests and processes.
func etagOf(body []byte, contentType string) string {
	h := sha256.New()
	h.Write([]byte(contentType))
	h.Write([]byte{0})
	h.Write(body)
	return `"` + base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:18]) + `"`
}

// noneMatch reports whether an If-None-Match header value matches etag, so
// that a GET answers 304 Not Modified: "*", or any of its listed tags,
// compared weakly (RFC 9110 13.1.2: W/ is ignored for If-None-Match).
func noneMatch(header, etag string) bool {
	header = strings.TrimSpace(header)
	if header == "" {
		return false
	}
	if header == "*" {
		return true
	}
	want := strings.TrimPrefix(etag, "W/")
	for _, t := range strings.Split(header, ",") {
		if strings.TrimPrefix(strings.TrimSpace(t), "W/") == want {
			return true
		}
	}
	return false
}

package tfhttp

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"time"
)

// maxDocument bounds what one GET reads: a 50,000-resource release is far
// below it, and a service answering with something larger is not a state
// document kumo wrote.
const maxDocument = 1 << 30

// attempts bounds the tries of one request on a connection error or a 5xx.
const attempts = 5

// address is the URL of document name.
func (d *Driver) address(name string) string {
	return d.o.Base.String() + "/" + url.PathEscape(name)
}

// statusError is an answer kumo did not expect.
type statusError struct {
	method, url string
	status      int
	body        string
}

func (e *statusError) Error() string {
	msg := fmt.Sprintf("%s %s: %s", e.method, e.url, http.StatusText(e.status))
	if e.status == http.StatusUnauthorized || e.status == http.StatusForbidden {
		msg += " (check TF_HTTP_USERNAME and TF_HTTP_PASSWORD, or KUMO_HTTP_TOKEN)"
	}
	if e.body != "" {
		msg += ": " + e.body
	}
	return msg
}

// do sends one request, retrying connection errors and 5xx answers with
// backoff; it returns the status and body of the answer. Every request kumo
// sends is safe to repeat: GETs, whole-document POSTs under a lock, DELETEs
// (a repeated one finds nothing), and LOCKs (a repeated one finds kumo's own
// lock, see lock).
func (d *Driver) do(ctx context.Context, method, addr string, body []byte) (int, []byte, error) {
	wait := 50 * time.Millisecond
	var last error
	for try := 0; try < attempts; try++ {
		if try > 0 {
			select {
			case <-ctx.Done():
				return 0, nil, ctx.Err()
			case <-time.After(wait/2 + rand.N(wait)):
			}
			wait *= 2
		}
		status, data, err := d.once(ctx, method, addr, body)
		if ctx.Err() != nil {
			return 0, nil, ctx.Err()
		}
		if err == nil && status < 500 {
			return status, data, nil
		}
		if err == nil {
			err = &statusError{method: method, url: addr, status: status, body: snippet(data)}
		}
		last = err
	}
	return 0, nil, last
}

func (d *Driver) once(ctx context.Context, method, addr string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, addr, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		sum := md5.Sum(body)
		req.Header.Set("Content-MD5", base64.StdEncoding.EncodeToString(sum[:]))
	}
	switch {
	case d.o.Token != "":
		req.Header.Set("Authorization", "Bearer "+d.o.Token)
	case d.o.Username != "":
		req.SetBasicAuth(d.o.Username, d.o.Password)
	}
	resp, err := d.o.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is named by the caller
		}
		return 0, nil, fmt.Errorf("%s %s: %w", method, addr, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: read the answer: %w", method, addr, err)
	}
	if len(data) > maxDocument {
		return 0, nil, fmt.Errorf("%s %s: the answer is larger than %d bytes", method, addr, maxDocument)
	}
	return resp.StatusCode, data, nil
}

// snippet is the start of an error answer, for messages.
func snippet(b []byte) string {
	const n = 200
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// get returns a document's body, or ok false when the service has none (404,
// 204, or an empty 200, as Terraform reads them).
func (d *Driver) get(ctx context.Context, name string) (data []byte, ok bool, err error) {
	addr := d.address(name)
	status, body, err := d.do(ctx, http.MethodGet, addr, nil)
	switch {
	case err != nil:
		return nil, false, err
	case status == http.StatusNotFound || status == http.StatusNoContent:
		return nil, false, nil
	case status != http.StatusOK:
		return nil, false, &statusError{method: http.MethodGet, url: addr, status: status, body: snippet(body)}
	}
	return body, len(body) > 0, nil
}

// put stores a document, presenting lockID when the document is locked.
func (d *Driver) put(ctx context.Context, name string, body []byte, lockID string) error {
	addr := d.address(name)
	if lockID != "" {
		addr += "?ID=" + url.QueryEscape(lockID)
	}
	status, data, err := d.do(ctx, d.o.UpdateMethod, addr, body)
	if err != nil {
		return err
	}
	if status != http.StatusOK && status != http.StatusCreated && status != http.StatusNoContent {
		return &statusError{method: d.o.UpdateMethod, url: addr, status: status, body: snippet(data)}
	}
	return nil
}

// remove deletes a document; one already gone is no error.
func (d *Driver) remove(ctx context.Context, name string) error {
	addr := d.address(name)
	status, data, err := d.do(ctx, http.MethodDelete, addr, nil)
	if err != nil {
		return err
	}
	if status != http.StatusOK && status != http.StatusNoContent && status != http.StatusNotFound {
		return &statusError{method: http.MethodDelete, url: addr, status: status, body: snippet(data)}
	}
	return nil
}

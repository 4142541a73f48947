package codec

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/kumoproj/kumo/internal/keyring"
)

func ring(t *testing.T) *keyring.Ring {
	t.Helper()
	r, err := keyring.LoadOrCreate(filepath.Join(t.TempDir(), keyring.FileName))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

type secretInput struct {
	Value string `json:"value"`
}

const marker = "marker-5f0c2a9e"

func TestPayloadsAreEncryptedAndNameTheirKey(t *testing.T) {
	r := ring(t)
	dc := DataConverter(r)
	p, err := dc.ToPayload(secretInput{Value: marker})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := p.Marshal()
	if bytes.Contains(raw, []byte(marker)) {
		t.Fatal("the encoded payload holds the value in clear")
	}
	if got := string(p.Metadata[MetadataEncoding]); got != EncodingEncrypted {
		t.Errorf("encoding %q, want %q", got, EncodingEncrypted)
	}
	if got := string(p.Metadata[MetadataKeyID]); got != r.CurrentID() {
		t.Errorf("key ID %q, want %q", got, r.CurrentID())
	}
	var back secretInput
	if err := dc.FromPayload(p, &back); err != nil || back.Value != marker {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
}

// With a key configured, a plain payload (a raw SDK client's, without the key)
// is refused with an error saying so, whatever its encoding; an empty list
// (no arguments) still decodes.
func TestPlainPayloadsAreRefused(t *testing.T) {
	dc := DataConverter(ring(t))
	for name, v := range map[string]any{"json": secretInput{Value: "forged"}, "nil": nil, "bytes": []byte("raw")} {
		plain, err := converter.GetDefaultDataConverter().ToPayload(v)
		if err != nil {
			t.Fatal(err)
		}
		var out secretInput
		err = dc.FromPayload(plain, &out)
		var pe *PlainPayloadError
		if !errors.As(err, &pe) || pe.Encoding != string(plain.Metadata[MetadataEncoding]) || !strings.Contains(err.Error(), "not encrypted") {
			t.Errorf("%s: plain payload through the codec: %+v, %v; want a PlainPayloadError", name, out, err)
		}
	}
	var none []any
	if err := dc.FromPayloads(nil, &none); err != nil {
		t.Errorf("no payloads: %v", err)
	}
	if _, err := New(ring(t)).Decode([]*commonpb.Payload{{Data: []byte("no metadata")}}); err == nil || !strings.Contains(err.Error(), "encoding none") {
		t.Errorf("payload without metadata: %v", err)
	}
}

func TestWrongKeyNamesTheKey(t *testing.T) {
	p, err := DataConverter(ring(t)).ToPayload(secretInput{Value: marker})
	if err != nil {
		t.Fatal(err)
	}
	id := string(p.Metadata[MetadataKeyID])
	var v secretInput
	err = DataConverter(ring(t)).FromPayload(p, &v)
	if err == nil || !strings.Contains(err.Error(), "key "+id) {
		t.Fatalf("decoding with another key file: %v, want an error naming key %s", err, id)
	}
}

func TestHandlerDecodesForAllowedOriginsOnly(t *testing.T) {
	r := ring(t)
	h := NewHandler(r)
	const ui = "http://127.0.0.1:8233"
	h.AllowOrigin(ui)
	srv := httptest.NewServer(h)
	defer srv.Close()

	p, err := DataConverter(r).ToPayload(secretInput{Value: marker})
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(map[string]any{"payloads": []any{map[string]any{
		"metadata": map[string][]byte{MetadataEncoding: p.Metadata[MetadataEncoding], MetadataKeyID: p.Metadata[MetadataKeyID]},
		"data":     p.Data,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	post := func(path, origin string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Namespace", "default")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp, string(out)
	}

	resp, out := post("/default/decode", ui)
	if resp.StatusCode != http.StatusOK || !strings.Contains(out, "payloads") {
		t.Fatalf("decode: %s %s", resp.Status, out)
	}
	if resp.Header.Get("Access-Control-Allow-Origin") != ui {
		t.Errorf("Access-Control-Allow-Origin %q, want %q", resp.Header.Get("Access-Control-Allow-Origin"), ui)
	}
	var decoded struct {
		Payloads []*commonpb.Payload `json:"payloads"`
	}
	if err := json.Unmarshal([]byte(out), &decoded); err != nil || len(decoded.Payloads) != 1 {
		t.Fatalf("decode answer %s: %v", out, err)
	}
	var v secretInput
	if err := converter.GetDefaultDataConverter().FromPayload(decoded.Payloads[0], &v); err != nil || v.Value != marker {
		t.Errorf("decoded payload: %+v, %v", v, err)
	}

	// The UI's preflight.
	req, _ := http.NewRequest(http.MethodOptions, srv.URL+"/decode", nil)
	req.Header.Set("Origin", ui)
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type,x-namespace")
	pre, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	pre.Body.Close()
	if pre.StatusCode != http.StatusNoContent || !strings.Contains(pre.Header.Get("Access-Control-Allow-Headers"), "X-Namespace") {
		t.Errorf("preflight: %s, allow headers %q", pre.Status, pre.Header.Get("Access-Control-Allow-Headers"))
	}

	// What the UI shows may include payloads kumo never sealed (the plain
	// kumo-subject header): the endpoint passes them as they are, which
	// reveals nothing.
	plain, err := converter.GetDefaultDataConverter().ToPayload(secretInput{Value: "header"})
	if err != nil {
		t.Fatal(err)
	}
	if body, err = json.Marshal(map[string]any{"payloads": []any{map[string]any{"metadata": plain.Metadata, "data": plain.Data}}}); err != nil {
		t.Fatal(err)
	}
	if resp, out := post("/decode", ui); resp.StatusCode != http.StatusOK || !strings.Contains(out, base64.StdEncoding.EncodeToString(plain.Data)) {
		t.Errorf("decode of a plain payload: %s %s", resp.Status, out)
	}

	// Another web page may not read decoded payloads.
	if resp, out := post("/decode", "http://evil.example"); resp.StatusCode != http.StatusForbidden || strings.Contains(out, "payloads") {
		t.Errorf("decode from another origin: %s %s", resp.Status, out)
	}
}

// BenchmarkDataConverterRoundTrip: what the codec adds to a payload of about
// 2 KB (a node's input or result is smaller), encode and decode.
func BenchmarkDataConverterRoundTrip(b *testing.B) {
	r, err := keyring.LoadOrCreate(filepath.Join(b.TempDir(), keyring.FileName))
	if err != nil {
		b.Fatal(err)
	}
	v := secretInput{Value: strings.Repeat("x", 2048)}
	for _, c := range []struct {
		name string
		dc   converter.DataConverter
	}{{"plain", DataConverter(nil)}, {"codec", DataConverter(r)}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				p, err := c.dc.ToPayload(v)
				if err != nil {
					b.Fatal(err)
				}
				var out secretInput
				if err := c.dc.FromPayload(p, &out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

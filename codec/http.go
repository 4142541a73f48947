package codec

import (
	"net/http"
	"sync"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/kumoproj/kumo/internal/keyring"
)

// Handler serves the Temporal codec server protocol: POST /encode and /decode
// (also under a namespace prefix, /<namespace>/decode) with a JSON body
// {"payloads": [...]}, answered the same way. A browser may call it only from
// the origins allowed (the Web UI's), so a web page the user happens to open
// cannot read decoded payloads off a loopback port.
type Handler struct {
	codec http.Handler

	mu      sync.RWMutex
	origins map[string]bool
}

// NewHandler serves ring's codec.
func NewHandler(ring *keyring.Ring) *Handler {
	return &Handler{codec: converter.NewPayloadCodecHTTPHandler(viewCodec{New(ring)}), origins: map[string]bool{}}
}

// viewCodec is the codec for showing payloads: what the Web UI asks to decode
// includes payloads kumo never sealed (the plain kumo-subject header, histories
// recorded before a key was configured), and decoding those reveals nothing,
// so they pass as they are. Workers and clients decode with Codec, which
// refuses them.
type viewCodec struct{ *Codec }

func (v viewCodec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	return v.decode(payloads, true)
}

// AllowOrigin lets pages of origin ("http://127.0.0.1:8233") call the handler.
func (h *Handler) AllowOrigin(origin string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.origins[origin] = true
}

func (h *Handler) allowed(origin string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.origins[origin]
}

// ServeHTTP answers CORS preflights for allowed origins, refuses requests from
// other origins, and hands the rest to the SDK's codec handler. Requests
// without an Origin (the temporal CLI, curl) are not a browser's: they pass.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	if origin != "" {
		if !h.allowed(origin) {
			http.Error(w, "origin not allowed", http.StatusForbidden)
			return
		}
		hd := w.Header()
		hd.Set("Access-Control-Allow-Origin", origin)
		hd.Set("Access-Control-Allow-Credentials", "true")
		hd.Add("Vary", "Origin")
		if r.Method == http.MethodOptions {
			hd.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
			hd.Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization")
			hd.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	h.codec.ServeHTTP(w, r)
}

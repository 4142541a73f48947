package runpage

import (
	"bytes"
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"time"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
)

// Source reads runs for the page, as the caller whose credentials ctx
// carries.
type Source interface {
	// Run returns a run's details and its preview (nil before it). Its
	// error wraps ErrNotFound when there is no such run, ErrForbidden when
	// the caller may not see it.
	Run(ctx context.Context, id string) (*client.RunDetails, *client.RunPlan, error)
	// Release returns a revision of project and workspace.
	Release(ctx context.Context, project, workspace string, revision int) (*engine.Release, error)
}

var (
	// ErrNotFound is wrapped by a Source's error for a run it does not know.
	ErrNotFound = errors.New("no such run")
	// ErrForbidden is wrapped by a Source's error for a run the caller may
	// not see.
	ErrForbidden = errors.New("not allowed")
)

// Path is the page of run id, as New serves it.
func Path(id string) string { return "/runs/" + id }

// New serves GET /runs/{id}, the page of run id, from src. Any other path
// is a page saying there is nothing there.
func New(src Source) http.Handler {
	h := &handler{src: src, now: time.Now}
	mux := http.NewServeMux()
	mux.HandleFunc("/runs/{id}", h.serveRun)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.serveError(w, http.StatusNotFound, "Not found", "There is no page at "+r.URL.Path+": a run's page is /runs/<run ID>.")
	})
	return mux
}

type handler struct {
	src Source
	now func() time.Time
}

//go:embed page.html
var pageHTML string

//go:embed page.css
var pageCSS string

var pageTemplate = template.Must(template.New("page").Parse(pageHTML))

func (h *handler) serveRun(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		h.serveError(w, http.StatusMethodNotAllowed, "Read only", "A run's page is only read (GET).")
		return
	}
	id := r.PathValue("id")
	if !client.IsRunID(id) {
		h.serveError(w, http.StatusNotFound, "No such run", fmt.Sprintf("%q is not a run ID: kumo prints the run ID when it starts a run, and `kumo run list` lists them.", id))
		return
	}
	d, plan, err := h.src.Run(r.Context(), id)
	switch {
	case errors.Is(err, ErrNotFound):
		h.serveError(w, http.StatusNotFound, "No such run", fmt.Sprintf("There is no run %s: `kumo run list` lists the runs.", id))
		return
	case errors.Is(err, ErrForbidden):
		h.serveError(w, http.StatusForbidden, "Not allowed", err.Error())
		return
	case err != nil:
		h.serveError(w, http.StatusBadGateway, "The run could not be read", err.Error())
		return
	}
	in := Input{Run: d, Plan: plan, Now: h.now()}
	// Only after the run was read, with the caller's credentials, and only
	// its own release: the release is read from the backend, which knows no
	// caller.
	if d.Revision > 0 {
		in.Release, in.ReleaseError = h.release(r.Context(), d, d.Revision)
		if in.Release != nil && in.Release.RunID != "" && in.Release.RunID != d.RunID {
			in.Release, in.ReleaseError = nil, fmt.Errorf("revision %d was made by run %s, not this one", d.Revision, in.Release.RunID)
		}
	}
	if d.Revision > 1 && plan != nil && slices.ContainsFunc(plan.Changes, func(c engine.Change) bool { return c.Action == engine.Delete }) {
		in.Previous, in.PreviousError = h.release(r.Context(), d, d.Revision-1)
	}
	h.render(w, http.StatusOK, Build(in))
}

func (h *handler) release(ctx context.Context, d *client.RunDetails, revision int) (*engine.Release, error) {
	rel, err := h.src.Release(ctx, d.Project, d.Workspace, revision)
	if err != nil {
		return nil, fmt.Errorf("revision %d of %s/%s: %w", revision, d.Project, d.Workspace, err)
	}
	return rel, nil
}

func (h *handler) serveError(w http.ResponseWriter, code int, title, message string) {
	h.render(w, code, View{Title: title, Message: message})
}

// render writes v whole, or a plain error if the template fails: never half
// a page.
func (h *handler) render(w http.ResponseWriter, code int, v View) {
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	v.Nonce = base64.StdEncoding.EncodeToString(nonce)
	v.CSS = template.CSS(pageCSS)
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, v); err != nil {
		http.Error(w, "render the run's page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	// The page names resources and who changed them: no cache keeps it, no
	// other site frames it, and it loads nothing but its own style.
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("Content-Security-Policy", "default-src 'none'; style-src 'nonce-"+v.Nonce+"'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

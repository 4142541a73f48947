package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/grpc/metadata"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server"
	"github.com/kumoproj/kumo/server/auth"
)

// Prefix is where the API's version 1 lives.
const Prefix = "/api/v1"

// Options say what the API serves with and whom it lets in.
type Options struct {
	// Client runs every operation (required). Under `kumo server` it is
	// opened with client.Options.CallerCredentials.
	Client *client.Client
	// Policy decides what each subject may do (required): the server's.
	Policy *authz.Policy
	// Authenticate finds who sends a request; nil: the kumo server web
	// endpoint's that passed the request on (server.RequestAuthenticator),
	// and a request that came some other way is refused.
	Authenticate server.Authenticator
	// ForwardCredentials passes each caller's credential on to Temporal with
	// every call made for it, so that kumo's frontend authenticates the
	// caller again, decides with its policy and records the caller on the
	// run. Set it when Temporal is a kumo server's frontend; an existing
	// cluster of the operator's authenticates the API's own connection
	// instead, and the API's decision is the only one.
	ForwardCredentials bool
	// Pages serves the run pages under /runs/; nil: none (404).
	Pages http.Handler
}

// API is the HTTP handler of /api/v1, /openapi.json, /docs and /runs/.
type API struct {
	opts Options
	mux  *http.ServeMux
	doc  []byte // the OpenAPI document, built once from the routes
}

// New builds the API's handler.
func New(opts Options) (*API, error) {
	if opts.Client == nil || opts.Policy == nil {
		return nil, errors.New("api: Options.Client and Options.Policy are required")
	}
	a := &API{opts: opts, mux: http.NewServeMux()}
	for _, rt := range routes {
		a.mux.Handle(rt.method+" "+Prefix+rt.path, a.handler(rt))
	}
	doc, err := openAPIDocument()
	if err != nil {
		return nil, err
	}
	a.doc = doc
	return a, nil
}

// ServeHTTP routes a request: the document and its page are public (they
// hold no data); everything under /api/v1 is authenticated.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/openapi.json":
		a.serveStatic(w, r, "application/json", a.doc)
	case r.URL.Path == "/docs":
		// The page talks to this server only.
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'")
		a.serveStatic(w, r, "text/html; charset=utf-8", docsPage)
	case strings.HasPrefix(r.URL.Path, "/runs/"):
		if a.opts.Pages == nil {
			newProblem(ProblemNotFound, "this server serves no run pages").write(w, r)
			return
		}
		// The pages show runs: only to an authenticated caller, whom the
		// handler finds with Caller (and decides on per run).
		c, ok := a.authenticate(w, r)
		if !ok {
			return
		}
		a.opts.Pages.ServeHTTP(w, r.WithContext(context.WithValue(c.ctx, callerKey{}, c.subject)))
	case strings.HasPrefix(r.URL.Path, Prefix+"/"):
		if _, pattern := a.mux.Handler(r); pattern == "" {
			a.noRoute(w, r)
			return
		}
		a.mux.ServeHTTP(w, r)
	default:
		newProblem(ProblemNotFound, "no such path: the API is under "+Prefix+", described at /openapi.json").write(w, r)
	}
}

// noRoute answers a path no route serves (404) or serves with other
// methods (405, with Allow).
func (a *API) noRoute(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := a.mux.Handler(probe); p != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		newProblem(ProblemMethodNotAllowed, fmt.Sprintf("%s %s: this path takes %s", r.Method, r.URL.Path, strings.Join(allow, ", "))).write(w, r)
		return
	}
	newProblem(ProblemNotFound, "no such path: "+r.URL.Path+" (see /openapi.json)").write(w, r)
}

func (a *API) serveStatic(w http.ResponseWriter, r *http.Request, contentType string, body []byte) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		newProblem(ProblemMethodNotAllowed, r.URL.Path+" takes GET").write(w, r)
		return
	}
	writeBody(w, r, http.StatusOK, contentType, body, true)
}

// call is one authenticated request.
type call struct {
	a       *API
	w       http.ResponseWriter
	r       *http.Request
	ctx     context.Context // carries the caller's credential when forwarded
	subject runspec.Subject
	kc      *client.Client
}

// handler authenticates a request, then runs its route.
func (a *API) handler(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := a.authenticate(w, r)
		if !ok {
			return
		}
		if err := rt.handle(c); err != nil {
			problemOf(err).write(w, r)
		}
	})
}

// authenticate finds who sends r; when nobody is, it answers 401 and
// reports false.
func (a *API) authenticate(w http.ResponseWriter, r *http.Request) (*call, bool) {
	authn := a.opts.Authenticate
	if authn == nil {
		authn = server.RequestAuthenticator(r.Context())
	}
	if authn == nil {
		// Fail closed: without an authenticator nobody is let in.
		newProblem(ProblemInternal, "the API was reached without an authenticator; it serves only behind kumo server's web endpoint or kumo api").write(w, r)
		return nil, false
	}
	subject, err := authn(r)
	if err == nil && r.Header.Get("Authorization") != "" {
		// A bearer credential's subject may not pass for the home's
		// owner or kumo's own parts, as at the frontend.
		err = auth.CheckExternalName(subject.Name, a.opts.Policy.Owner)
	}
	if err != nil {
		newProblem(ProblemUnauthenticated, err.Error()).write(w, r)
		return nil, false
	}
	return &call{a: a, w: w, r: r, ctx: a.callerContext(r), subject: subject, kc: a.opts.Client}, true
}

type callerKey struct{}

// Caller is the authenticated subject of a request the API passed on to
// Options.Pages; ok is false for any other request.
func Caller(ctx context.Context) (subject runspec.Subject, ok bool) {
	subject, ok = ctx.Value(callerKey{}).(runspec.Subject)
	return subject, ok
}

// callerContext is the request's context, carrying the caller's credential
// in its outgoing gRPC metadata when credentials are forwarded: its bearer
// credential, or its Web UI session cookie (and only that cookie), as the
// Web UI server forwards it.
func (a *API) callerContext(r *http.Request) context.Context {
	ctx := r.Context()
	if !a.opts.ForwardCredentials {
		return ctx
	}
	if h := r.Header.Get("Authorization"); h != "" {
		return metadata.AppendToOutgoingContext(ctx, "authorization", h)
	}
	if c, err := r.Cookie(server.SessionCookie); err == nil {
		return metadata.AppendToOutgoingContext(ctx, "cookie", server.SessionCookie+"="+c.Value)
	}
	return ctx
}

// may decides whether the caller may do action on project/workspace.
func (c *call) may(action authz.Action, project, workspace string) error {
	return c.a.opts.Policy.Decide(authz.Subject{Name: c.subject.Name, Groups: c.subject.Groups}, action, project, workspace)
}

// json answers v as JSON with status; a GET answers with an ETag, and 304
// when If-None-Match names it.
func (c *call) json(status int, v any) error {
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	writeBody(c.w, c.r, status, "application/json", append(body, '\n'), c.r.Method == http.MethodGet)
	return nil
}

// writeBody sends body; with etag, a GET gets an ETag and a matching
// If-None-Match gets 304 Not Modified without a body.
func writeBody(w http.ResponseWriter, r *http.Request, status int, contentType string, body []byte, etag bool) {
	h := w.Header()
	if etag && status == http.StatusOK {
		tag := etagOf(body, contentType)
		h.Set("ETag", tag)
		h.Set("Cache-Control", "private, no-cache")
		if noneMatch(r.Header.Get("If-None-Match"), tag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	h.Set("Content-Type", contentType)
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

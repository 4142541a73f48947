// Package api is kumo's HTTP API: /api/v1, JSON, described by the OpenAPI 3
// document it serves at /openapi.json (built from the same route table that
// serves the requests, so the two cannot drift apart) with a page to try it
// at /docs, for portals and CI that cannot speak Temporal's gRPC API with
// kumo's encrypted payloads.
//
// It is a thin layer over package client, the Go API the CLI uses: every
// operation is the client's, none is implemented twice. What is its own is
// HTTP: routes, authentication, problem+json errors (problem.go), ETags
// (etag.go), page tokens (page.go), idempotency keys (idempotency.go) and
// the validation of request bodies (runrequest.go).
//
// Identity is every entry point's: a request authenticates with a bearer
// credential (a kumo token, an OIDC token) or the Web UI's session cookie,
// else it is refused with 401. The API decides with the server's policy
// (authz) before it calls anything, and refuses with 403 naming the subject,
// the action and the project/workspace. Under `kumo server` it then calls
// the frontend as the caller: the caller's credential goes with every call,
// over a connection whose certificate carries no rights of its own, so the
// frontend decides again and records the real subject on the run.
//
// `kumo server` serves it on its web endpoint (server.Options.HTTP); `kumo
// api` serves it against an existing Temporal cluster, for fleets. The run
// pages (/runs/) are another package's handler, mounted here (Options.Pages).
package api

// Package runpage serves a page per run: plain HTML, no script, nothing
// fetched from the network. It shows the run's plan side by side (before on
// the left: live, or as last recorded for a resource the run deletes; desired
// on the right), the fields the run changes marked and sensitive values
// masked as `kumo preview` masks them, each resource's outcome and timings,
// who started and approved the run, and the release it made.
//
// The page reads runs through a Source, which the kumo client implements
// (ClientSource): the same reads `kumo run show` makes, with the caller's
// credentials from the request's context, and the API's policy deciding who
// sees which project and workspace (Authorizer). runpage authenticates no
// one: it is served only behind the HTTP API's authentication, which puts
// the caller in the context.
package runpage

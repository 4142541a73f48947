// Package chart renders Helm charts into plain Kubernetes manifests, as `helm
// template` does, with the Helm v3 SDK: a chart directory or archive on the
// local filesystem (dependencies vendored in charts/), its values layered from
// files and --set, and the target cluster's capabilities (Kubernetes version,
// API versions) given by the caller, so a chart that asks .Capabilities renders
// as it would for `helm install` against that cluster. CRDs from crds/ come
// first in the output. The result is client-side input to kumo: it becomes a
// Spec through engine/input like manifests given with -f, and Source says what
// was rendered (chart, version, a digest of the values) for the release.
package chart

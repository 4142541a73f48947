// Package input owns reading what users give kumo: the Specs and Kubernetes
// manifests of `kumo apply -f` (ReadInputs, ParseSpec) and the workspace,
// project, stack and app files (ParseYAML), from files or standard input
// (ReadFile, Read).
//
// Every reader bounds its input the same way before a parser sees it: a size
// limit (MaxSize, set by the CLI's --max-input-size; size.go), UTF-8 text,
// aliases that would expand a document past the limit, nesting deeper than
// MaxDepth and numbers JSON cannot hold (bounds.go); errors name the file,
// line and column. documents.go splits an input into its YAML or JSON
// documents; inputs.go tells a Spec from manifests, which engine.ManifestSpec
// turns into a Spec (the apply order comes from engine's tables of kinds).
//
// The package imports engine for the Spec types and engine never imports it,
// so engine stays free of reading; engine/generate reads its files here. The
// Helm chart and Kustomize inputs will live here next.
package input

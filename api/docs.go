package api

import _ "embed"

// docsPage is /docs: a page of the binary's own (no network, no third-party
// bundle) that reads /openapi.json, lists every operation and lets a
// person try it with their token.
//
//go:embed docs.html
var docsPage []byte

package input

import (
	"fmt"

	"github.com/kumoproj/kumo/engine"
)

// ParseYAML reads a user's configuration file (workspace, project, stack, app):
// one YAML or JSON document, bounded and checked as specs are, as plain values
// with numbers normalized (see engine.Normalize). An empty document gives nil.
// Errors start with source.
func ParseYAML(data []byte, source string) (any, error) {
	docs, err := splitDocuments(data, source)
	if err != nil {
		return nil, err
	}
	switch len(docs) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, fmt.Errorf("%s: %d documents (the second at line %d); want one", source, len(docs), docs[1].line)
	}
	var v any
	if err := decodeJSON(docs[0].json, &v, false); err != nil {
		return nil, fmt.Errorf("%s: %s", source, jsonErrorText(err))
	}
	if err := docs[0].checkValues(v); err != nil {
		return nil, err
	}
	return engine.NormalizeDecoded(v), nil
}

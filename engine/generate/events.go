package generate

import (
	"fmt"

	"github.com/kumoproj/kumo/engine/input"
	"github.com/kumoproj/kumo/engine/notify"
)

// ParseEvents reads the worker operator's event configuration (`kumo
// worker --events FILE`, `kumo server --events FILE`): sinks every
// workspace's events also go to, allowHTTP and apiURL. source names the
// file in errors; an unknown key is an error.
//
//	sinks:
//	- {name: ops-chat, kind: slack, url: "https://hooks.slack.com/services/..."}
//	apiURL: https://kumo.example.com
func ParseEvents(data []byte, source string) (notify.Operator, error) {
	doc, err := input.ParseYAML(data, source)
	if err != nil {
		return notify.Operator{}, err
	}
	var o notify.Operator
	if doc != nil {
		if err := decode("", doc, &o); err != nil {
			return notify.Operator{}, fmt.Errorf("%s: %w", source, err)
		}
	}
	if err := o.Validate(source); err != nil {
		return notify.Operator{}, err
	}
	return o, nil
}

package release

import (
	"context"
	"fmt"
	"strings"

	"github.com/kumoproj/kumo/engine/notify"
)

// SetEvents sets the worker operator's event configuration: sinks every
// workspace's events also go to, whether plain http may reach hosts other
// than loopback ones, and the HTTP API's URL for approve links.
func (m *Manager) SetEvents(o notify.Operator) { m.events = o }

// EventSinks are the sinks a workspace's events go to: the workspace's own,
// as stored in the backend (never as a run's input says), then the
// operator's, named with notify.OperatorPrefix.
func (m *Manager) EventSinks(ctx context.Context, workspace string) ([]notify.Sink, error) {
	ws, err := m.storedWorkspace(ctx, workspace)
	if err != nil {
		return nil, err
	}
	out := make([]notify.Sink, 0, len(ws.Notifications.Sinks)+len(m.events.Sinks))
	out = append(out, ws.Notifications.Sinks...)
	for _, s := range m.events.Sinks {
		s.Name = notify.OperatorPrefix + s.Name
		out = append(out, s)
	}
	return out, nil
}

// EventDelivery is one event made ready for one sink: where it goes, what
// that destination may be, and the message, unsigned.
type EventDelivery struct {
	Sink    notify.Sink
	Message notify.Message
}

// PrepareEvent finds the sink named name among the workspace's (as stored
// now) and the operator's, checks its URL under the operator's rules, and
// renders e for it (with the approve URL when the operator names the API).
// A sink that is gone, or whose URL is not allowed, is ErrInvalid: sending
// again cannot help. No error holds the URL.
func (m *Manager) PrepareEvent(ctx context.Context, workspace, name string, e notify.Event) (EventDelivery, error) {
	sinks, err := m.EventSinks(ctx, workspace)
	if err != nil {
		return EventDelivery{}, err
	}
	for _, s := range sinks {
		if s.Name != name {
			continue
		}
		field := "workspace " + workspace + ": notifications sink " + name
		if strings.HasPrefix(name, notify.OperatorPrefix) {
			field = "the operator's events: sink " + strings.TrimPrefix(name, notify.OperatorPrefix)
		}
		if err := s.Check(field, m.events.AllowHTTP); err != nil {
			return EventDelivery{}, kindErr(ErrInvalid, err)
		}
		msg, err := notify.Render(s.Kind, e.WithApproveURL(m.events.APIURL))
		if err != nil {
			return EventDelivery{}, kindErr(ErrInvalid, err)
		}
		return EventDelivery{Sink: s, Message: msg}, nil
	}
	return EventDelivery{}, kindErr(ErrInvalid, fmt.Errorf("sink %s is no longer configured for workspace %s", name, workspace))
}

package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/engine/notify"
	"github.com/kumoproj/kumo/release"
)

// SetEvents sets the worker operator's event configuration
// (release.Manager.SetEvents). A function, not a method: every method of
// Activities is an activity.
func SetEvents(a *Activities, o notify.Operator) { a.m.SetEvents(o) }

// SinksInput names the workspace whose event sinks a run asks for.
type SinksInput struct {
	Project   string `json:"project"`
	Workspace string `json:"workspace"`
}

// SinkRef is a sink as a run sees it: its name and the events it wants,
// never its URL.
type SinkRef struct {
	Name   string      `json:"name"`
	Kind   notify.Kind `json:"kind"`
	Events []string    `json:"events,omitempty"`
}

// Wants reports whether the sink takes events of kind.
func (s SinkRef) Wants(kind string) bool { return notify.Sink{Events: s.Events}.Wants(kind) }

// EventSinks lists the sinks a workspace's events go to
// (release.Manager.EventSinks): the stored workspace's and the operator's.
func (a *Activities) EventSinks(ctx context.Context, in SinksInput) ([]SinkRef, error) {
	sinks, err := a.m.EventSinks(ctx, in.Workspace)
	if err != nil {
		return nil, temporalError(err)
	}
	out := make([]SinkRef, len(sinks))
	for i, s := range sinks {
		out[i] = SinkRef{Name: s.Name, Kind: s.Kind, Events: s.Events}
	}
	return out, nil
}

// DeliverInput is one event for one sink.
type DeliverInput struct {
	Project   string       `json:"project"`
	Workspace string       `json:"workspace"`
	Sink      string       `json:"sink"`
	Event     notify.Event `json:"event"`
}

// DeliverEvent renders, signs and POSTs one event to one sink, found by its
// name in the stored workspace or the operator's configuration now. Temporal
// retries a failed POST; a sink that is gone, a URL or a secret that is not
// allowed is not retried. Errors name the sink and its scheme and host only.
func (a *Activities) DeliverEvent(ctx context.Context, in DeliverInput) error {
	d, err := a.m.PrepareEvent(ctx, in.Workspace, in.Sink, in.Event)
	if errors.Is(err, release.ErrInvalid) {
		return temporal.NewNonRetryableApplicationError("event sink: "+err.Error(), "WebhookRefused", nil)
	}
	if err != nil {
		return temporalError(err)
	}
	err = sendEvent(ctx, d, time.Now())
	if err == nil {
		return nil
	}
	msg := scrubURL(d.Sink.URL, fmt.Sprintf("event sink %s (%s): %v", d.Sink.Name, redactURL(d.Sink.URL), err))
	if errors.Is(err, errWebhookRefused) {
		return temporal.NewNonRetryableApplicationError(msg, "WebhookRefused", nil)
	}
	return errors.New(msg)
}

func sendEvent(ctx context.Context, d release.EventDelivery, now time.Time) error {
	if d.Sink.SecretEnv != "" {
		secret := os.Getenv(d.Sink.SecretEnv)
		if secret == "" {
			return fmt.Errorf("%w: the worker's %s (the sink's secretEnv) is unset or empty", errWebhookRefused, d.Sink.SecretEnv)
		}
		d.Message.Sign([]byte(secret), now)
	} else if d.Sink.Kind != notify.KindSlack {
		// Checked when the sink was configured; a generic webhook is never sent unsigned.
		return fmt.Errorf("%w: secretEnv is not set: kumo signs every generic webhook POST", errWebhookRefused)
	}
	hint := "the sink's allowPrivate"
	if strings.HasPrefix(d.Sink.Name, notify.OperatorPrefix) {
		hint += " in the operator's events file"
	} else {
		hint += " in the workspace's notifications"
	}
	return postWebhook(ctx, d.Sink.URL, d.Sink.AllowPrivate, hint, d.Message.Header, d.Message.Body, d.Message.Header[notify.HeaderEvent])
}

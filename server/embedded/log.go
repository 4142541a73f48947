package embedded

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// serverLogger adapts slog to the Temporal server's log.Logger. The server's
// Panic and Fatal levels are logged as errors: an embedded server must not
// take kumo down (or exit the process) from a log call.
type serverLogger struct {
	l *slog.Logger
	// fatal keeps the first Fatal message: the server logs one, and goes on,
	// when a service cannot listen on its port (it then panics in a
	// goroutine of its own once started, out of kumo's reach).
	fatal *atomic.Pointer[string]
}

var (
	_ log.Logger      = serverLogger{}
	_ log.WithLogger  = serverLogger{}
	_ log.SLogWrapper = serverLogger{}
	_ log.SkipLogger  = serverLogger{}
)

func newServerLogger(l *slog.Logger) serverLogger {
	return serverLogger{l: l.With("component", "temporal"), fatal: &atomic.Pointer[string]{}}
}

// fatalLogged returns the first Fatal message logged, if any.
func (s serverLogger) fatalLogged() (string, bool) {
	if m := s.fatal.Load(); m != nil {
		return *m, true
	}
	return "", false
}

func (s serverLogger) Debug(msg string, tags ...tag.Tag)  { s.log(slog.LevelDebug, msg, tags) }
func (s serverLogger) Info(msg string, tags ...tag.Tag)   { s.log(slog.LevelInfo, msg, tags) }
func (s serverLogger) Warn(msg string, tags ...tag.Tag)   { s.log(slog.LevelWarn, msg, tags) }
func (s serverLogger) Error(msg string, tags ...tag.Tag)  { s.log(slog.LevelError, msg, tags) }
func (s serverLogger) DPanic(msg string, tags ...tag.Tag) { s.log(slog.LevelError, msg, tags) }
func (s serverLogger) Panic(msg string, tags ...tag.Tag)  { s.log(slog.LevelError, msg, tags) }
func (s serverLogger) Fatal(msg string, tags ...tag.Tag) {
	text := msg
	for _, t := range tags {
		text += fmt.Sprintf(" %s=%v", t.Key(), t.Value())
	}
	s.fatal.CompareAndSwap(nil, &text)
	s.log(slog.LevelError, msg, tags)
}

// With returns a logger that adds tags to every record.
func (s serverLogger) With(tags ...tag.Tag) log.Logger {
	args := make([]any, len(tags))
	for i, t := range tags {
		args[i] = slog.Any(t.Key(), t.Value())
	}
	return serverLogger{l: s.l.With(args...), fatal: s.fatal}
}

// Skip is for call-site reporting, which this adapter does not do.
func (s serverLogger) Skip(int) log.Logger { return s }

// SLog lets the server hand the same slog logger to components that take one.
func (s serverLogger) SLog() *slog.Logger { return s.l }

func (s serverLogger) log(level slog.Level, msg string, tags []tag.Tag) {
	ctx := context.Background()
	if !s.l.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, len(tags))
	for i, t := range tags {
		attrs[i] = slog.Any(t.Key(), t.Value())
	}
	s.l.LogAttrs(ctx, level, msg, attrs...)
}

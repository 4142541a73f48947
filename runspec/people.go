package runspec

import (
	"time"

	"github.com/kumoproj/kumo/engine"
)

// Unverified is the subject of a request that reached a run without
// SubjectHeader: the name the client sent, which nobody vouched for.
func Unverified(name string) Subject { return Subject{Name: name} }

// String is the subject's name as runs show it: "local:alice", or
// "alice@host (unverified)".
func (s Subject) String() string { return engine.DisplayName(s.Name, s.Verified) }

// InGroup reports whether s is in one of groups.
func (s Subject) InGroup(groups []string) bool {
	for _, g := range groups {
		for _, h := range s.Groups {
			if g == h {
				return true
			}
		}
	}
	return false
}

// Actor records s as having acted at t, saying reason.
func (s Subject) Actor(t time.Time, reason string) engine.Actor {
	return engine.Actor{Name: s.Name, Verified: s.Verified, Time: t, Reason: reason}
}

// Is reports whether s is the subject a recorded: the same name, both
// verified. An unverified name matches nobody: it proves nothing.
func (s Subject) Is(a *engine.Actor) bool {
	return a != nil && s.Verified && a.Verified && s.Name == a.Name
}

package engine

import "fmt"

// A spec's Moved entries (stack.yaml's `moved:`, as Terraform's `moved {}`
// blocks) say that a resource recorded under From is now To: the same live
// object under a new ID, after a generator or a component was renamed. An
// apply records each applicable move as its own move revision before it
// plans (release.Manager.Begin), so the plan sees To as recorded and neither
// deletes From nor creates To. A move whose From is not recorded does
// nothing (a stack applied fresh, or a move already made), so entries can
// stay in stack.yaml after they were applied.

// validateMoves checks the spec's moves: each one a valid move (Surgery's
// rules for IDs), no ID moved twice or onto twice, no chain (a To that is
// another entry's From: write the final ID), and no From that the spec still
// declares (it would be both moved away and kept).
func (s *Spec) validateMoves() []error {
	var errs []error
	from, to := map[string]int{}, map[string]int{}
	ids := s.idSet()
	for i, m := range s.Moved {
		at := fmt.Sprintf("moved[%d] (from %s to %s)", i, m.From, m.To)
		if err := (Surgery{Move: &s.Moved[i]}).Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", at, err))
			continue
		}
		if j, dup := from[m.From]; dup {
			errs = append(errs, fmt.Errorf("%s: moved[%d] already moves %s", at, j, m.From))
		}
		if j, dup := to[m.To]; dup {
			errs = append(errs, fmt.Errorf("%s: moved[%d] already moves a resource to %s", at, j, m.To))
		}
		from[m.From], to[m.To] = i, i
		if ids[m.From] {
			errs = append(errs, fmt.Errorf("%s: the spec still declares %s; a moved resource is declared under its new ID only", at, m.From))
		}
	}
	for i, m := range s.Moved {
		if j, chained := from[m.To]; chained && j != i {
			errs = append(errs, fmt.Errorf("moved[%d] (from %s to %s): moved[%d] moves %s on again; chains are not followed, write the final ID in both", i, m.From, m.To, j, m.To))
		}
	}
	return errs
}

// NextMove is the first of the spec's moves that applies to a release
// recording the IDs in recorded: its From is recorded and its To is not. A
// move whose From and To are both recorded is an error naming it (two
// records would claim one live object); nil when no move applies.
func (s *Spec) NextMove(recorded map[string]bool) (*Moved, error) {
	for i, m := range s.Moved {
		if !recorded[m.From] {
			continue
		}
		if recorded[m.To] {
			return nil, fmt.Errorf("moved[%d] (from %s to %s): both IDs are recorded; forget one (kumo release forget) before applying", i, m.From, m.To)
		}
		return &s.Moved[i], nil
	}
	return nil, nil
}

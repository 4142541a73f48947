package engine

import (
	"strings"
	"testing"
)

func TestSpecMovesAreValidated(t *testing.T) {
	tf := func(name string) string { return "hashicorp:terraform:terraform_data:" + name }
	for _, c := range []struct {
		moved []Moved
		want  string
	}{
		{[]Moved{{From: tf("a"), To: tf("a")}}, "the two IDs are the same"},
		{[]Moved{{From: "nonsense", To: tf("b")}}, "moved[0] (from nonsense to " + tf("b") + ")"},
		{[]Moved{{From: tf("a"), To: tf("b")}, {From: tf("a"), To: tf("c")}}, "moved[0] already moves " + tf("a")},
		{[]Moved{{From: tf("a"), To: tf("c")}, {From: tf("b"), To: tf("c")}}, "already moves a resource to " + tf("c")},
		{[]Moved{{From: tf("a"), To: tf("b")}, {From: tf("b"), To: tf("c")}}, "chains are not followed"},
		{[]Moved{{From: tf("c"), To: tf("d")}}, "the spec still declares " + tf("c")},
	} {
		s := &Spec{Resources: []Resource{{ID: tf("c"), Type: Terraform}}, Moved: c.moved}
		if errs := s.validateMoves(); len(errs) == 0 || !strings.Contains(errs[0].Error(), c.want) {
			t.Errorf("%+v: %v, want an error containing %q", c.moved, errs, c.want)
		}
	}
	ok := &Spec{Resources: []Resource{{ID: tf("b"), Type: Terraform}}, Moved: []Moved{{From: tf("a"), To: tf("b")}}}
	if errs := ok.validateMoves(); len(errs) > 0 {
		t.Errorf("a rename: %v", errs)
	}
}

func TestNextMove(t *testing.T) {
	s := &Spec{Moved: []Moved{{From: "x:y:z_t:a", To: "x:y:z_t:b"}, {From: "x:y:z_t:c", To: "x:y:z_t:d"}}}
	if m, err := s.NextMove(map[string]bool{"x:y:z_t:b": true}); m != nil || err != nil {
		t.Errorf("nothing to move (already moved): %+v, %v", m, err)
	}
	if m, err := s.NextMove(map[string]bool{"x:y:z_t:c": true}); err != nil || m == nil || m.To != "x:y:z_t:d" {
		t.Errorf("the second entry applies: %+v, %v", m, err)
	}
	if _, err := s.NextMove(map[string]bool{"x:y:z_t:a": true, "x:y:z_t:b": true}); err == nil || !strings.Contains(err.Error(), "both IDs are recorded") {
		t.Errorf("both recorded: %v", err)
	}
}

package main

import (
	"bytes"
	"errors"
	"testing"

	"github.com/kumoproj/kumo/engine/drift"
)

// TestDriftFoundIsAResultNotAnError: a check that found drift exits 2 with
// its report alone; one that could not check every resource is an error.
func TestDriftFoundIsAResultNotAnError(t *testing.T) {
	for _, tc := range []struct {
		name   string
		counts drift.Counts
		code   int
		stderr string
	}{
		{"in sync", drift.Counts{Resources: 2, InSync: 2}, 0, ""},
		{"drift found", drift.Counts{Resources: 2, InSync: 1, Drifted: 1}, 2, ""},
		{"not checked", drift.Counts{Resources: 2, InSync: 1, Error: 1},
			1, "Error: drift p/w rev 3: 0 of 2 drifted, 1 error: 1 resources could not be checked\n"},
	} {
		err := driftExit(&drift.Report{Project: "p", Workspace: "w", Revision: 3, Counts: tc.counts})
		var stderr bytes.Buffer
		code := 0
		if err != nil {
			code = reportError(&stderr, err)
		}
		if code != tc.code || stderr.String() != tc.stderr {
			t.Errorf("%s: exit %d, stderr %q; want %d, %q", tc.name, code, stderr.String(), tc.code, tc.stderr)
		}
	}
}

// TestErrorsPrintWithTheirExitCode: any other error prints as Error: and
// exits with the code it carries, 1 by default.
func TestErrorsPrintWithTheirExitCode(t *testing.T) {
	var stderr bytes.Buffer
	if code := reportError(&stderr, &exitError{code: 130, err: errors.New("interrupted")}); code != 130 || stderr.String() != "Error: interrupted\n" {
		t.Errorf("interrupted: exit %d, %q", code, stderr.String())
	}
	stderr.Reset()
	if code := reportError(&stderr, errors.New("no such stack")); code != 1 || stderr.String() != "Error: no such stack\n" {
		t.Errorf("plain error: exit %d, %q", code, stderr.String())
	}
}

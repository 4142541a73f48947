package terraform

import (
	"regexp"
	"strings"
)

var (
	// diagnosticStart opens one of terraform's diagnostics (with -no-color, which
	// terraform-exec passes; a "│ " frame, as in colored output, is tolerated).
	diagnosticStart = regexp.MustCompile(`^(Error|Warning): `)
	// sourceLine is a line of a diagnostic that points into main.tf.json, which
	// kumo generated: "with local_file.x,", "on main.tf.json line 1, in ...:", and
	// the source lines and markers quoted under it.
	sourceLine = regexp.MustCompile(`^\s+(with \S+,|on \S+ line \d+.*:|\d+: .*|├.*|\(and \d+ more similar.*\))$`)
	spaces     = regexp.MustCompile(`\s+`)
	// transient matches diagnostics of failures that retrying can fix: the
	// provider's API (or the registry, during init) unreachable, overloaded,
	// throttling or timing out, or terraform's state lock held by another run.
	transient = regexp.MustCompile(`(?i)connection refused|connection reset|broken pipe|i/o timeout|` +
		`tls handshake timeout|timeout awaiting|deadline exceeded|too many requests|throttl|rate exceeded|` +
		`service unavailable|bad gateway|gateway timeout|temporarily unavailable|try again later|` +
		`error acquiring the state lock|\b(429|502|503|504)\b`)
)

// retryable reports whether terraform's condensed diagnostics tell of a failure
// that retrying can fix. Everything else (an invalid argument, an unknown
// resource type, a provider's refusal) fails the same way every time.
func retryable(diags string) bool { return transient.MatchString(diags) }

// diagnostics condenses terraform's standard error to its error diagnostics, one
// line each ("Error: summary: detail"), joined by "; ". Warnings are left out.
// Output with no error diagnostic comes back whitespace-collapsed.
func diagnostics(stderr string) string {
	var out, cur []string
	var para strings.Builder
	endPara := func() {
		if p := strings.TrimSpace(spaces.ReplaceAllString(para.String(), " ")); p != "" {
			cur = append(cur, p)
		}
		para.Reset()
	}
	flush := func() {
		endPara()
		if len(cur) > 0 && strings.HasPrefix(cur[0], "Error: ") {
			out = append(out, strings.Join(cur, ": "))
		}
		cur = nil
	}
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimRight(line, " \t\r")
		line = strings.TrimPrefix(strings.TrimPrefix(strings.TrimLeft(line, "╷╵"), "│"), " ")
		switch {
		case diagnosticStart.MatchString(line):
			flush()
			para.WriteString(line)
			endPara() // the summary stands alone
		case strings.TrimSpace(line) == "":
			endPara()
		case sourceLine.MatchString(line):
		default:
			para.WriteString(line + " ")
		}
	}
	flush()
	if len(out) == 0 {
		return strings.TrimSpace(spaces.ReplaceAllString(stderr, " "))
	}
	return strings.Join(out, "; ")
}

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
)

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

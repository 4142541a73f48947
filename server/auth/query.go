package auth

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/runspec"
)

// scopeQuery narrows a visibility query to runs in scopes:
// "(<scopes filter>) AND (<query>)". The query must stay inside its
// parentheses, so one that could close them, open a comment or end the
// statement is refused rather than passed on: checkQuery reads it the way
// the server's SQL-like parser does, and refuses what it cannot read with
// certainty (a backslash, an unterminated quote) as well as ORDER BY, which
// cannot be nested.
func scopeQuery(query string, scopes []authz.Scope) (string, error) {
	if len(scopes) == 0 {
		return "", errors.New("no project or workspace to view")
	}
	var terms []string
	for _, s := range scopes {
		var t []string
		if s.Project != "*" {
			t = append(t, fmt.Sprintf("%s = %s", runspec.AttrProject, quote(s.Project)))
		}
		if s.Workspace != "*" {
			t = append(t, fmt.Sprintf("%s = %s", runspec.AttrWorkspace, quote(s.Workspace)))
		}
		terms = append(terms, "("+strings.Join(t, " AND ")+")")
	}
	filter := strings.Join(terms, " OR ")
	if strings.TrimSpace(query) == "" {
		return filter, nil
	}
	if err := checkQuery(query); err != nil {
		return "", err
	}
	return "(" + filter + ") AND (" + query + ")", nil
}

// quote is a string literal; names hold no quote or backslash (checked).
func quote(s string) string { return "'" + s + "'" }

// checkQuery refuses a query that could reach outside the parentheses it is
// put in: a ")" that closes more than it opened, a comment ("--", "#",
// "/*"), a ";", a backslash (escapes are read differently by different
// parsers), an unterminated quote, and ORDER BY.
func checkQuery(q string) error {
	depth := 0
	var inQuote byte
	var outside strings.Builder // the query without its string literals
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c == '\\' {
			return errors.New("a backslash in a query is not allowed for a subject who views only some projects")
		}
		if inQuote != 0 {
			if c == inQuote {
				inQuote = 0
			}
			continue
		}
		switch c {
		case '\'', '"', '`':
			inQuote = c
			outside.WriteByte(' ')
			continue
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return errors.New("the query closes a parenthesis it did not open")
			}
		case ';', '#':
			return fmt.Errorf("%q is not allowed in a query", c)
		case '-', '/':
			if i+1 < len(q) && (q[i+1] == '-' && c == '-' || q[i+1] == '*' && c == '/') {
				return errors.New("comments are not allowed in a query")
			}
		}
		outside.WriteByte(c)
	}
	if inQuote != 0 {
		return errors.New("the query has an unterminated quote")
	}
	if depth != 0 {
		return errors.New("the query leaves a parenthesis open")
	}
	fields := strings.Fields(strings.ToLower(outside.String()))
	for i := 0; i+1 < len(fields); i++ {
		if fields[i] == "order" && fields[i+1] == "by" {
			return errors.New("ORDER BY is not allowed for a subject who views only some projects")
		}
	}
	if strings.Contains(strings.ToLower(outside.String()), "order by") {
		return errors.New("ORDER BY is not allowed for a subject who views only some projects")
	}
	return nil
}

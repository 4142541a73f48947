package input

// This file bounds what a user's YAML or JSON document may expand to once
// parsed: aliases (a "billion laughs" document multiplies a few bytes into
// gigabytes), nesting, and numbers JSON and Kubernetes cannot hold (NaN,
// infinities, integers beyond 64 bits, floats beyond float64). Documents are
// converted with sigs.k8s.io/yaml (YAML 1.1 as Kubernetes reads it), which gives
// no positions for these; when a document may break a bound, it is parsed
// again with yaml v3's node API, which keeps lines and columns and does not
// expand aliases, to say where.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// MaxDepth bounds how deeply the values of one document nest (a Kubernetes
// object, CRD schemas included, stays well below it).
const MaxDepth = 1000

// mayHaveAlias reports whether text holds what may be a YAML alias: a "*"
// that starts a token and is followed by a name. Documents without one skip the
// alias check. (A byte scan: a regular expression took a seventh of the time
// of reading a large spec.)
func mayHaveAlias(text []byte) bool {
	for i := 0; ; i++ {
		j := bytes.IndexByte(text[i:], '*')
		if j < 0 {
			return false
		}
		i += j
		starts := i == 0 || bytes.IndexByte([]byte(" \t\r\n[{,:"), text[i-1]) >= 0
		named := i+1 < len(text) && bytes.IndexByte([]byte(" \t\r\n,[]{}"), text[i+1]) < 0
		if starts && named {
			return true
		}
	}
}

// yamlToJSON converts one YAML document (text, whose first line is line start
// of source) to JSON. An alias that takes the document over the input size
// limit, NaN and infinities are errors naming their line and column.
func yamlToJSON(text []byte, source string, start int) ([]byte, error) {
	if mayHaveAlias(text) {
		if err := yamlProblemAt(text, source, start, nil); err != nil {
			return nil, err
		}
	}
	j, err := yaml.YAMLToJSON(text)
	if err != nil {
		if err := yamlProblemAt(text, source, start, nil); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %s", source, yamlErrorAt(err, start))
	}
	return j, nil
}

// yamlProblemAt is yamlProblem's finding as an error naming source and the
// position in it, or, when it finds none, nil (or fallback, when given).
func yamlProblemAt(text []byte, source string, start int, fallback error) error {
	line, col, msg := yamlProblem(text)
	if msg == "" {
		return fallback
	}
	return fmt.Errorf("%s: line %d, column %d: %s", source, line+start-1, col, msg)
}

// yamlProblem finds the first node of a YAML document that breaks a bound: an
// alias whose expansion takes the document over MaxSize (or that contains
// itself), a value nested deeper than MaxDepth, or a plain scalar that is NaN,
// an infinity, or a number out of range. line and col are 1-based in text; msg
// is "" when there is none (or the document does not parse).
func yamlProblem(text []byte) (line, col int, msg string) {
	var doc yamlv3.Node
	if yamlv3.Unmarshal(text, &doc) != nil {
		return 0, 0, ""
	}
	w := yamlWalk{limit: MaxSize(), sizes: map[*yamlv3.Node]int64{}}
	if n := w.visit(&doc, 0); n != nil {
		return n.Line, n.Column, w.msg
	}
	return 0, 0, ""
}

type yamlWalk struct {
	limit int64
	total int64 // bytes of the document as far as visited, aliases expanded
	sizes map[*yamlv3.Node]int64
	msg   string
}

// inProgress marks an anchored node whose size is being computed: an alias
// reaching it contains itself.
const inProgress = -1

// visit returns the first node under n that breaks a bound, setting w.msg.
func (w *yamlWalk) visit(n *yamlv3.Node, depth int) *yamlv3.Node {
	if depth > MaxDepth {
		w.msg = fmt.Sprintf("values nest more than %d levels deep", MaxDepth)
		return n
	}
	switch n.Kind {
	case yamlv3.AliasNode:
		size := w.size(n.Alias)
		if size == inProgress {
			w.msg = fmt.Sprintf("alias *%s refers to the value that contains it", n.Value)
			return n
		}
		if w.total += size; w.total > w.limit {
			w.msg = fmt.Sprintf("alias *%s expands the document to more than the input size limit of %s (anchors and aliases that multiply each other)", n.Value, formatSize(w.limit))
			return n
		}
		return nil
	case yamlv3.ScalarNode:
		w.total += int64(len(n.Value)) + 3
		if msg := numberProblem(n); msg != "" {
			w.msg = msg
			return n
		}
		return nil
	}
	w.total += 2
	for _, c := range n.Content {
		d := depth
		if n.Kind != yamlv3.DocumentNode {
			d++
		}
		if bad := w.visit(c, d); bad != nil {
			return bad
		}
	}
	return nil
}

// size is the bytes n stands for with its aliases expanded, at most just over
// the limit; inProgress when n contains an alias to itself.
func (w *yamlWalk) size(n *yamlv3.Node) int64 {
	if s, ok := w.sizes[n]; ok {
		return s
	}
	w.sizes[n] = inProgress
	var s int64
	switch n.Kind {
	case yamlv3.AliasNode:
		s = w.size(n.Alias)
	case yamlv3.ScalarNode:
		s = int64(len(n.Value)) + 3
	default:
		s = 2
		for _, c := range n.Content {
			cs := w.size(c)
			if cs == inProgress {
				s = inProgress
				break
			}
			s = min(s+cs, w.limit+1)
		}
	}
	w.sizes[n] = s
	return s
}

var (
	yamlNaNInf = regexp.MustCompile(`^[-+]?\.(nan|NaN|NAN|inf|Inf|INF)$`)
	yamlInt    = regexp.MustCompile(`^[-+]?(0b[01_]+|0o?[0-7_]+|0x[0-9a-fA-F_]+|[1-9][0-9_]*)$`)
	yamlFloat  = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$`)
)

// numberProblem says why a plain scalar is a number kumo cannot keep, or "".
// Quoted scalars and ones tagged !!str are text.
func numberProblem(n *yamlv3.Node) string {
	if n.Style&(yamlv3.SingleQuotedStyle|yamlv3.DoubleQuotedStyle|yamlv3.LiteralStyle|yamlv3.FoldedStyle) != 0 ||
		n.Style&yamlv3.TaggedStyle != 0 && n.Tag == "!!str" {
		return ""
	}
	return numberTextProblem(n.Value)
}

// numberTextProblem says why s, written as a number, cannot be kept, or "".
func numberTextProblem(s string) string {
	const quote = "; quote it to keep it as text"
	switch {
	case yamlNaNInf.MatchString(s):
		return fmt.Sprintf("%s is not a number JSON can hold (NaN and infinities are refused)%s", s, quote)
	case yamlInt.MatchString(s):
		if _, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 0, 64); errors.Is(err, strconv.ErrRange) {
			return fmt.Sprintf("integer %s does not fit in 64 bits%s", s, quote)
		}
	case yamlFloat.MatchString(s):
		if _, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64); errors.Is(err, strconv.ErrRange) {
			return fmt.Sprintf("number %s is out of the range of a 64-bit float%s", s, quote)
		}
	}
	return ""
}

// checkValues walks a decoded document (numbers as json.Number) for values
// nested deeper than MaxDepth and numbers kumo cannot keep, and returns an
// error naming the document's source and the position (or, failing that, the
// path) of the first.
func (d document) checkValues(v any) error {
	f := walkValues(v, 0, d.yaml != nil)
	if f.msg == "" && !f.suspect {
		return nil
	}
	var fallback error
	if f.msg != "" {
		path := f.path
		if len(path) > 8 {
			path = append(path[:8:8], "...")
		}
		fallback = fmt.Errorf("%s: at %s: %s", d.where(), strings.Join(path, ""), f.msg)
	}
	if d.yaml != nil {
		// Find the node with its position; a suspect that is quoted text in
		// the source is fine.
		return yamlProblemAt(d.yaml, d.source, d.start, fallback)
	}
	if line, col, ok := d.jsonPosition(f); ok {
		return fmt.Errorf("%s: line %d, column %d: %s", d.source, line, col, f.msg)
	}
	return fallback
}

// finding is what walkValues found: the path to the first value that breaks
// a bound and why (msg), with the number as written (literal) when it is one.
// suspect, in a YAML document, is a string or float that may be a plain YAML
// number the converter changed: 1e400 becomes a string, a 30-digit integer a
// float.
type finding struct {
	path         []string
	msg, literal string
	deep         bool
	suspect      bool
}

func walkValues(v any, depth int, fromYAML bool) finding {
	if depth > MaxDepth {
		return finding{msg: fmt.Sprintf("values nest more than %d levels deep", MaxDepth), deep: true}
	}
	var suspect bool
	descend := func(key string, e any) (finding, bool) {
		f := walkValues(e, depth+1, fromYAML)
		if f.msg != "" {
			f.path = append([]string{key}, f.path...)
			return f, true
		}
		suspect = suspect || f.suspect
		return f, false
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if f, stop := descend("."+k, e); stop {
				return f
			}
		}
	case []any:
		for i, e := range x {
			if f, stop := descend(fmt.Sprintf("[%d]", i), e); stop {
				return f
			}
		}
	case json.Number:
		m := numberTextProblem(string(x))
		if fromYAML {
			// The converter writes floats from 1e21 down in full (1e19 becomes
			// 10000000000000000000): only the source says what was written.
			f, err := x.Float64()
			return finding{suspect: m != "" || err == nil && math.Abs(f) >= 1<<63}
		}
		if m != "" {
			return finding{msg: m, literal: string(x)}
		}
	case string:
		if fromYAML && numberTextProblem(x) != "" {
			return finding{suspect: true}
		}
	}
	return finding{suspect: suspect}
}

// jsonPosition finds, in a JSON document, the line and column of what f found:
// its number literal, or the first bracket deeper than MaxDepth.
func (d document) jsonPosition(f finding) (line, col int, ok bool) {
	off := -1
	switch {
	case f.literal != "":
		off = bytes.Index(d.json, []byte(f.literal))
	case f.deep:
		off = deepBracket(d.json)
	}
	if off < 0 {
		return 0, 0, false
	}
	before := d.json[:off]
	line = d.line + bytes.Count(before, []byte("\n"))
	if nl := bytes.LastIndexByte(before, '\n'); nl >= 0 {
		col = off - nl
	} else {
		col = d.col + off
	}
	return line, col, true
}

// deepBracket is the offset of the first bracket of JSON text that opens a
// value nested deeper than MaxDepth, or -1.
func deepBracket(text []byte) int {
	depth, inString, escaped := 0, false, false
	for i, c := range text {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > MaxDepth+1 {
				return i
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return -1
}

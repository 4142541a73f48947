package engine

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// canonicalJSON rewrites text, as encoding/json wrote it, into the bytes
// json.Marshal(Normalize(v)) gives for the v it was written from: every
// object's keys sorted, numbers normalized (1.0 is 1), strings as
// encoding/json escapes them. It reads text once and copies what is
// already canonical, instead of decoding it into a tree, copying the tree
// and encoding that again: HashSpec's cost for a large spec.
//
// ok is false when text holds what it does not handle exactly (a key twice
// in an object, whitespace, a value it cannot read); the caller then takes
// the long way, whose answer is the definition.
func canonicalJSON(text []byte) (out []byte, ok bool) {
	c := canonicalizer{in: text, out: make([]byte, 0, len(text))}
	if !c.value() || c.at != len(c.in) {
		return nil, false
	}
	return c.out, true
}

type canonicalizer struct {
	in  []byte
	at  int
	out []byte
	// scratch holds an object's members while they are put in order.
	scratch []byte
	members []member
}

func (c *canonicalizer) value() bool {
	if c.at >= len(c.in) {
		return false
	}
	switch b := c.in[c.at]; {
	case b == '{':
		return c.object()
	case b == '[':
		return c.array()
	case b == '"':
		return c.str()
	case b == '-' || '0' <= b && b <= '9':
		return c.number()
	case b == 't':
		return c.literal("true")
	case b == 'f':
		return c.literal("false")
	case b == 'n':
		return c.literal("null")
	}
	return false
}

func (c *canonicalizer) literal(word string) bool {
	if !bytes.HasPrefix(c.in[c.at:], []byte(word)) {
		return false
	}
	c.at += len(word)
	c.out = append(c.out, word...)
	return true
}

// member is an object's member as written to out: its key (decoded; in
// the input's bytes when it has no escape) and where it starts and ends in
// out.
type member struct {
	key        []byte
	start, end int
}

func (c *canonicalizer) object() bool {
	c.at++ // {
	c.out = append(c.out, '{')
	first := len(c.out)
	// The members of the objects being read, innermost last: this one's
	// from base on.
	base := len(c.members)
	defer func() { c.members = c.members[:base] }()
	sorted := true
	for c.at < len(c.in) && c.in[c.at] != '}' {
		if len(c.members) > base {
			if c.in[c.at] != ',' {
				return false
			}
			c.at++
			c.out = append(c.out, ',')
		}
		start := len(c.out)
		key, ok := c.key()
		if !ok || c.at >= len(c.in) || c.in[c.at] != ':' {
			return false
		}
		c.at++
		c.out = append(c.out, ':')
		if !c.value() {
			return false
		}
		if n := len(c.members); n > base && bytes.Compare(key, c.members[n-1].key) <= 0 {
			sorted = false
		}
		c.members = append(c.members, member{key: key, start: start, end: len(c.out)})
	}
	if c.at >= len(c.in) {
		return false
	}
	c.at++ // }
	if !sorted && !c.sortMembers(first, c.members[base:]) {
		return false
	}
	c.out = append(c.out, '}')
	return true
}

// sortMembers rewrites the members of the object whose first member starts
// at first in out in key order, as json.Marshal writes a map's.
func (c *canonicalizer) sortMembers(first int, members []member) bool {
	c.scratch = append(c.scratch[:0], c.out[first:]...)
	slices.SortFunc(members, func(a, b member) int { return bytes.Compare(a.key, b.key) })
	c.out = c.out[:first]
	for i, m := range members {
		if i > 0 {
			if bytes.Equal(m.key, members[i-1].key) {
				return false // decoding keeps the last of the two: not the order text has
			}
			c.out = append(c.out, ',')
		}
		c.out = append(c.out, c.scratch[m.start-first:m.end-first]...)
	}
	return true
}

// key copies an object's key to out and returns it decoded.
func (c *canonicalizer) key() ([]byte, bool) {
	start := c.at
	if c.at >= len(c.in) || c.in[c.at] != '"' || !c.str() {
		return nil, false
	}
	raw := c.in[start:c.at]
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return raw[1 : len(raw)-1], true // what it decodes to
	}
	var k string
	if err := json.Unmarshal(raw, &k); err != nil {
		return nil, false
	}
	return []byte(k), true
}

func (c *canonicalizer) array() bool {
	c.at++ // [
	c.out = append(c.out, '[')
	for n := 0; c.at < len(c.in) && c.in[c.at] != ']'; n++ {
		if n > 0 {
			if c.in[c.at] != ',' {
				return false
			}
			c.at++
			c.out = append(c.out, ',')
		}
		if !c.value() {
			return false
		}
	}
	if c.at >= len(c.in) {
		return false
	}
	c.at++ // ]
	c.out = append(c.out, ']')
	return true
}

// str copies a string. One that is plain (valid UTF-8, no escape, nothing
// encoding/json would escape) is copied as it is; any other is decoded and
// encoded again, as the long way does.
func (c *canonicalizer) str() bool {
	start := c.at
	plain := true
	i := c.at + 1
	for ; i < len(c.in); i++ {
		b := c.in[i]
		if b == '"' {
			break
		}
		switch {
		case b == '\\':
			plain = false
			i++ // the escaped byte, a quote perhaps
		case b < 0x20, b == '<', b == '>', b == '&', b >= utf8.RuneSelf:
			plain = false
		}
	}
	if i >= len(c.in) {
		return false
	}
	c.at = i + 1
	raw := c.in[start:c.at]
	if plain || bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) && !hasHTMLOrSeparator(raw) {
		c.out = append(c.out, raw...)
		return true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return false
	}
	enc, err := json.Marshal(s)
	if err != nil {
		return false
	}
	c.out = append(c.out, enc...)
	return true
}

// hasHTMLOrSeparator reports whether raw holds what encoding/json escapes
// in a string besides quotes and backslashes: control bytes, <, >, & and
// the line and paragraph separators U+2028 and U+2029.
func hasHTMLOrSeparator(raw []byte) bool {
	return bytes.ContainsAny(raw, "<>&\u2028\u2029") || bytes.ContainsFunc(raw, func(r rune) bool { return r < 0x20 })
}

// number copies a number as Normalize leaves it: an integer (1.0 and 1e3
// are) as its decimal digits, any other as encoding/json writes a float64,
// and text that is no float64 at all (1e400) as a string, as normalizeNumber
// keeps it.
func (c *canonicalizer) number() bool {
	start := c.at
	for c.at < len(c.in) && isNumberByte(c.in[c.at]) {
		c.at++
	}
	text := string(c.in[start:c.at])
	n := normalizeNumber(json.Number(text))
	if i, ok := n.(int64); ok {
		c.out = strconv.AppendInt(c.out, i, 10)
		return true
	}
	enc, err := json.Marshal(n)
	if err != nil {
		return false
	}
	c.out = append(c.out, enc...)
	return true
}

func isNumberByte(b byte) bool {
	return '0' <= b && b <= '9' || b == '-' || b == '+' || b == '.' || b == 'e' || b == 'E'
}

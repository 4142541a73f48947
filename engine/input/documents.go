package input

// This file splits one input into its documents, YAML ("---" separated) or a
// stream of JSON values, converted to JSON, after checking its size and that it
// is UTF-8 text.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
)

// document is one YAML or JSON document of an Input.
type document struct {
	source string // the input's name
	index  int    // 1-based, counting non-empty documents only
	line   int    // 1-based line where the document starts
	json   []byte
	// yaml is the document's text when it was YAML, from line start on; col is
	// the column where a JSON document starts, on line.
	yaml  []byte
	start int
	col   int
}

func (d document) where() string {
	return fmt.Sprintf("%s: document %d (line %d)", d.source, d.index, d.line)
}

// splitDocuments splits data into its non-empty documents, converted to JSON: a
// YAML stream separated by "---" lines, or a stream of JSON values. Errors name
// the input and the line in it. Input over the size limit, bytes that are not
// UTF-8 and documents that break the bounds of bounds.go are errors.
func splitDocuments(data []byte, source string) ([]document, error) {
	if err := checkText(data, source); err != nil {
		return nil, err
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		docs, err := splitJSON(data, source)
		if err == nil {
			return docs, nil
		}
		// JSON documents may also be separated like YAML ones ("---").
		if !bytes.Contains(data, []byte("\n---")) {
			return nil, err
		}
		return splitYAML(data, source)
	}
	return splitYAML(data, source)
}

func splitYAML(data []byte, source string) ([]document, error) {
	var docs []document
	var cur bytes.Buffer
	start := 1
	flush := func(next int) error {
		text := cur.Bytes()
		cur.Reset()
		defer func() { start = next }()
		j, err := yamlToJSON(text, source, start)
		if err != nil {
			return err
		}
		if bytes.Equal(bytes.TrimSpace(j), []byte("null")) {
			return nil // empty, or only comments
		}
		if startsFlow(text) {
			if err := singleValue(text); err != nil {
				return fmt.Errorf("%s: line %d: %w", source, firstContentLine(text, start), err)
			}
		}
		docs = append(docs, document{source: source, index: len(docs) + 1, line: firstContentLine(text, start), json: j,
			yaml: bytes.Clone(text), start: start})
		return nil
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i, line := range lines {
		trimmed := bytes.TrimRight(line, " \t\r\n")
		switch {
		case isDocumentStart(trimmed):
			if err := flush(i + 2); err != nil {
				return nil, err
			}
			// "--- key: value": the document starts on the marker's line.
			if rest := bytes.TrimSpace(trimmed[3:]); len(rest) > 0 && rest[0] != '#' {
				cur.Write(rest)
				cur.WriteByte('\n')
				start = i + 1
			}
		case bytes.Equal(trimmed, []byte("...")): // document end marker
			cur.WriteByte('\n')
		case i == 0 && bytes.HasPrefix(trimmed, []byte("%")): // a %YAML directive
			cur.WriteByte('\n')
		default:
			cur.Write(line)
		}
	}
	if err := flush(len(lines) + 1); err != nil {
		return nil, err
	}
	return docs, nil
}

// singleValue refuses a document holding more than one value ("{...}" twice on
// two lines): the YAML parser would return the first and drop the others.
func singleValue(text []byte) error {
	dec := yamlv2.NewDecoder(bytes.NewReader(text))
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil // YAMLToJSON accepted it; nothing more to check
	}
	if err := dec.Decode(&v); err != io.EOF {
		return errors.New("more than one value in one document; separate documents with ---")
	}
	return nil
}

// startsFlow reports whether a document starts with a flow collection, a
// quoted scalar or a node property: only then can a second value follow the
// first (after a block collection or a plain scalar the parser refuses one), so
// only then is singleValue, a second parse, worth its time.
func startsFlow(text []byte) bool {
	for len(text) > 0 {
		line, rest, _ := bytes.Cut(text, []byte("\n"))
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			return bytes.IndexByte([]byte("{[\"'&!*|>"), t[0]) >= 0
		}
		text = rest
	}
	return false
}

func isDocumentStart(line []byte) bool {
	return bytes.HasPrefix(line, []byte("---")) && (len(line) == 3 || line[3] == ' ' || line[3] == '\t')
}

// firstContentLine is the line of text's first line that is not blank or a comment.
func firstContentLine(text []byte, start int) int {
	for i, l := range bytes.Split(text, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
			return start + i
		}
	}
	return start
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// yamlErrorAt rewrites a YAML error about a document starting at line start so
// that its line numbers count from the start of the file.
func yamlErrorAt(err error, start int) string {
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	return yamlLine.ReplaceAllStringFunc(msg, func(m string) string {
		n, _ := strconv.Atoi(strings.TrimPrefix(m, "line "))
		return "line " + strconv.Itoa(n+start-1)
	})
}

func splitJSON(data []byte, source string) ([]document, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var docs []document
	for {
		// Skip whitespace to find where the next value starts, for its line.
		off := int(dec.InputOffset())
		for off < len(data) && strings.ContainsRune(" \t\r\n", rune(data[off])) {
			off++
		}
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			return docs, nil
		}
		line := 1 + bytes.Count(data[:off], []byte("\n"))
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %s", source, line, strings.TrimPrefix(err.Error(), "json: "))
		}
		if bytes.Equal(raw, []byte("null")) {
			continue
		}
		col := off - bytes.LastIndexByte(data[:off], '\n')
		docs = append(docs, document{source: source, index: len(docs) + 1, line: line, json: raw, col: col})
	}
}

// checkText refuses input over the size limit and bytes that are not UTF-8,
// naming the line and column of the first bad byte. Input starting with a
// UTF-16 byte order mark is left to the YAML parser, which reads UTF-16.
func checkText(data []byte, source string) error {
	if int64(len(data)) > MaxSize() {
		return TooLarge(source, int64(len(data)))
	}
	if len(data) >= 2 && (data[0] == 0xFE && data[1] == 0xFF || data[0] == 0xFF && data[1] == 0xFE) {
		return nil
	}
	if utf8.Valid(data) {
		return nil
	}
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return fmt.Errorf("%s: line %d, column %d: byte 0x%02x is not UTF-8 (kumo reads UTF-8 text; convert the file, e.g. with iconv)", source, line, col, data[i])
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += n
	}
	return nil
}

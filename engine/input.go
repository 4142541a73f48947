package engine

// This file bounds what kumo reads from users (specs, manifests, workspace,
// project, stack and app files) before a parser sees it: a size limit (which
// engine/generate's readers also check while reading, so standard input is never
// read whole) and UTF-8. The bounds on what the YAML inside may expand to
// (aliases, nesting, numbers) are in yamlinput.go.

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// DefaultMaxInputSize bounds one input file: 8 MiB, several thousand resources.
const DefaultMaxInputSize = 8 << 20

// MaxInputSizeEnv is the environment variable the CLI's --max-input-size
// reads; errors about the limit name both.
const MaxInputSizeEnv = "KUMO_MAX_INPUT_SIZE"

// maxInputSize is the limit SetMaxInputSize chose; 0 means the default.
var maxInputSize atomic.Int64

// SetMaxInputSize sets the limit on one input's size for this process (the CLI
// sets it from --max-input-size); n <= 0 goes back to DefaultMaxInputSize.
func SetMaxInputSize(n int64) { maxInputSize.Store(max(n, 0)) }

// MaxInputSize is the limit on one input's size in bytes.
func MaxInputSize() int64 {
	if n := maxInputSize.Load(); n > 0 {
		return n
	}
	return DefaultMaxInputSize
}

// ParseSize reads a size in bytes: a whole number, optionally followed by a
// unit, binary (Ki, Mi, Gi, also KiB, MiB, GiB) or decimal (k, M, G, also kB,
// KB, MB, GB): 8Mi, 512KiB, 10MB, 1048576.
func ParseSize(s string) (int64, error) {
	digits := strings.TrimRightFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	unit := strings.TrimSpace(s[len(digits):])
	n, err := strconv.ParseInt(strings.TrimSpace(digits), 10, 64)
	mult, known := sizeUnits[unit]
	if err != nil || !known || n <= 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("size %q: want a whole, positive number of bytes, optionally with a unit (Ki, Mi, Gi, k, M, G), e.g. 16Mi", s)
	}
	return n * mult, nil
}

var sizeUnits = map[string]int64{
	"": 1, "B": 1,
	"Ki": 1 << 10, "KiB": 1 << 10, "Mi": 1 << 20, "MiB": 1 << 20, "Gi": 1 << 30, "GiB": 1 << 30,
	"k": 1e3, "kB": 1e3, "KB": 1e3, "K": 1e3, "M": 1e6, "MB": 1e6, "G": 1e9, "GB": 1e9,
}

// ErrTooLarge is wrapped by the error about an input over the size limit.
var ErrTooLarge = errors.New("over the input size limit")

// InputTooLarge is the error about source being over the limit: size bytes,
// or, when size < 0, more than the limit (from a reader that was not read to
// its end).
func InputTooLarge(source string, size int64) error {
	limit := MaxInputSize()
	what := "more than " + formatSize(limit)
	if size >= 0 {
		what = formatSize(size)
	}
	return fmt.Errorf("%s: %s is %w of %s (raise it with --max-input-size or $%s)", source, what, ErrTooLarge, formatSize(limit), MaxInputSizeEnv)
}

// formatSize writes n bytes for people: 8 MiB, 9.5 MiB, 300 KiB, 12 bytes.
func formatSize(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size {
			return strings.TrimSuffix(strconv.FormatFloat(float64(n)/float64(u.size), 'f', 1, 64), ".0") + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// checkText refuses input over the size limit and bytes that are not UTF-8,
// naming the line and column of the first bad byte. Input starting with a
// UTF-16 byte order mark is left to the YAML parser, which reads UTF-16.
func checkText(data []byte, source string) error {
	if int64(len(data)) > MaxInputSize() {
		return InputTooLarge(source, int64(len(data)))
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

// ParseYAML reads a user's configuration file (workspace, project, stack, app):
// one YAML or JSON document, bounded and checked as specs are, as plain values
// with numbers normalized (see Normalize). An empty document gives nil. Errors
// start with source.
func ParseYAML(data []byte, source string) (any, error) {
	docs, err := splitDocuments(data, source)
	if err != nil {
		return nil, err
	}
	switch len(docs) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, fmt.Errorf("%s: %d documents (the second at line %d); want one", source, len(docs), docs[1].line)
	}
	var v any
	if err := decodeJSON(docs[0].json, &v, false); err != nil {
		return nil, fmt.Errorf("%s: %s", source, jsonErrorText(err))
	}
	if err := docs[0].checkValues(v); err != nil {
		return nil, err
	}
	return Normalize(v), nil
}

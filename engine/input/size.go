package input

// This file bounds the size of what kumo reads from users (specs, manifests,
// workspace, project, stack and app files) before a parser sees it; read.go
// also checks it while reading, so standard input is never read whole.

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
)

// DefaultMaxSize bounds one input file: 8 MiB, several thousand resources.
const DefaultMaxSize = 8 << 20

// MaxSizeEnv is the environment variable the CLI's --max-input-size
// reads; errors about the limit name both.
const MaxSizeEnv = "KUMO_MAX_INPUT_SIZE"

// maxSize is the limit SetMaxSize chose; 0 means the default.
var maxSize atomic.Int64

// SetMaxSize sets the limit on one input's size for this process (the CLI
// sets it from --max-input-size); n <= 0 goes back to DefaultMaxSize.
func SetMaxSize(n int64) { maxSize.Store(max(n, 0)) }

// MaxSize is the limit on one input's size in bytes.
func MaxSize() int64 {
	if n := maxSize.Load(); n > 0 {
		return n
	}
	return DefaultMaxSize
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

// TooLarge is the error about source being over the limit: size bytes,
// or, when size < 0, more than the limit (from a reader that was not read to
// its end).
func TooLarge(source string, size int64) error {
	limit := MaxSize()
	what := "more than " + formatSize(limit)
	if size >= 0 {
		what = formatSize(size)
	}
	return fmt.Errorf("%s: %s is %w of %s (raise it with --max-input-size or $%s)", source, what, ErrTooLarge, formatSize(limit), MaxSizeEnv)
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

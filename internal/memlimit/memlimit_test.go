package memlimit

import (
	"runtime/debug"
	"testing"
)

func TestSet(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	t.Setenv("GOMEMLIMIT", "")
	if got := Set(); got != Default || debug.SetMemoryLimit(-1) != Default {
		t.Fatalf("without GOMEMLIMIT: %d in force, want %d", debug.SetMemoryLimit(-1), int64(Default))
	}
	debug.SetMemoryLimit(1 << 30) // as the runtime applies GOMEMLIMIT=1GiB at start
	t.Setenv("GOMEMLIMIT", "1GiB")
	if got := Set(); got != 1<<30 {
		t.Fatalf("with GOMEMLIMIT=1GiB: %d in force, want %d", got, 1<<30)
	}
}

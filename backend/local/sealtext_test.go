package local_test

import (
	"strings"
	"testing"

	"github.com/kumoproj/kumo/backend/local"
)

// TestSealedTextIsBoundToItsPlace: a sealed text opens for the project,
// workspace and purpose it was sealed for, and nowhere else, and no error
// repeats it; a store without a key seals nothing and opens nothing.
func TestSealedTextIsBoundToItsPlace(t *testing.T) {
	b, _, _ := sealedStore(t)
	const url = "https://hooks.example.com/x?token=tok3n"
	sealed, err := b.SealText("p", "w", "drift webhook URL", url)
	if err != nil || sealed == "" || strings.Contains(sealed, "tok3n") {
		t.Fatalf("SealText = %q, %v", sealed, err)
	}
	if got, err := b.OpenText("p", "w", "drift webhook URL", sealed); err != nil || got != url {
		t.Fatalf("OpenText = %q, %v", got, err)
	}
	for _, place := range [][3]string{{"q", "w", "drift webhook URL"}, {"p", "prod", "drift webhook URL"}, {"p", "w", "other"}} {
		_, err := b.OpenText(place[0], place[1], place[2], sealed)
		if err == nil || strings.Contains(err.Error(), "tok3n") {
			t.Errorf("OpenText for %v: %v, want a refusal without the text", place, err)
		}
	}
	plain, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if s, err := plain.SealText("p", "w", "drift webhook URL", url); s != "" || err != nil {
		t.Errorf("SealText without a key = %q, %v; want nothing sealed", s, err)
	}
	if _, err := plain.OpenText("p", "w", "drift webhook URL", sealed); err == nil {
		t.Error("a store without a key opened a sealed text")
	}
}

package engine

// The unexported reference helpers that FuzzRefs (package engine_test, in
// ref_fuzz_test.go) checks parseRef against.
var (
	ParseRef    = parseRef
	RefPrefixOf = refPrefix
	WalkStrings = walkStrings
)

// HashNormalized is HashSpec the long way, which the one-pass canonical
// encoding (canonical_test.go) must agree with.
var (
	HashNormalized = hashNormalized
	CanonicalJSON  = canonicalJSON
)

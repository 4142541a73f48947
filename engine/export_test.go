package engine

// The unexported reference helpers that FuzzRefs (package engine_test, in
// ref_fuzz_test.go) checks parseRef against.
var (
	ParseRef    = parseRef
	RefPrefixOf = refPrefix
	WalkStrings = walkStrings
)

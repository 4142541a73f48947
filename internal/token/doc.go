// Package token issues, lists, revokes and verifies the bearer tokens kumo
// itself issues (`kumo token create --subject ci-deployer --ttl 8h`), for
// clients of a shared `kumo server` that have neither a client certificate nor
// an OIDC identity: CI jobs, bots.
//
// A token is "kumo_" + base64url(claims) + "." + base64url(HMAC-SHA256). The
// claims carry the token's ID, subject, groups, issue and expiry times, and
// the ID of the key that signed it. The signing key is created on first use
// in $KUMO_HOME/auth/ (mode 0600, the directory 0700); the token itself is
// printed once and stored nowhere.
//
// What is stored is a record per token (ID, subject, groups, times,
// revocation), in $KUMO_HOME/auth/tokens.json (mode 0600), rewritten whole
// and renamed into place under a lock, so concurrent `kumo token` commands
// never lose each other's changes and a reader never sees half a file. A
// token verifies only if its record exists and is not revoked: a token whose
// record was lost is refused, and a revocation takes effect on a running
// server at its next request, since the Verifier re-reads the records when
// the file changes.
//
// The package knows nothing of Temporal or of kumo's subjects: server/bearer
// adapts a Verifier to the frontend's bearer-verifier interface.
package token

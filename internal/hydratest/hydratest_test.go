package hydratest

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestLogin: the authorization code flow through a real Hydra yields an ID
// token for the client, with the user's subject and the groups the consent
// added.
func TestLogin(t *testing.T) {
	idp := Start(t)
	app := idp.NewClient(t)
	tok := idp.Login(t, app, User{Subject: "alice", Email: "alice@example.com", Groups: []string{"shop-dev"}})
	parts := strings.Split(tok.IDToken, ".")
	if len(parts) != 3 {
		t.Fatalf("id_token is not a JWS: %d parts", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Iss, Sub, Email string
		Aud             []string
		Groups          []string
		EmailVerified   bool `json:"email_verified"`
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		t.Fatal(err)
	}
	if c.Iss != idp.Issuer || c.Sub != "alice" || !slices.Contains(c.Aud, app.ID) ||
		!slices.Equal(c.Groups, []string{"shop-dev"}) || c.Email != "alice@example.com" || !c.EmailVerified {
		t.Errorf("ID token claims %+v, want iss %s, sub alice, aud %s, groups [shop-dev], verified email", c, idp.Issuer, app.ID)
	}
	if tok.AccessToken == "" {
		t.Error("no access token")
	}
}

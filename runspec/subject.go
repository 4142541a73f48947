package runspec

// SubjectHeader is the Temporal header field in which the kumo frontend
// stamps who made a request: on every start (StartWorkflowExecution,
// SignalWithStart, a schedule's action), signal and update it lets through,
// replacing whatever the client put there. Its value is a Subject encoded as
// plain JSON (metadata encoding "json/plain"), never through the payload
// codec, so that the frontend can write it without holding the payload keys.
//
// Workflows take the starter, approvers, rejecters and cancellers from this
// header, never from a name in a request's arguments. A request that reached
// a run without it (a Temporal cluster that does not run kumo's frontend
// authorization) is unverified: its subject is Unverified, and a workspace
// that requires approval refuses it.
const SubjectHeader = "kumo-subject"

// Subject is an authenticated caller, as the frontend stamps it in
// SubjectHeader.
type Subject struct {
	// Name is the subject: the local account ("local:alice"), an mTLS
	// certificate's subject, an OIDC token's subject, or the subject of a
	// token kumo issued.
	Name string `json:"name"`
	// Groups are the subject's groups (OIDC groups claim, a kumo token's
	// groups, the certificate's organizational units).
	Groups []string `json:"groups,omitempty"`
	// Roles are the roles the subject holds on the target run's project and
	// workspace ("viewer", "deployer", "approver", "admin"), as the
	// frontend's policy decided them for this request.
	Roles []string `json:"roles,omitempty"`
	// Verified is true when the kumo frontend stamped the subject; a Subject
	// built from a client-sent name has it false.
	Verified bool `json:"verified"`
}

// HasRole reports whether s holds role (admin holds every role).
func (s Subject) HasRole(role string) bool {
	for _, r := range s.Roles {
		if r == role || r == "admin" {
			return true
		}
	}
	return false
}

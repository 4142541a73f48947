package runspec

import "fmt"

// RoleAdmin is the role that may override protection (and holds every
// other role).
const RoleAdmin = "admin"

// ProtectedDeleteDeniedError refuses --allow-protected-delete to a subject
// that is not a verified admin: it names who, what and where.
type ProtectedDeleteDeniedError struct {
	Subject   string
	Project   string
	Workspace string
	Reason    string
}

func (e *ProtectedDeleteDeniedError) Error() string {
	return fmt.Sprintf("%s may not use --allow-protected-delete on %s/%s: %s", e.Subject, e.Project, e.Workspace, e.Reason)
}

// MayDeleteProtected decides whether who, the run's starter as the kumo
// frontend stamped them (SubjectHeader, with the roles the server's policy
// gives them on project/workspace), may let a run delete protected
// resources. Only a verified admin may: a name the client sent, or any other
// role, is refused. The decision uses only what the server stamped, so a
// client that sets the flag with a raw Temporal SDK is refused the same way.
func MayDeleteProtected(who Subject, project, workspace string) error {
	deny := func(reason string) error {
		return &ProtectedDeleteDeniedError{Subject: who.String(), Project: project, Workspace: workspace, Reason: reason}
	}
	switch {
	case !who.Verified:
		return deny("the admin role is required, and this run carries no subject stamped by the kumo server")
	case !who.HasRole(RoleAdmin):
		return deny(fmt.Sprintf("the admin role is required (the subject's roles here: %s)", listOrNone(who.Roles)))
	}
	return nil
}

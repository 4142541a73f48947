// Package authz decides who may do what to which project and workspace.
//
// It is kumo's one authorization decision, Temporal-free and pure: the
// frontend's interceptor (server/auth) maps each request to a Subject, an
// Action and a project/workspace and asks Decide; the UI, the codec endpoint
// and the CLI ask the same Policy. Roles (viewer, deployer, approver, admin,
// and the worker principal kind) are granted to subjects and groups on
// project/workspace patterns in a policy file the operator owns
// ($KUMO_HOME/policy.yaml by default, policy.go). The home's owner is
// implicitly admin and worker everywhere; nobody else holds anything that
// was not granted.
package authz

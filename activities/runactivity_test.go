package activities

import "go.temporal.io/sdk/testsuite"

// runActivity runs a's activity fn on in in Temporal's test environment, as a
// retried attempt when heartbeat is not nil (the details the attempt before
// heartbeated), and decodes its result into out (nil: not wanted).
func runActivity(a *Activities, fn, in, heartbeat, out any) error {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	if heartbeat != nil {
		env.SetHeartbeatDetails(heartbeat)
	}
	v, err := env.ExecuteActivity(fn, in)
	if err != nil || out == nil {
		return err
	}
	return v.Get(out)
}

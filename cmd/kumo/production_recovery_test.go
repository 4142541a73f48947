package main

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/api/workflowservice/v1"
)

// servingWithin bounds how long the fleet may take, once a trial's apply has
// ended, to serve kumo's namespace again: a frontend whose connection pool
// PostgreSQL's restart broke opens a new one on its next request that fails,
// at most once a second.
const servingWithin = 2 * time.Minute

// awaitServing waits until a new client's DescribeNamespace, what every kumo
// command does first, succeeds, and returns how long that took: a trial
// starts on a fleet that serves, and the previous fault's recovery is
// measured by itself instead of failing the next trial's first apply.
func (f *productionFleet) awaitServing() (time.Duration, error) {
	start := time.Now()
	var last error
	for time.Since(start) < servingWithin {
		if last = f.describeNamespace(); last == nil {
			return time.Since(start), nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return time.Since(start), fmt.Errorf("the namespace was not served within %s after the apply ended: %v", servingWithin, last)
}

func (f *productionFleet) describeNamespace() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tc, err := f.dial(ctx)
	if err != nil {
		return err
	}
	defer tc.Close()
	_, err = tc.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: productionNamespace})
	return err
}

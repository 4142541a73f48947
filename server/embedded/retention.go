package embedded

import (
	"context"
	"fmt"
	"time"

	namespacepb "go.temporal.io/api/namespace/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"
)

// minRetention is MinRetention; tests of the deletion itself lower it.
var minRetention = MinRetention

// updateRetention sets the namespace's retention of closed workflows to
// retention when it differs. Workflows closed before keep the deletion time
// they were given when they closed.
func updateRetention(ctx context.Context, c client.Client, namespace string, retention time.Duration) error {
	desc, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("read the retention of namespace %s: %w", namespace, err)
	}
	if desc.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration() == retention {
		return nil
	}
	_, err = c.WorkflowService().UpdateNamespace(ctx, &workflowservice.UpdateNamespaceRequest{
		Namespace: namespace,
		Config:    &namespacepb.NamespaceConfig{WorkflowExecutionRetentionTtl: durationpb.New(retention)},
	})
	if err != nil {
		return fmt.Errorf("set the retention of namespace %s to %s: %w", namespace, retention, err)
	}
	return nil
}

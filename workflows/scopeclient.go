package workflows

import (
	"context"
	"encoding/json"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"

	"github.com/kumoproj/kumo/runspec"
)

// ClientInterceptor is the client interceptor that sends the rollout scope
// a context carries (WithRolloutScope) in runspec.RolloutScopeHeader of the
// start or update made with that context, for kumo's frontend to decide on
// each workspace. Clients that start or control rollouts register it
// (client.Options.Interceptors).
var ClientInterceptor interceptor.ClientInterceptor = &scopeClient{}

type scopeKey struct{}

// WithRolloutScope is ctx carrying the workspaces a rollout request is for.
func WithRolloutScope(ctx context.Context, workspaces []string) context.Context {
	s := runspec.RolloutScope{Workspaces: map[string][]string{}}
	for _, w := range workspaces {
		s.Workspaces[w] = nil
	}
	return context.WithValue(ctx, scopeKey{}, s)
}

type scopeClient struct {
	interceptor.ClientInterceptorBase
}

func (*scopeClient) InterceptClient(next interceptor.ClientOutboundInterceptor) interceptor.ClientOutboundInterceptor {
	return &scopeOutbound{ClientOutboundInterceptorBase: interceptor.ClientOutboundInterceptorBase{Next: next}}
}

type scopeOutbound struct {
	interceptor.ClientOutboundInterceptorBase
}

func putScope(ctx context.Context) error {
	s, ok := ctx.Value(scopeKey{}).(runspec.RolloutScope)
	header := interceptor.Header(ctx)
	if !ok || header == nil {
		return nil
	}
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	header[runspec.RolloutScopeHeader] = &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: data}
	return nil
}

func (o *scopeOutbound) ExecuteWorkflow(ctx context.Context, in *interceptor.ClientExecuteWorkflowInput) (client.WorkflowRun, error) {
	if err := putScope(ctx); err != nil {
		return nil, err
	}
	return o.Next.ExecuteWorkflow(ctx, in)
}

func (o *scopeOutbound) UpdateWorkflow(ctx context.Context, in *interceptor.ClientUpdateWorkflowInput) (client.WorkflowUpdateHandle, error) {
	if err := putScope(ctx); err != nil {
		return nil, err
	}
	return o.Next.UpdateWorkflow(ctx, in)
}

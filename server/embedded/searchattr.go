package embedded

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/kumoproj/kumo/runspec"
)

// valueType is the server's type of a, whose name runspec spells as Temporal
// does.
func valueType(a runspec.SearchAttribute) (enumspb.IndexedValueType, error) {
	t, err := enumspb.IndexedValueTypeFromString(string(a.Type))
	if err != nil {
		return t, fmt.Errorf("search attribute %s: %w", a.Name, err)
	}
	return t, nil
}

// registerWait bounds how long RegisterSearchAttributes waits for newly added
// attributes to become visible when ctx has no earlier deadline.
const registerWait = 30 * time.Second

// RegisterSearchAttributes makes sure every attribute in
// runspec.SearchAttributes exists in namespace, through the operator
// service. It is idempotent: present attributes are left alone, and an
// attribute that exists with another type is an error. When it adds
// attributes it waits until the frontend lists them (servers pick namespace
// changes up after a short cache refresh).
func RegisterSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	ops := c.OperatorService()
	missing, err := missingSearchAttributes(ctx, ops, namespace)
	if err != nil {
		return err
	}
	if len(missing) == 0 {
		return nil
	}
	req := &operatorservice.AddSearchAttributesRequest{
		Namespace:        namespace,
		SearchAttributes: missing,
	}
	if _, err := ops.AddSearchAttributes(ctx, req); err != nil {
		var exists *serviceerror.AlreadyExists
		if !errors.As(err, &exists) {
			return fmt.Errorf("add search attributes to namespace %q: %w", namespace, err)
		}
	}

	ctx, cancel := context.WithTimeout(ctx, registerWait)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		missing, err = missingSearchAttributes(ctx, ops, namespace)
		if err == nil && len(missing) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("still missing %s", strings.Join(names(missing), ", "))
			}
			return fmt.Errorf("wait for search attributes in namespace %q: %w (%w)", namespace, err, ctx.Err())
		case <-tick.C:
		}
	}
}

// missingSearchAttributes lists kumo's attributes not yet in the namespace.
func missingSearchAttributes(ctx context.Context, ops operatorservice.OperatorServiceClient, namespace string) (map[string]enumspb.IndexedValueType, error) {
	resp, err := ops.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return nil, fmt.Errorf("list search attributes of namespace %q: %w", namespace, err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for _, sa := range runspec.SearchAttributes {
		want, err := valueType(sa)
		if err != nil {
			return nil, err
		}
		have, ok := resp.GetCustomAttributes()[sa.Name]
		if !ok {
			have, ok = resp.GetSystemAttributes()[sa.Name]
		}
		switch {
		case !ok:
			missing[sa.Name] = want
		case have != want:
			return nil, fmt.Errorf("search attribute %s exists in namespace %q with type %s, kumo needs %s",
				sa.Name, namespace, have, want)
		}
	}
	return missing, nil
}

func names(m map[string]enumspb.IndexedValueType) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	return out
}

// MissingSearchAttributes names kumo's search attributes that namespace lacks,
// sorted; an attribute with another type is an error.
func MissingSearchAttributes(ctx context.Context, c client.Client, namespace string) ([]string, error) {
	missing, err := missingSearchAttributes(ctx, c.OperatorService(), namespace)
	if err != nil {
		return nil, err
	}
	out := names(missing)
	slices.Sort(out)
	return out, nil
}

package secretstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/aws/smithy-go"

	"github.com/kumoproj/kumo/engine"
)

// awsSM reads AWS Secrets Manager with GetSecretValue.
type awsSM struct {
	client *secretsmanager.Client
}

// newAWS loads the SDK's default configuration (credentials and endpoint
// from the worker's environment and shared files, AWS_ENDPOINT_URL_SECRETS_MANAGER
// included) for the store's region and profile.
func newAWS(ctx context.Context, store engine.AWSStore) (*awsSM, error) {
	opts := []func(*config.LoadOptions) error{config.WithRegion(store.Region)}
	if store.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(store.Profile))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load the worker's AWS configuration: %w", err)
	}
	return &awsSM{client: secretsmanager.NewFromConfig(cfg)}, nil
}

// Read asks for version as Kusion does: "uuid/<id>" is a version ID, any
// other version a staging label, none AWSCURRENT.
func (a *awsSM) Read(ctx context.Context, name, version string) (Secret, error) {
	in := &secretsmanager.GetSecretValueInput{SecretId: aws.String(name)}
	switch {
	case strings.HasPrefix(version, "uuid/"):
		in.VersionId = aws.String(strings.TrimPrefix(version, "uuid/"))
	case version != "":
		in.VersionStage = aws.String(version)
	default:
		in.VersionStage = aws.String("AWSCURRENT")
	}
	out, err := a.client.GetSecretValue(ctx, in)
	var nf *types.ResourceNotFoundException
	if errors.As(err, &nf) {
		return Secret{}, fmt.Errorf("secret %q: %w", name, ErrNotFound)
	}
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorFault() == smithy.FaultClient {
		// Access denied, a bad version, a secret scheduled for deletion:
		// the same request fails the same way again.
		return Secret{}, refused(fmt.Errorf("secret %q: %w", name, err))
	}
	if err != nil {
		return Secret{}, fmt.Errorf("secret %q: %w", name, err)
	}
	var raw []byte
	switch {
	case out.SecretString != nil:
		raw = []byte(*out.SecretString)
	case out.SecretBinary != nil:
		raw = out.SecretBinary
	default:
		return Secret{}, refused(fmt.Errorf("secret %q holds neither a string nor binary", name))
	}
	if len(raw) > maxSecretBytes {
		return Secret{}, refused(fmt.Errorf("secret %q is larger than %d bytes", name, maxSecretBytes))
	}
	return Secret{Raw: raw, Fields: fieldsOf(raw)}, nil
}

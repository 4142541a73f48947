package client

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/backend/postgres"
	"github.com/kumoproj/kumo/backend/s3"
	"github.com/kumoproj/kumo/backend/tfhttp"
	"github.com/kumoproj/kumo/internal/keyring"
)

// S3Options configure an s3:// backend beyond the standard AWS configuration
// (credentials, region, AWS_ENDPOINT_URL_S3, ... from the environment and the
// shared config files).
type S3Options struct {
	// Endpoint of an S3-compatible server; buckets are then addressed by path.
	Endpoint string
	// Region overrides the AWS configuration's; with none at all, us-east-1.
	Region string
	// PathStyle addresses buckets by path even without an endpoint override.
	PathStyle bool
}

// OpenBackend returns the backend opts.Backend names: the local directory
// opts.Home when it is empty, file:///dir for another directory, or
// s3://bucket[/prefix], postgres://user@host[:port]/database (the password
// from PGPASSWORD or a password file), or https://host/path, a Terraform http
// backend state service (credentials from TF_HTTP_USERNAME/TF_HTTP_PASSWORD or
// KUMO_HTTP_TOKEN). An S3 bucket is checked (exists, credentials accepted)
// before it is returned, so a misconfiguration fails before any run starts.
//
// Sensitive values (Kubernetes Secret data, Terraform sensitive attributes) are
// kept encrypted with the keys CodecKeys returns for opts, if any.
func OpenBackend(ctx context.Context, opts Options) (backend.Backend, error) {
	keys, err := CodecKeys(opts)
	if err != nil {
		return nil, err
	}
	return openBackend(ctx, opts, keys)
}

func openBackend(ctx context.Context, opts Options, keys *keyring.Ring) (backend.Backend, error) {
	b, err := openDriverBackend(ctx, opts)
	if err != nil {
		return nil, err
	}
	sealWith(b, keys)
	return b, nil
}

func openDriverBackend(ctx context.Context, opts Options) (backend.Backend, error) {
	raw := opts.Backend
	switch {
	case raw == "":
		home := opts.Home
		if home == "" {
			home = DefaultHome()
		}
		return local.New(home)
	case strings.HasPrefix(raw, "s3://"):
		bucket, prefix, err := s3.ParseURL(raw)
		if err != nil {
			return nil, err
		}
		return s3.New(ctx, s3.Options{
			Bucket: bucket, Prefix: prefix,
			Endpoint: opts.S3.Endpoint, Region: opts.S3.Region, PathStyle: opts.S3.PathStyle,
		})
	case postgres.IsURL(raw):
		return postgres.New(ctx, raw)
	case tfhttp.IsURL(raw):
		return tfhttp.New(ctx, raw)
	case strings.HasPrefix(raw, "file://"):
		u, err := url.Parse(raw)
		if err != nil || u.Host != "" || u.Path == "" {
			return nil, fmt.Errorf("backend %q: want file:///absolute/dir", raw)
		}
		return local.New(u.Path)
	}
	return nil, fmt.Errorf("backend %q: want s3://bucket[/prefix], postgres://user@host/database, https://state-service/path or file:///dir (or nothing, for %s)", postgres.Redact(raw), "$KUMO_HOME")
}

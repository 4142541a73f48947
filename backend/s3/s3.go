package s3

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"

	"github.com/kumoproj/kumo/backend"
)

// Options say which bucket to use and how to reach it. Everything not set here
// comes from the standard AWS configuration chain: environment variables
// (AWS_ACCESS_KEY_ID, AWS_REGION, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, ...), the
// shared config and credentials files and AWS_PROFILE, web identity, and so on.
type Options struct {
	// Bucket must exist; New checks that it does and that it can be reached.
	Bucket string
	// Prefix is prepended to every key (without leading or trailing '/').
	Prefix string
	// Endpoint overrides the S3 endpoint (http://127.0.0.1:7070 for a local
	// versitygw or MinIO); it takes precedence over AWS_ENDPOINT_URL_S3 and
	// AWS_ENDPOINT_URL.
	Endpoint string
	// Region overrides the configured region; with none at all, us-east-1.
	Region string
	// PathStyle addresses buckets as <endpoint>/<bucket> instead of as a host
	// name. It is always on when an endpoint override is set (by Endpoint or the
	// environment): S3-compatible servers rarely serve virtual hosts.
	PathStyle bool
	// Credentials replace the standard chain for programs that hold their own
	// (tests); nil, as for the CLI, uses the chain.
	Credentials aws.CredentialsProvider
	// MaxAttempts bounds the attempts of one request (default 5); MaxBackoff the
	// wait between two (default 2s). Long outages are the caller's to retry:
	// kumo's activities are retried by Temporal.
	MaxAttempts int
	MaxBackoff  time.Duration
}

// Defaults of Options.MaxAttempts and Options.MaxBackoff: an activity's single
// request gives up after about 5 s of failures, inside the activity's 10 s.
const (
	DefaultMaxAttempts = 5
	DefaultMaxBackoff  = 2 * time.Second
)

// Backend stores kumo's records in an S3 bucket. It is safe for concurrent use by
// goroutines and by any number of processes and machines sharing the bucket.
type Backend struct {
	*backend.Store
	driver *Driver
}

var _ backend.Backend = (*Backend)(nil)

// Driver is the backend.Driver over an S3 bucket: one object per key, under the
// prefix.
type Driver struct {
	client   *s3.Client
	bucket   string
	prefix   string // "" or ending in "/"
	endpoint string // for messages
}

var _ backend.Driver = (*Driver)(nil)

// ParseURL splits a backend URL s3://bucket[/prefix] into bucket and prefix.
func ParseURL(raw string) (bucket, prefix string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("backend URL %q: %w", raw, err)
	}
	if u.Scheme != "s3" {
		return "", "", fmt.Errorf("backend URL %q: want s3://bucket[/prefix]", raw)
	}
	if u.Host == "" {
		return "", "", fmt.Errorf("backend URL %q names no bucket: want s3://bucket[/prefix]", raw)
	}
	if u.User != nil || u.Port() != "" || u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("backend URL %q: want s3://bucket[/prefix], without credentials, port, query or fragment", raw)
	}
	return u.Host, strings.Trim(u.Path, "/"), nil
}

// New connects to the bucket and checks that it exists and that the credentials
// are accepted, so that a misconfiguration is reported before any run starts.
func New(ctx context.Context, opts Options) (*Backend, error) {
	d, err := NewDriver(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &Backend{Store: backend.NewStore(d), driver: d}, nil
}

// NewDriver connects to the bucket as New does, and returns the driver alone.
func NewDriver(ctx context.Context, opts Options) (*Driver, error) {
	if opts.Bucket == "" {
		return nil, errors.New("s3 backend: no bucket given")
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = DefaultMaxBackoff
	}
	load := []func(*config.LoadOptions) error{
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = opts.MaxAttempts
				o.MaxBackoff = opts.MaxBackoff
				// The standard retryer stops retrying once a shared token bucket
				// runs dry, which a few seconds of outage under parallel applies
				// does; every request keeps its own attempts instead.
				o.RateLimiter = ratelimit.None
			})
		}),
		// More idle connections than the default 10 per host: an apply writes
		// from up to its parallelism, and listings fetch objects in parallel.
		config.WithHTTPClient(awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
			t.MaxIdleConnsPerHost = 64
		})),
		// The SDK's own warnings (falling back to IMDSv1, ...) would interleave
		// with the CLI's output; what matters comes back as errors.
		config.WithLogger(logging.Nop{}),
	}
	if opts.Region != "" {
		load = append(load, config.WithRegion(opts.Region))
	}
	if opts.Credentials != nil {
		load = append(load, config.WithCredentialsProvider(opts.Credentials))
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, fmt.Errorf("s3 backend: load AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	b := &Driver{bucket: opts.Bucket}
	if p := strings.Trim(opts.Prefix, "/"); p != "" {
		b.prefix = p + "/"
	}
	b.client = s3.NewFromConfig(cfg, func(o *s3.Options) {
		if opts.Endpoint != "" {
			o.BaseEndpoint = aws.String(opts.Endpoint)
		}
		if o.BaseEndpoint != nil || opts.PathStyle {
			o.UsePathStyle = true
		}
		if o.BaseEndpoint != nil {
			b.endpoint = *o.BaseEndpoint
		} else {
			b.endpoint = "AWS S3 in " + o.Region
		}
		// Checksums only where the API requires them: S3-compatible servers
		// differ in which of the newer checksum headers they accept.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	if cfg.Credentials != nil {
		// Resolved here, before the first request, so that a missing identity is
		// reported as such rather than as a failed request.
		if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("s3 backend: bucket %q at %s: no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (%w)", b.bucket, b.endpoint, err)
		}
	}
	if err := b.checkBucket(ctx); err != nil {
		return nil, err
	}
	return b, nil
}

// checkBucket explains the usual ways a bucket cannot be used.
func (b *Driver) checkBucket(ctx context.Context) error {
	_, err := b.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(b.bucket)})
	if err == nil {
		return nil
	}
	where := fmt.Sprintf("s3 backend: bucket %q at %s", b.bucket, b.endpoint)
	switch status := statusOf(err); {
	case ctx.Err() != nil:
		return ctx.Err()
	case status == http.StatusNotFound:
		return fmt.Errorf("%s does not exist: create it first (kumo does not create buckets)", where)
	case status == http.StatusForbidden || status == http.StatusUnauthorized:
		return fmt.Errorf("%s: access denied: check the AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE) and that they may use this bucket", where)
	case status == http.StatusMovedPermanently:
		return fmt.Errorf("%s is in another region: set --s3-region or AWS_REGION to the bucket's region", where)
	}
	return fmt.Errorf("%s: %w", where, err)
}

// Bucket and Prefix say where the backend stores its objects.
func (b *Backend) Bucket() string { return b.driver.bucket }

// Prefix is "" or ends in "/".
func (b *Backend) Prefix() string { return b.driver.prefix }

// String names the backend as a URL, for messages.
func (b *Backend) String() string {
	return "s3://" + b.driver.bucket + "/" + b.driver.prefix
}

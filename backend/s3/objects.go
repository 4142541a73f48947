package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/kumoproj/kumo/backend"
)

// preconditionError is a conditional write the store refused: the object exists
// (If-None-Match: *) or is another version (If-Match), or is gone (If-Match).
type preconditionError struct {
	key    string
	exists bool
	etag   string // of the stored object, when it exists
}

func (e *preconditionError) Error() string {
	if !e.exists {
		return fmt.Sprintf("conditional write of %s refused: the object does not exist", e.key)
	}
	return fmt.Sprintf("conditional write of %s refused: the stored object is version %s", e.key, e.etag)
}

// condition is the precondition of a put.
type condition struct {
	ifNoneMatch bool   // create only: If-None-Match: *
	ifMatch     string // replace only this version: If-Match
}

// statusOf is the HTTP status of a failed request, or 0.
func statusOf(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func isNotFound(err error) bool {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	return errors.As(err, &nsk) || errors.As(err, &nf) || statusOf(err) == http.StatusNotFound
}

func isPreconditionFailed(err error) bool {
	return statusOf(err) == http.StatusPreconditionFailed || errorCode(err) == "PreconditionFailed"
}

// isConditionalConflict: AWS answers 409 when another conditional write of the
// same key is in flight; the request is to be tried again.
func isConditionalConflict(err error) bool {
	return errorCode(err) == "ConditionalRequestConflict" || statusOf(err) == http.StatusConflict
}

// where names an object in messages.
func (b *Driver) where(key string) string {
	return "s3://" + b.bucket + "/" + key
}

// get returns an object's bytes and ETag; a missing key gives an error wrapping
// backend.ErrNotFound. The body is read into one buffer of its announced length.
func (b *Driver) get(ctx context.Context, key string) ([]byte, string, error) {
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.bucket, Key: &key})
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		if isNotFound(err) {
			return nil, "", fmt.Errorf("%s: %w", b.where(key), backend.ErrNotFound)
		}
		return nil, "", fmt.Errorf("get %s: %w", b.where(key), err)
	}
	defer out.Body.Close()
	var buf bytes.Buffer
	if n := aws.ToInt64(out.ContentLength); n > 0 {
		buf.Grow(int(n))
	}
	if _, err := buf.ReadFrom(out.Body); err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		return nil, "", fmt.Errorf("get %s: read body: %w", b.where(key), err)
	}
	return buf.Bytes(), aws.ToString(out.ETag), nil
}

// head returns an object's ETag and whether it exists.
func (b *Driver) head(ctx context.Context, key string) (string, bool, error) {
	out, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &b.bucket, Key: &key})
	if err != nil {
		if ctx.Err() != nil {
			return "", false, ctx.Err()
		}
		if isNotFound(err) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("head %s: %w", b.where(key), err)
	}
	return aws.ToString(out.ETag), true, nil
}

// writeIDKey is the user metadata (x-amz-meta-kumo-write) that marks each
// conditional put with a random ID, so that a refused retry can tell its own
// earlier attempt from another writer's object.
const writeIDKey = "kumo-write"

// put uploads data to key under cond and returns the new ETag. A refused
// precondition gives a *preconditionError, unless the stored object carries this
// call's write ID: then an earlier attempt of this same put succeeded and only
// its response was lost (the SDK retried it), and put reports success.
func (b *Driver) put(ctx context.Context, key string, data []byte, cond condition) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	conditional := cond.ifNoneMatch || cond.ifMatch != ""
	in := &s3.PutObjectInput{
		Bucket:        &b.bucket,
		Key:           &key,
		ContentLength: aws.Int64(int64(len(data))),
		ContentType:   aws.String(contentType(key)),
	}
	var writeID string
	if conditional {
		writeID = rand.Text()
		in.Metadata = map[string]string{writeIDKey: writeID}
	}
	if cond.ifNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	if cond.ifMatch != "" {
		in.IfMatch = aws.String(cond.ifMatch)
	}
	for attempt := 0; ; attempt++ {
		// A bytes.Reader is seekable: the SDK signs the payload and rewinds it for
		// a retry without copying it.
		in.Body = bytes.NewReader(data)
		out, err := b.client.PutObject(ctx, in)
		switch {
		case err == nil:
			return aws.ToString(out.ETag), nil
		case ctx.Err() != nil:
			return "", ctx.Err()
		case conditional && (isPreconditionFailed(err) || cond.ifMatch != "" && isNotFound(err)):
			return b.resolveRefused(ctx, key, writeID)
		case conditional && isConditionalConflict(err) && attempt < 8:
			if err := sleep(ctx, time.Duration(25<<attempt)*time.Millisecond); err != nil {
				return "", err
			}
		default:
			return "", fmt.Errorf("put %s: %w", b.where(key), err)
		}
	}
}

// resolveRefused looks at the object a conditional put was refused for.
func (b *Driver) resolveRefused(ctx context.Context, key, writeID string) (string, error) {
	out, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &b.bucket, Key: &key})
	switch {
	case err != nil && ctx.Err() != nil:
		return "", ctx.Err()
	case err != nil && isNotFound(err):
		return "", &preconditionError{key: key}
	case err != nil:
		return "", fmt.Errorf("head %s: %w", b.where(key), err)
	}
	for k, v := range out.Metadata {
		if strings.EqualFold(k, writeIDKey) && v == writeID {
			return aws.ToString(out.ETag), nil
		}
	}
	return "", &preconditionError{key: key, exists: true, etag: aws.ToString(out.ETag)}
}

func contentType(key string) string {
	switch {
	case strings.HasSuffix(key, ".yaml"):
		return "application/yaml"
	case strings.HasSuffix(key, ".json"):
		return "application/json"
	}
	return "text/plain; charset=utf-8"
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// list calls fn with every key under prefix (and, with a delimiter, every common
// prefix, as dirs), page by page, in the store's (lexicographic) order.
func (b *Driver) list(ctx context.Context, prefix, delimiter string, fn func(key string, dir bool) error) error {
	in := &s3.ListObjectsV2Input{Bucket: &b.bucket, Prefix: &prefix}
	if delimiter != "" {
		in.Delimiter = &delimiter
	}
	pages := s3.NewListObjectsV2Paginator(b.client, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("list %s: %w", b.where(prefix), err)
		}
		for _, p := range page.CommonPrefixes {
			if err := fn(aws.ToString(p.Prefix), true); err != nil {
				return err
			}
		}
		for _, o := range page.Contents {
			if err := fn(aws.ToString(o.Key), false); err != nil {
				return err
			}
		}
	}
	return nil
}

// deleteKeys removes keys, a thousand per request (the API's limit).
func (b *Driver) deleteKeys(ctx context.Context, keys []string) error {
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		ids := make([]types.ObjectIdentifier, n)
		for i, k := range keys[:n] {
			ids[i] = types.ObjectIdentifier{Key: aws.String(k)}
		}
		out, err := b.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: &b.bucket,
			Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("delete %d objects under %s: %w", n, b.where(b.prefix), err)
		}
		for _, e := range out.Errors {
			if e.Code != nil && *e.Code == "NoSuchKey" {
				continue
			}
			return fmt.Errorf("delete %s: %s: %s", b.where(aws.ToString(e.Key)), aws.ToString(e.Code), aws.ToString(e.Message))
		}
		keys = keys[n:]
	}
	return nil
}

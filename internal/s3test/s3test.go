// Package s3test runs a real S3-compatible server for tests: versitygw (Apache-2.0)
// on 127.0.0.1, with its posix backend in a temporary directory (one directory per
// bucket, one file per object). The binary is built by hack/build-tools.sh on first
// use and cached by version with the other tools. Tests using it are skipped with
// -short.
//
//	srv := s3test.Start(t)
//	b, err := s3.New(ctx, srv.Options(srv.Bucket(t), "kumo"))
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	s3sdk "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kumoproj/kumo/backend/s3"
	"github.com/kumoproj/kumo/internal/localcluster"
	"github.com/kumoproj/kumo/internal/quietport"
)

// VersitygwVersion is the version hack/build-tools.sh builds (a test keeps them
// in sync).
const VersitygwVersion = "v1.8.0"

// The root user's credentials and the region the server answers for.
const (
	AccessKey = "kumo-test-access"
	SecretKey = "kumo-test-secret"
	Region    = "us-east-1"
)

// Binary returns the path of the versitygw binary, building it if it is missing.
func Binary() (string, error) {
	dir := localcluster.DefaultBinDir()
	path := filepath.Join(dir, "versitygw-"+VersitygwVersion)
	return path, localcluster.EnsureTools(dir, map[string]string{"versitygw": path})
}

// Server is a running versitygw.
type Server struct {
	// Endpoint is http://127.0.0.1:<port>.
	Endpoint string
	// Dir is the posix root: Dir/<bucket>/<key> holds each object.
	Dir string

	t    testing.TB
	bin  string
	addr string
	log  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Start starts a server for the test and stops it when the test ends. It skips
// the test with -short.
func Start(t testing.TB) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the versitygw S3 server; skipped with -short")
	}
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	ports, err := quietport.Pick("127.0.0.1", 1)
	if err != nil {
		t.Fatal(err)
	}
	port := ports[0]
	dir := t.TempDir()
	s := &Server{
		Endpoint: "http://127.0.0.1:" + strconv.Itoa(port),
		Dir:      filepath.Join(dir, "data"),
		t:        t, bin: bin, addr: "127.0.0.1:" + strconv.Itoa(port),
		log: filepath.Join(dir, "versitygw.log"),
	}
	if err := os.Mkdir(s.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// Restart starts the server again after Stop, on the same port and data.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("s3test: server is already running")
	}
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(s.bin, "--port", s.addr, "--access", AccessKey, "--secret", SecretKey,
		"--region", Region, "--keep-alive", "--quiet", "posix", s.Dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("s3test: start %s: %w", s.bin, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	s.cmd, s.done = cmd, done
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-done:
			s.cmd = nil
			return fmt.Errorf("s3test: versitygw exited at start:\n%s", s.logTail())
		default:
		}
		// Any HTTP answer (403 for an anonymous request) means it serves.
		if resp, err := http.Get(s.Endpoint); err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("s3test: versitygw not serving %s after 30s:\n%s", s.Endpoint, s.logTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the server, as a crash or a lost machine would; Restart brings it
// back on the same data.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		return fmt.Errorf("s3test: versitygw (pid %d) did not exit after SIGKILL", s.cmd.Process.Pid)
	}
	s.cmd = nil
	return nil
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.log)
	if len(b) > 4096 {
		b = b[len(b)-4096:]
	}
	return string(b)
}

// Credentials are the root user's.
func (s *Server) Credentials() aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, "")
}

// Env is the standard AWS environment that points a kumo process at the server.
func (s *Server) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + AccessKey, "AWS_SECRET_ACCESS_KEY=" + SecretKey,
		"AWS_REGION=" + Region, "AWS_ENDPOINT_URL_S3=" + s.Endpoint,
		// No shared config of the machine's user may change what the test sees.
		"AWS_CONFIG_FILE=" + os.DevNull, "AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull,
		"AWS_PROFILE=", "AWS_SESSION_TOKEN=", "AWS_ENDPOINT_URL=",
	}
}

// Options are backend options for bucket and prefix on this server.
func (s *Server) Options(bucket, prefix string) s3.Options {
	return s3.Options{
		Bucket: bucket, Prefix: prefix, Endpoint: s.Endpoint, Region: Region,
		Credentials: s.Credentials(),
	}
}

// Bucket creates a bucket with a fresh name and returns the name.
func (s *Server) Bucket(t testing.TB) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "kumo-" + hex.EncodeToString(b)
	if err := CreateBucket(context.Background(), s.Endpoint, s.Credentials(), name); err != nil {
		t.Fatal(err)
	}
	return name
}

// CreateBucket creates a bucket on an S3-compatible server at endpoint.
func CreateBucket(ctx context.Context, endpoint string, creds aws.CredentialsProvider, name string) error {
	client := s3sdk.New(s3sdk.Options{
		Region: Region, Credentials: creds, BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
	})
	if _, err := client.CreateBucket(ctx, &s3sdk.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		return fmt.Errorf("create bucket %s at %s: %w", name, endpoint, err)
	}
	return nil
}

// ObjectPath is where the posix backend keeps an object's bytes.
func (s *Server) ObjectPath(bucket, key string) string {
	return filepath.Join(s.Dir, bucket, filepath.FromSlash(strings.TrimPrefix(key, "/")))
}

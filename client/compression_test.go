package client

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	namespacepb "go.temporal.io/api/namespace/v1"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
)

// TestCompressionForLoopbackOnly: no gRPC compression for a server on this
// machine, the SDK's default for any other.
func TestCompressionForLoopbackOnly(t *testing.T) {
	for address, none := range map[string]bool{
		"127.0.0.1:7233":            true,
		"127.0.0.53:7233":           true,
		"[::1]:7233":                true,
		"localhost:7233":            true,
		"10.0.0.5:7233":             false,
		"[2001:db8::1]:7233":        false,
		"temporal.example.com:7233": false,
		"localhost.example.com:443": false,
		"127.0.0.1":                 false, // no port: not an address the SDK dials
	} {
		_, isNone := compressionFor(address).(*sdkclient.GrpcCompressionNone)
		if isNone != none {
			t.Errorf("compressionFor(%q): none %v, want %v", address, isNone, none)
		}
	}
}

// TestDialToThisMachineDoesNotCompress: Dial to a Temporal frontend on a
// loopback address sends its calls uncompressed, where the SDK's own dial
// sends them gzipped (which shows the server below would see it).
func TestDialToThisMachineDoesNotCompress(t *testing.T) {
	fe := startCompressionRecorder(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	tc, err := sdkclient.DialContext(ctx, sdkclient.Options{HostPort: fe.address, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tc.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: "default"}); err != nil {
		t.Fatal(err)
	}
	tc.Close()
	if got := fe.last(); got != "gzip" {
		t.Fatalf("the SDK's default dial sent DescribeNamespace with compression %q, want gzip", got)
	}

	tc, err = Dial(ctx, envconfig.ClientConfigProfile{Address: fe.address, Namespace: "default"}, sdkclient.Options{}, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	if got := fe.last(); got != "" {
		t.Errorf("Dial to %s sent DescribeNamespace with compression %q, want none", fe.address, got)
	}
}

// compressionRecorder is a frontend that answers DescribeNamespace and
// records the compression of the last call to it.
type compressionRecorder struct {
	workflowservice.UnimplementedWorkflowServiceServer
	address string
	mu      sync.Mutex
	seen    string
}

func startCompressionRecorder(t *testing.T) *compressionRecorder {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fe := &compressionRecorder{address: lis.Addr().String()}
	srv := grpc.NewServer(grpc.StatsHandler(fe))
	workflowservice.RegisterWorkflowServiceServer(srv, fe)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return fe
}

func (fe *compressionRecorder) DescribeNamespace(context.Context, *workflowservice.DescribeNamespaceRequest) (*workflowservice.DescribeNamespaceResponse, error) {
	return &workflowservice.DescribeNamespaceResponse{NamespaceInfo: &namespacepb.NamespaceInfo{Name: "default"}}, nil
}

func (fe *compressionRecorder) last() string {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	return fe.seen
}

func (fe *compressionRecorder) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	return ctx
}
func (fe *compressionRecorder) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (fe *compressionRecorder) HandleConn(context.Context, stats.ConnStats) {}

func (fe *compressionRecorder) HandleRPC(_ context.Context, s stats.RPCStats) {
	if h, ok := s.(*stats.InHeader); ok && h.FullMethod == workflowservice.WorkflowService_DescribeNamespace_FullMethodName {
		fe.mu.Lock()
		fe.seen = h.Compression
		fe.mu.Unlock()
	}
}

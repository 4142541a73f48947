// Command stranger is what another local account can do to a kumo server:
// built by cmd/kumo's tests and run under another uid (setpriv), it tries
// every way in it knows and prints one JSON line per attempt. With -cert,
// -key and -ca it presents a client certificate, so the same program run by
// the home's owner shows the attempts can succeed.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health/grpc_health_v1"
)

type attempt struct {
	Via     string `json:"via"`
	Address string `json:"address"`
	Op      string `json:"op"`
	OK      bool   `json:"ok"`
	Err     string `json:"err,omitempty"`
}

func main() {
	frontend := flag.String("frontend", "", "ports to try Temporal's API on, comma-separated host:port")
	noStart := flag.Bool("no-start", false, "do not try to start a run (the owner's control: it would start one)")
	internal := flag.String("internal", "", "other ports of the server, comma-separated host:port")
	cert := flag.String("cert", "", "client certificate (the owner's, as a control)")
	key := flag.String("key", "", "its key")
	ca := flag.String("ca", "", "CA of the server's certificate")
	serverName := flag.String("server-name", "", "name to verify the server's certificate against (default: the host dialled)")
	files := flag.String("read", "", "files to try to read, comma-separated")
	flag.Parse()
	enc := json.NewEncoder(os.Stdout)
	for _, f := range split(*files) {
		_, err := os.ReadFile(f)
		enc.Encode(attempt{Via: "file", Address: f, Op: "read", OK: err == nil, Err: errString(err)})
	}
	creds := map[string]credentials.TransportCredentials{
		"plaintext":          insecure.NewCredentials(),
		"tls-no-certificate": credentials.NewTLS(&tls.Config{InsecureSkipVerify: true}),
	}
	if *cert != "" {
		pair, err := tls.LoadX509KeyPair(*cert, *key)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		pem, err := os.ReadFile(*ca)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		creds = map[string]credentials.TransportCredentials{"certificate": credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool, ServerName: *serverName})}
	}
	for via, c := range creds {
		for _, addr := range split(*frontend) {
			for _, a := range frontendAttempts(addr, c, *noStart) {
				a.Via = via
				enc.Encode(a)
			}
		}
		for _, addr := range split(*internal) {
			a := health(addr, c)
			a.Via = via
			enc.Encode(a)
		}
	}
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func dial(addr string, c credentials.TransportCredentials) *grpc.ClientConn {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(c))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	return conn
}

func ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 5*time.Second)
}

// health calls the health service: it answers (even with an error status
// other than a transport failure) only to a client the port let in.
func health(addr string, c credentials.TransportCredentials) attempt {
	conn := dial(addr, c)
	defer conn.Close()
	cx, cancel := ctx()
	defer cancel()
	_, err := grpc_health_v1.NewHealthClient(conn).Check(cx, &grpc_health_v1.HealthCheckRequest{})
	return attempt{Address: addr, Op: "health", OK: err == nil, Err: errString(err)}
}

// frontendAttempts are the requests of the attack: list, start an apply
// with autoApprove, signal, update (approve), terminate, poll kumo's queue.
func frontendAttempts(addr string, c credentials.TransportCredentials, noStart bool) []attempt {
	conn := dial(addr, c)
	defer conn.Close()
	ws := workflowservice.NewWorkflowServiceClient(conn)
	exec := &commonpb.WorkflowExecution{WorkflowId: "kumo/shop/dev"}
	ops := []struct {
		op string
		do func(context.Context) error
	}{
		{"list", func(cx context.Context) error {
			_, err := ws.ListWorkflowExecutions(cx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default"})
			return err
		}},
		{"start", func(cx context.Context) error {
			_, err := ws.StartWorkflowExecution(cx, &workflowservice.StartWorkflowExecutionRequest{
				Namespace: "default", WorkflowId: "kumo/stranger/dev", WorkflowType: &commonpb.WorkflowType{Name: "Apply"},
				TaskQueue: &taskqueuepb.TaskQueue{Name: "kumo"}, RequestId: fmt.Sprint(time.Now().UnixNano()),
			})
			return err
		}},
		{"signal", func(cx context.Context) error {
			_, err := ws.SignalWorkflowExecution(cx, &workflowservice.SignalWorkflowExecutionRequest{Namespace: "default", WorkflowExecution: exec, SignalName: "approval"})
			return err
		}},
		{"update", func(cx context.Context) error {
			_, err := ws.UpdateWorkflowExecution(cx, &workflowservice.UpdateWorkflowExecutionRequest{Namespace: "default", WorkflowExecution: exec,
				Request: &updatepb.Request{Meta: &updatepb.Meta{UpdateId: "stranger"}, Input: &updatepb.Input{Name: "approve"}}})
			return err
		}},
		{"terminate", func(cx context.Context) error {
			_, err := ws.TerminateWorkflowExecution(cx, &workflowservice.TerminateWorkflowExecutionRequest{Namespace: "default", WorkflowExecution: exec})
			return err
		}},
		{"poll", func(cx context.Context) error {
			_, err := ws.DescribeTaskQueue(cx, &workflowservice.DescribeTaskQueueRequest{Namespace: "default", TaskQueue: &taskqueuepb.TaskQueue{Name: "kumo"}})
			if err != nil {
				return err
			}
			pcx, cancel := context.WithTimeout(cx, 3*time.Second)
			defer cancel()
			_, err = ws.PollActivityTaskQueue(pcx, &workflowservice.PollActivityTaskQueueRequest{Namespace: "default", TaskQueue: &taskqueuepb.TaskQueue{Name: "kumo"}})
			if pcx.Err() != nil {
				return nil // long poll held open: the poll was accepted
			}
			return err
		}},
		{"system-info", func(cx context.Context) error {
			_, err := ws.GetSystemInfo(cx, &workflowservice.GetSystemInfoRequest{})
			return err
		}},
	}
	var out []attempt
	for _, o := range ops {
		if noStart && o.op == "start" {
			continue
		}
		cx, cancel := ctx()
		err := o.do(cx)
		cancel()
		out = append(out, attempt{Address: addr, Op: o.op, OK: err == nil, Err: errString(err)})
	}
	return out
}

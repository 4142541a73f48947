package auth

import (
	"encoding/json"
	"sync"

	commonpb "go.temporal.io/api/common/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/runspec"
)

// identityFields caches, per request message type, its top-level string
// field "identity" (nil: none).
var identityFields sync.Map // protoreflect.FullName -> protoreflect.FieldDescriptor

// setIdentity overwrites the request's Identity with the subject's name:
// what Temporal records as who started, signalled, cancelled or polled is
// the authenticated subject, not what the client said. A worker's calls
// (polls, task completions) keep the worker's own description after it,
// "local:alice (worker-3@host)", so that the history still tells which of a
// subject's workers did a task; the subject comes first and is the
// frontend's.
func setIdentity(req any, name string, worker bool) {
	m, ok := req.(proto.Message)
	if !ok || m == nil {
		return
	}
	r := m.ProtoReflect()
	d := r.Descriptor()
	f, ok := identityFields.Load(d.FullName())
	if !ok {
		fd := d.Fields().ByName("identity")
		if fd != nil && (fd.Kind() != protoreflect.StringKind || fd.Cardinality() == protoreflect.Repeated) {
			fd = nil
		}
		identityFields.Store(d.FullName(), fd)
		f = fd
	}
	if fd, _ := f.(protoreflect.FieldDescriptor); fd != nil {
		if own := r.Get(fd).String(); worker && own != "" {
			name += " (" + own + ")"
		}
		r.Set(fd, protoreflect.ValueOfString(name))
	}
}

// subjectPayload is runspec.SubjectHeader's value for s with roles.
func subjectPayload(s authz.Subject, roles []string) *commonpb.Payload {
	data, err := json.Marshal(runspec.Subject{Name: s.Name, Groups: s.Groups, Roles: roles, Verified: true})
	if err != nil {
		panic(err) // strings and slices of strings always marshal
	}
	return &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: data}
}

// stampHeader puts the subject into *h, replacing any value the client sent.
func stampHeader(h **commonpb.Header, p *commonpb.Payload) {
	if *h == nil {
		*h = &commonpb.Header{}
	}
	if (*h).Fields == nil {
		(*h).Fields = map[string]*commonpb.Payload{}
	}
	(*h).Fields[runspec.SubjectHeader] = p
}

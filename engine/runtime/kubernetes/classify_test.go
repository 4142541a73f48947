package kubernetes

import (
	"errors"
	"net"
	"net/url"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kumoproj/kumo/engine/runtime"
)

// TestClassify: failures retrying can fix stay retryable, the object's own
// faults are permanent. (The conformance suite checks a 503 and invalid objects
// against the real apiserver; this covers the other answers.)
func TestClassify(t *testing.T) {
	cm := schema.GroupResource{Resource: "configmaps"}
	refused := &url.Error{Op: "Patch", URL: "https://127.0.0.1:1", Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}
	for _, c := range []struct {
		name      string
		err       error
		permanent bool
	}{
		{"503", apierrors.NewServiceUnavailable("restarting"), false},
		{"429", apierrors.NewTooManyRequests("slow down", 0), false},
		{"504 timeout", apierrors.NewTimeoutError("took too long", 0), false},
		{"500", apierrors.NewInternalError(errors.New("etcd leader changed")), false},
		{"conflict", apierrors.NewConflict(cm, "x", errors.New("modified")), false},
		{"connection refused", refused, false},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "x", nil), true},
		{"bad request", apierrors.NewBadRequest("no"), true},
		{"forbidden", apierrors.NewForbidden(cm, "x", errors.New("no")), true},
		// As client-go decodes the apiserver's answer: the Status it sent.
		{"SSA schema rejection (500)", &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 500,
			Message: "failed to create typed patch object (ns/x; /v1, Kind=ConfigMap): .data: expected map, got &{not a map}"}}, true},
	} {
		err := classify("apply", "v1:ConfigMap:ns:x", c.err)
		if runtime.IsPermanent(err) != c.permanent {
			t.Errorf("%s: permanent = %v, want %v (%v)", c.name, runtime.IsPermanent(err), c.permanent, err)
		}
	}
}

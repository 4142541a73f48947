package engine

import (
	"errors"
	"strings"
	"testing"
)

func k8s(annotations map[string]any) *Resource {
	return &Resource{ID: "v1:PersistentVolumeClaim:demo:data", Type: Kubernetes, Attributes: map[string]any{
		"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{"name": "data", "annotations": annotations},
	}}
}

func TestDeletePolicyOf(t *testing.T) {
	for _, tc := range []struct {
		annotations map[string]any
		want        DeletePolicy
	}{
		{nil, DeleteAllowed},
		{map[string]any{DeletePolicyAnnotation: "retain"}, DeleteRetain},
		{map[string]any{DeletePolicyAnnotation: "protect"}, DeleteProtect},
		{map[string]any{DeletePolicyAnnotation: "delete"}, DeleteAllowed},
		{map[string]any{ArgoSyncOptions: "ServerSideApply=true, Prune=false"}, DeleteRetain},
		{map[string]any{ArgoSyncOptions: "Delete=false"}, DeleteRetain},
		{map[string]any{ArgoSyncOptions: "Prune=true"}, DeleteAllowed},
		{map[string]any{HelmResourcePolicy: "keep"}, DeleteRetain},
		{map[string]any{HelmResourcePolicy: "keep", DeletePolicyAnnotation: "protect"}, DeleteProtect},
	} {
		got, err := DeletePolicyOf(k8s(tc.annotations))
		if err != nil || got != tc.want {
			t.Errorf("%v: got %q, %v; want %q", tc.annotations, got, err, tc.want)
		}
	}
	tf := &Resource{ID: "hashicorp:random:random_password:db", Type: Terraform, Extensions: map[string]any{DeletePolicyAnnotation: "protect"}}
	if got, _ := DeletePolicyOf(tf); got != DeleteProtect {
		t.Errorf("terraform extension: got %q", got)
	}
}

func TestDeletePolicyRefusesUnknownValue(t *testing.T) {
	_, err := DeletePolicyOf(k8s(map[string]any{DeletePolicyAnnotation: "protected"}))
	if err == nil || !strings.Contains(err.Error(), "v1:PersistentVolumeClaim:demo:data") || !strings.Contains(err.Error(), "protected") {
		t.Fatalf("got %v, want an error naming the resource and the value", err)
	}
}

func TestDeletePolicyOfAllTakesTheStrongest(t *testing.T) {
	recorded := k8s(map[string]any{DeletePolicyAnnotation: "protect"})
	spec := k8s(nil)
	if got, _ := DeletePolicyOfAll(spec, recorded, nil); got != DeleteProtect {
		t.Fatalf("got %q, want protect from the recorded view", got)
	}
	var pe *ProtectedError
	err := error(&ProtectedError{What: "destroy", IDs: []string{"a", "b"}})
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "a, b") || !strings.Contains(err.Error(), "--allow-protected-delete") {
		t.Fatalf("message: %v", err)
	}
}

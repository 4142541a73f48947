package generate

import (
	"maps"

	"github.com/kumoproj/kumo/engine"
)

// Labels kumo puts on every object it generates.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelPartOf    = "app.kubernetes.io/part-of"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelStack     = "kumo.io/stack"
	LabelWorkspace = "kumo.io/workspace"
)

// appContext is what the generators of one app share: names, namespace, labels.
type appContext struct {
	project, stack, workspace, app string
	// name is the workload's (and its Service's) name: <project>-<stack>-<app>, as
	// Kusion names them, so that stacks of one project never collide.
	name        string
	namespace   string
	namespaceID string
	// labels go on every generated object; selector is the immutable subset that
	// selects the workload's pods.
	labels   map[string]string
	selector map[string]string
}

func newAppContext(project, stack, workspace, app, namespace string) *appContext {
	selector := map[string]string{LabelName: app, LabelPartOf: project, LabelStack: stack}
	labels := maps.Clone(selector)
	labels[LabelManagedBy] = "kumo"
	labels[LabelWorkspace] = workspace
	return &appContext{
		project: project, stack: stack, workspace: workspace, app: app,
		name:        project + "-" + stack + "-" + app,
		namespace:   namespace,
		namespaceID: engine.KubernetesID("v1", "Namespace", "", namespace),
		labels:      labels,
		selector:    selector,
	}
}

// labelsWith returns the user's labels plus kumo's; kumo's win, since the selector
// depends on them.
func (a *appContext) labelsWith(user map[string]string) map[string]string {
	out := maps.Clone(user)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, a.labels)
	return out
}

// namespaceResource is the Namespace every app of a project is generated into.
func namespaceResource(project, namespace string) engine.Resource {
	obj := object("v1", "Namespace", namespace, "", map[string]string{LabelPartOf: project, LabelManagedBy: "kumo"}, nil)
	return engine.Resource{ID: engine.KubernetesID("v1", "Namespace", "", namespace), Type: engine.Kubernetes, Attributes: obj}
}

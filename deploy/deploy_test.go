// Package deploy_test checks the Kubernetes manifests under deploy/kubernetes
// against a real apiserver: every overlay builds and is accepted by a
// server-side dry-run, and the ClusterRole is what kumo's Kubernetes runtime
// needs, found by running it under a token bound to that role.
package deploy_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/engine/runtime/kubernetes"
	"github.com/kumoproj/kumo/internal/localcluster"
	"github.com/kumoproj/kumo/internal/localcluster/localclustertest"
)

var overlays = []string{"overlays/external-temporal", "overlays/single-node", "namespaced", "secrets-access"}

// TestOverlaysDryRun: each overlay builds with kustomize and the apiserver
// accepts every object in a server-side dry-run.
func TestOverlaysDryRun(t *testing.T) {
	c := startCluster(t)
	kube := adminClient(t, c)
	for _, ns := range []string{"kumo", "apps"} {
		createNamespace(t, kube, ns)
	}
	admin := adminRuntime(t, c)
	for _, o := range overlays {
		ids, err := apply(admin, build(t, o), true)
		if err != nil {
			t.Errorf("%s: server-side dry-run: %v", o, err)
			continue
		}
		t.Logf("%s: %s", o, strings.Join(ids, ", "))
	}
}

// TestWorkerDeploymentHardening: the worker's pod runs as non-root on a
// read-only root filesystem, probes the health endpoint, and is given longer
// to stop than its own shutdown grace.
func TestWorkerDeploymentHardening(t *testing.T) {
	var dep struct {
		Spec struct {
			Template struct {
				Spec struct {
					TerminationGracePeriodSeconds int64 `json:"terminationGracePeriodSeconds"`
					SecurityContext               struct {
						RunAsNonRoot bool `json:"runAsNonRoot"`
					} `json:"securityContext"`
					Containers []struct {
						Args            []string `json:"args"`
						SecurityContext struct {
							ReadOnlyRootFilesystem bool `json:"readOnlyRootFilesystem"`
						} `json:"securityContext"`
						LivenessProbe  *struct{} `json:"livenessProbe"`
						ReadinessProbe *struct{} `json:"readinessProbe"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	doc := document(t, build(t, "overlays/external-temporal"), "Deployment", "kumo-worker")
	if err := yaml.Unmarshal([]byte(doc), &dep); err != nil {
		t.Fatal(err)
	}
	pod := dep.Spec.Template.Spec
	if !pod.SecurityContext.RunAsNonRoot || len(pod.Containers) != 1 {
		t.Fatalf("worker pod: %+v", pod)
	}
	ctr := pod.Containers[0]
	if !ctr.SecurityContext.ReadOnlyRootFilesystem || ctr.LivenessProbe == nil || ctr.ReadinessProbe == nil {
		t.Errorf("worker container: %+v", ctr)
	}
	var grace time.Duration
	for _, a := range ctr.Args {
		if v, ok := strings.CutPrefix(a, "--shutdown-grace="); ok {
			grace, _ = time.ParseDuration(v)
		}
	}
	if grace == 0 || time.Duration(pod.TerminationGracePeriodSeconds)*time.Second <= grace {
		t.Errorf("terminationGracePeriodSeconds %d is not longer than --shutdown-grace %s", pod.TerminationGracePeriodSeconds, grace)
	}
}

// TestWorkerRunsWithACodecKey: a worker against an existing cluster refuses
// to start without a codec key unless --insecure-plaintext; the Deployment
// gives it one from a Secret that is not optional (no Secret, no pod) and
// never passes --insecure-plaintext.
func TestWorkerRunsWithACodecKey(t *testing.T) {
	var dep struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Args []string `json:"args"`
						Env  []struct {
							Name  string `json:"name"`
							Value string `json:"value"`
						} `json:"env"`
						VolumeMounts []struct {
							Name      string `json:"name"`
							MountPath string `json:"mountPath"`
						} `json:"volumeMounts"`
					} `json:"containers"`
					Volumes []struct {
						Name   string `json:"name"`
						Secret *struct {
							SecretName string `json:"secretName"`
							Optional   *bool  `json:"optional"`
						} `json:"secret"`
					} `json:"volumes"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	doc := document(t, build(t, "overlays/external-temporal"), "Deployment", "kumo-worker")
	if err := yaml.Unmarshal([]byte(doc), &dep); err != nil {
		t.Fatal(err)
	}
	pod := dep.Spec.Template.Spec
	ctr := pod.Containers[0]
	for _, a := range ctr.Args {
		if strings.HasPrefix(a, "--insecure-plaintext") {
			t.Errorf("the worker runs with %s", a)
		}
	}
	keyFile := ""
	for _, e := range ctr.Env {
		if e.Name == "KUMO_CODEC_KEY_FILE" {
			keyFile = e.Value
		}
	}
	volume := ""
	for _, m := range ctr.VolumeMounts {
		if keyFile != "" && strings.HasPrefix(keyFile, m.MountPath+"/") {
			volume = m.Name
		}
	}
	if keyFile == "" || volume == "" {
		t.Fatalf("the worker's KUMO_CODEC_KEY_FILE %q is not in a mounted volume: %+v", keyFile, ctr.VolumeMounts)
	}
	for _, v := range pod.Volumes {
		if v.Name == volume && (v.Secret == nil || v.Secret.SecretName == "" || (v.Secret.Optional != nil && *v.Secret.Optional)) {
			t.Errorf("the codec key's volume %s is not a required Secret: %+v", volume, v.Secret)
		}
	}
}

// TestServerServesTLSWithAPolicy: the single-node server listens beyond
// loopback, so it is given the operator's certificate, client CA and policy
// (kumo server refuses to start beyond loopback without them): each flag names
// a file of a mounted volume, the certificates from a Secret that is not
// optional, the policy from the ConfigMap the overlay generates, which grants
// someone.
func TestServerServesTLSWithAPolicy(t *testing.T) {
	manifests := build(t, "overlays/single-node")
	var dep appsv1.Deployment
	if err := yaml.Unmarshal([]byte(document(t, manifests, "Deployment", "kumo-server")), &dep); err != nil {
		t.Fatal(err)
	}
	pod := dep.Spec.Template.Spec
	ctr := pod.Containers[0]
	flags := map[string]string{}
	for _, a := range ctr.Args {
		if k, v, ok := strings.Cut(a, "="); ok {
			flags[k] = v
		}
	}
	if !strings.HasPrefix(flags["--address"], "0.0.0.0:") {
		t.Fatalf("the server's --address %q: this test expects one beyond loopback", flags["--address"])
	}
	// source returns the volume a mounted file comes from and its key there.
	source := func(path string) (*corev1.Volume, string) {
		for _, m := range ctr.VolumeMounts {
			if key, ok := strings.CutPrefix(path, m.MountPath+"/"); ok {
				for i := range pod.Volumes {
					if pod.Volumes[i].Name == m.Name {
						return &pod.Volumes[i], key
					}
				}
			}
		}
		return nil, ""
	}
	for _, f := range []string{"--tls-cert", "--tls-key", "--tls-client-ca"} {
		v, _ := source(flags[f])
		if flags[f] == "" || v == nil || v.Secret == nil || (v.Secret.Optional != nil && *v.Secret.Optional) {
			t.Errorf("%s=%q is not a file of a required Secret's volume (%+v)", f, flags[f], v)
		}
	}
	v, key := source(flags["--policy"])
	if flags["--policy"] == "" || v == nil || v.ConfigMap == nil || (v.ConfigMap.Optional != nil && *v.ConfigMap.Optional) {
		t.Fatalf("--policy=%q is not a file of a required ConfigMap's volume (%+v)", flags["--policy"], v)
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal([]byte(document(t, manifests, "ConfigMap", v.ConfigMap.Name)), &cm); err != nil {
		t.Fatal(err)
	}
	var policy struct {
		Grants []struct {
			Role     string   `json:"role"`
			Subjects []string `json:"subjects"`
			Scopes   []string `json:"scopes"`
		} `json:"grants"`
	}
	if err := yaml.UnmarshalStrict([]byte(cm.Data[key]), &policy); err != nil || len(policy.Grants) == 0 {
		t.Errorf("ConfigMap %s's %s grants nobody (%v): %q", cm.Name, key, err, cm.Data[key])
	}
	for _, g := range policy.Grants {
		if len(g.Subjects) == 0 || len(g.Scopes) == 0 || !slices.Contains([]string{"viewer", "deployer", "approver", "admin", "worker"}, g.Role) {
			t.Errorf("policy grant %+v: a known role, subjects and scopes", g)
		}
	}
}

// TestNetworkPoliciesAdmitOnlyWhatMustReach: every kumo pod is selected by a
// NetworkPolicy for ingress, and each of its rules admits one named port of
// that pod from pods carrying the access label meant for it, never from
// everyone: the server's Temporal frontend from Temporal clients, its Web UI
// from the UI's ingress, a worker's metrics from scrapers; nothing else (no
// Temporal internal port, no codec endpoint). The dry-run above shows the
// apiserver accepts them.
func TestNetworkPoliciesAdmitOnlyWhatMustReach(t *testing.T) {
	for _, c := range []struct {
		overlay, deployment string
		access              map[string]string // port name -> kumoproj.io/access value
	}{
		{"overlays/external-temporal", "kumo-worker", map[string]string{"metrics": "metrics"}},
		{"overlays/single-node", "kumo-server", map[string]string{"temporal": "temporal", "ui": "ui"}},
	} {
		manifests := build(t, c.overlay)
		var dep appsv1.Deployment
		if err := yaml.Unmarshal([]byte(document(t, manifests, "Deployment", c.deployment)), &dep); err != nil {
			t.Fatal(err)
		}
		podPorts := map[string]bool{}
		for _, ctr := range dep.Spec.Template.Spec.Containers {
			for _, p := range ctr.Ports {
				podPorts[p.Name] = true
			}
		}
		var selecting []networkingv1.NetworkPolicy
		for _, doc := range strings.Split(manifests, "\n---\n") {
			var np networkingv1.NetworkPolicy
			if err := yaml.Unmarshal([]byte(doc), &np); err != nil {
				t.Fatal(err)
			}
			if np.Kind != "NetworkPolicy" {
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
			if err != nil {
				t.Fatal(err)
			}
			if sel.Matches(labels.Set(dep.Spec.Template.Labels)) {
				selecting = append(selecting, np)
			} else if sel.Empty() || len(np.Spec.PodSelector.MatchLabels) == 0 {
				t.Errorf("%s: NetworkPolicy %s selects no kumo pod in particular", c.overlay, np.Name)
			}
		}
		if len(selecting) != 1 {
			t.Fatalf("%s: %d NetworkPolicies select %s's pods, want 1", c.overlay, len(selecting), c.deployment)
		}
		np := selecting[0]
		if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
			t.Errorf("%s: NetworkPolicy %s does not govern ingress: %v", c.overlay, np.Name, np.Spec.PolicyTypes)
		}
		admitted := map[string]bool{}
		for i, rule := range np.Spec.Ingress {
			if len(rule.Ports) == 0 || len(rule.From) == 0 {
				t.Errorf("%s: %s rule %d admits every port or every peer: %+v", c.overlay, np.Name, i, rule)
				continue
			}
			for _, p := range rule.Ports {
				name := p.Port.String()
				want, ok := c.access[name]
				if !ok || !podPorts[name] {
					t.Errorf("%s: %s admits port %s, which is not one to reach (%v) or not the pod's", c.overlay, np.Name, name, c.access)
					continue
				}
				admitted[name] = true
				for _, peer := range rule.From {
					if peer.IPBlock != nil || peer.PodSelector == nil || peer.PodSelector.MatchLabels["kumoproj.io/access"] != want {
						t.Errorf("%s: %s admits port %s from %+v, want only pods labelled kumoproj.io/access=%s", c.overlay, np.Name, name, peer, want)
					}
				}
			}
		}
		for name := range c.access {
			if !admitted[name] {
				t.Errorf("%s: %s does not admit port %s to its clients", c.overlay, np.Name, name)
			}
		}
	}
}

// TestClusterRoleIsWhatTheRuntimeNeeds runs the Kubernetes runtime under a
// token of the worker's service account bound to the ClusterRole kumo-runtime
// and, in the namespace it deploys to only (deploy/kubernetes/secrets-access),
// to kumo-runtime-secrets: every kind the roles name is applied, read, waited
// for and deleted. Then each rule in turn is taken away, and the same run must
// be refused: no rule is spare. The worker reads no Secret in a namespace not
// granted, and a run that writes a Secret there is refused.
func TestClusterRoleIsWhatTheRuntimeNeeds(t *testing.T) {
	c := startCluster(t)
	kube := adminClient(t, c)
	createNamespace(t, kube, "kumo")
	manifests := build(t, "overlays/external-temporal")
	rbac := []string{document(t, manifests, "ServiceAccount", ""), document(t, manifests, "ClusterRoleBinding", ""),
		document(t, manifests, "ClusterRole", "kumo-runtime"), document(t, manifests, "ClusterRole", "kumo-runtime-secrets")}
	if strings.Contains(document(t, manifests, "ClusterRole", "kumo-runtime"), "secrets") {
		t.Error("the cluster-wide ClusterRole kumo-runtime names Secrets")
	}
	if _, err := apply(adminRuntime(t, c), strings.Join(rbac, "\n---\n"), false); err != nil {
		t.Fatalf("apply the worker's RBAC: %v", err)
	}
	var binding rbacv1.RoleBinding
	if err := yaml.Unmarshal([]byte(document(t, build(t, "secrets-access"), "RoleBinding", "kumo-runtime-secrets")), &binding); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tok, err := kube.CoreV1().ServiceAccounts("kumo").CreateToken(ctx, "kumo-worker", &authv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := kubernetes.NewForConfig(&rest.Config{
		Host: c.Server, BearerToken: tok.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: c.CAData}, QPS: 100, Burst: 100,
	}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// The namespace the secrets role's reductions are checked in.
	secrets, err := kube.RbacV1().ClusterRoles().Get(ctx, "kumo-runtime-secrets", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	createNamespace(t, kube, "rbac-ref")
	grant(t, kube, binding, "rbac-ref", secrets.Rules)()
	if err := exercise(ctx, rt, "rbac-all", grant(t, kube, binding, "rbac-all", secrets.Rules)); err != nil {
		t.Fatalf("the runtime under the ClusterRole: %v", err)
	}

	// Secrets elsewhere: not readable, not writable.
	for _, ns := range []string{"kube-system", "kumo"} {
		if allowed(t, kube, "get", "", "secrets", ns) {
			t.Errorf("the worker may read the Secrets of namespace %s, which no RoleBinding grants it", ns)
		}
	}
	if err := exercise(ctx, rt, "rbac-no-secrets", nil); err == nil || !strings.Contains(err.Error(), "forbidden") || !strings.Contains(err.Error(), "secrets") {
		t.Errorf("a run writing a Secret in a namespace not granted: %v, want it forbidden", err)
	}
	_ = kube.CoreV1().Namespaces().Delete(ctx, "rbac-no-secrets", metav1.DeleteOptions{})

	for _, name := range []string{"kumo-runtime", "kumo-runtime-secrets"} {
		role, err := kube.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		full := role.Rules
		for i, less := range lessRules(full) {
			ns := fmt.Sprintf("rbac-less-%s-%d", strings.TrimPrefix(name, "kumo-"), i)
			setRules(t, kube, name, "rbac-ref", less.rules, less.verb, less.group, less.resource, false)
			granted := secrets.Rules
			if name == "kumo-runtime-secrets" {
				granted = less.rules
			}
			err := exercise(ctx, rt, ns, grant(t, kube, binding, ns, granted))
			if err == nil || !strings.Contains(err.Error(), "forbidden") {
				t.Errorf("%s without %s: the run was not refused: %v", name, less.without, err)
			} else {
				t.Logf("%s without %s: %v", name, less.without, err)
			}
			setRules(t, kube, name, "rbac-ref", full, less.verb, less.group, less.resource, true)
			// What the refused run left goes with its namespace, in the background.
			_ = kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		}
	}
}

// grant returns what an operator does once namespace ns exists: bind
// kumo-runtime-secrets there as binding does; it waits until the authorizer
// follows the binding, allowing the first verb of the role's rules (none to
// wait for when the role has no rules).
func grant(t *testing.T, kube k8s.Interface, binding rbacv1.RoleBinding, ns string, rules []rbacv1.PolicyRule) func() {
	return func() {
		t.Helper()
		b := binding.DeepCopy()
		b.Namespace, b.ResourceVersion = ns, ""
		if _, err := kube.RbacV1().RoleBindings(ns).Create(context.Background(), b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if len(rules) == 0 {
			return
		}
		for range 100 {
			if allowed(t, kube, rules[0].Verbs[0], rules[0].APIGroups[0], rules[0].Resources[0], ns) {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("the authorizer did not follow the RoleBinding in %s", ns)
	}
}

// allowed asks the authorizer whether the worker's service account may verb
// resource in namespace ns.
func allowed(t *testing.T, kube k8s.Interface, verb, group, resource, ns string) bool {
	t.Helper()
	review := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
		User: "system:serviceaccount:kumo:kumo-worker", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kumo", "system:authenticated"},
		ResourceAttributes: &authzv1.ResourceAttributes{Verb: verb, Group: group, Resource: resource, Namespace: ns},
	}}
	got, err := kube.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), review, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got.Status.Allowed
}

type reducedRules struct {
	without               string
	verb, group, resource string // one permission the reduction takes away
	rules                 []rbacv1.PolicyRule
}

// lessRules are rules each with one resource or one verb of one rule taken away.
func lessRules(full []rbacv1.PolicyRule) []reducedRules {
	var out []reducedRules
	with := func(i int, r rbacv1.PolicyRule, without, verb, resource string) {
		rules := append([]rbacv1.PolicyRule{}, full[:i]...)
		if len(r.Resources) > 0 && len(r.Verbs) > 0 {
			rules = append(rules, r)
		}
		out = append(out, reducedRules{without, verb, full[i].APIGroups[0], resource, append(rules, full[i+1:]...)})
	}
	for i, rule := range full {
		for j, resource := range rule.Resources {
			r := rule
			r.Resources = slices.Delete(slices.Clone(rule.Resources), j, j+1)
			with(i, r, resource+" "+strings.Join(rule.Verbs, ","), rule.Verbs[0], resource)
		}
		for j, verb := range rule.Verbs {
			r := rule
			r.Verbs = slices.Delete(slices.Clone(rule.Verbs), j, j+1)
			with(i, r, verb+" on "+strings.Join(rule.Resources, ","), verb, rule.Resources[0])
		}
	}
	return out
}

// exercise applies, reads, waits for and deletes one object of every kind the
// roles name, in a new namespace; granted (if not nil) runs once the
// namespace is created, before anything is put in it.
func exercise(ctx context.Context, rt *kubernetes.Runtime, ns string, granted func()) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	labels := map[string]any{"app": "web"}
	podSpec := map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx"}}}
	template := map[string]any{"metadata": map[string]any{"labels": labels}, "spec": podSpec}
	objects := []map[string]any{
		object("v1", "Namespace", "", ns, nil),
		object("v1", "ServiceAccount", ns, "web", nil),
		object("v1", "ConfigMap", ns, "web", map[string]any{"data": map[string]any{"k": "v"}}),
		object("v1", "Secret", ns, "web", map[string]any{"stringData": map[string]any{"k": "v"}}),
		object("v1", "Service", ns, "web", map[string]any{"spec": map[string]any{"selector": labels, "ports": []any{map[string]any{"port": 80}}}}),
		// A LoadBalancer Service is healthy once it has an address: its wait watches.
		object("v1", "Service", ns, "web-lb", map[string]any{"spec": map[string]any{"type": "LoadBalancer", "selector": labels, "ports": []any{map[string]any{"port": 80}}}}),
		object("apps/v1", "Deployment", ns, "web", map[string]any{"spec": map[string]any{"selector": map[string]any{"matchLabels": labels}, "template": template}}),
		object("apps/v1", "StatefulSet", ns, "web", map[string]any{"spec": map[string]any{"serviceName": "web", "selector": map[string]any{"matchLabels": labels}, "template": template}}),
		object("apps/v1", "DaemonSet", ns, "web", map[string]any{"spec": map[string]any{"selector": map[string]any{"matchLabels": labels}, "template": template}}),
		object("batch/v1", "Job", ns, "web", map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"restartPolicy": "Never", "containers": podSpec["containers"]}}}}),
		object("batch/v1", "CronJob", ns, "web", map[string]any{"spec": map[string]any{"schedule": "0 0 * * *", "jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"restartPolicy": "Never", "containers": podSpec["containers"]}}}}}}),
	}
	var resources []*engine.Resource
	for _, obj := range objects {
		id, err := engine.KubernetesIDOf(obj)
		if err != nil {
			return err
		}
		res := &engine.Resource{ID: id, Type: engine.Kubernetes, Attributes: obj}
		resources = append(resources, res)
		if _, err := rt.Apply(ctx, res, runtime.ApplyOptions{DryRun: true}); err != nil {
			return err
		}
		if _, err := rt.Apply(ctx, res, runtime.ApplyOptions{}); err != nil {
			return err
		}
		if _, err := rt.Read(ctx, res); err != nil {
			return err
		}
		if obj["kind"] == "Namespace" && granted != nil {
			granted()
		}
	}
	// Health follows each object (list and watch) and a workload's Pods:
	// nothing runs Pods or load balancers here, so those waits end by the timeout.
	for _, res := range resources {
		_, err := rt.WaitHealthy(ctx, res, runtime.WaitOptions{Timeout: time.Second})
		var he *runtime.HealthError
		if err != nil && (!errors.As(err, &he) || !he.TimedOut) {
			return err
		}
	}
	for i := len(resources) - 1; i >= 0; i-- {
		if err := rt.Delete(ctx, resources[i]); err != nil {
			return err
		}
	}
	return nil
}

func object(apiVersion, kind, ns, name string, body map[string]any) map[string]any {
	meta := map[string]any{"name": name}
	if ns != "" {
		meta["namespace"] = ns
	}
	obj := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta}
	for k, v := range body {
		obj[k] = v
	}
	return obj
}

// setRules replaces ClusterRole name's rules and waits until the authorizer,
// which follows roles through a cache, allows (or refuses) verb on resource in
// namespace ns.
func setRules(t *testing.T, kube k8s.Interface, name, ns string, rules []rbacv1.PolicyRule, verb, group, resource string, want bool) {
	t.Helper()
	ctx := context.Background()
	role, err := kube.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	role.Rules = rules
	if _, err := kube.RbacV1().ClusterRoles().Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if allowed(t, kube, verb, group, resource, ns) == want {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the authorizer did not follow the ClusterRole %s for %s %s", name, verb, resource)
}

func startCluster(t *testing.T) *localcluster.Cluster {
	if testing.Short() {
		t.Skip("needs a local Kubernetes control plane")
	}
	return localclustertest.Start(t, localclustertest.RBAC)
}

// build is `kustomize build` of kubernetes/<overlay>, through kustomize's Go
// API (what `kubectl kustomize` runs).
func build(t *testing.T, overlay string) string {
	t.Helper()
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), "kubernetes/"+overlay)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", overlay, err)
	}
	out, err := res.AsYaml()
	if err != nil {
		t.Fatalf("kustomize build %s: %v", overlay, err)
	}
	return string(out)
}

// adminRuntime is kumo's Kubernetes runtime as the cluster's admin.
func adminRuntime(t *testing.T, c *localcluster.Cluster) *kubernetes.Runtime {
	rt, err := kubernetes.NewForConfig(c.RESTConfig(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// apply server-side applies every object of manifests (only as a dry run when
// dryRun), as `kubectl apply --server-side [--dry-run=server]` does, and
// returns their IDs.
func apply(rt *kubernetes.Runtime, manifests string, dryRun bool) ([]string, error) {
	var ids []string
	for _, doc := range strings.Split(manifests, "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return ids, err
		}
		id, err := engine.KubernetesIDOf(obj)
		if err != nil {
			return ids, err
		}
		res := &engine.Resource{ID: id, Type: engine.Kubernetes, Attributes: obj}
		if _, err := rt.Apply(context.Background(), res, runtime.ApplyOptions{DryRun: dryRun, ForceConflicts: true}); err != nil {
			return ids, fmt.Errorf("%s: %w", id, err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// document is the object of kind (and name, if given) in a multi-document YAML.
func document(t *testing.T, manifests, kind, name string) string {
	t.Helper()
	for _, doc := range strings.Split(manifests, "\n---\n") {
		var m struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		if m.Kind == kind && (name == "" || m.Metadata.Name == name) {
			return doc
		}
	}
	t.Fatalf("no %s %s in the build", kind, name)
	return ""
}

func adminClient(t *testing.T, c *localcluster.Cluster) k8s.Interface {
	kube, err := k8s.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return kube
}

func createNamespace(t *testing.T, kube k8s.Interface, ns string) {
	_, err := kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

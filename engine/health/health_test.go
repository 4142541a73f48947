package health

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// load reads testdata/name, an object as the apiserver returns it, decoded the
// way client-go's dynamic client decodes it (integers as int64).
func load(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return u
}

// cases: one object per file, and the health Check must find in it.
var cases = []struct {
	file    string
	want    Status
	message string
	reason  string
}{
	{"deployment-available.yaml", Healthy, "3/3 replicas available", ""},
	{"deployment-partly-available.yaml", Progressing, "1/3 replicas available", ""},
	{"deployment-rolling.yaml", Progressing, "1/3 replicas updated", ""},
	{"deployment-old-replicas.yaml", Progressing, "1 old replicas pending termination", ""},
	{"deployment-unobserved.yaml", Progressing, "waiting for the controller to observe generation 3 (at 2)", ""},
	{"deployment-new.yaml", Progressing, "waiting for the controller to observe generation 1 (at 0)", ""},
	{"deployment-progress-deadline.yaml", Degraded, `progress deadline exceeded: ReplicaSet "web-7d9f8b6c5d" has timed out progressing.`, "ProgressDeadlineExceeded"},
	{"deployment-paused.yaml", Suspended, "rollout paused", "Paused"},
	{"deployment-quota.yaml", Progressing, `0/2 replicas updated: pods "web-7d9f8b6c5d-x2kq9" is forbidden: exceeded quota: compute, requested: cpu=250m, used: cpu=1, limited: cpu=1`, "FailedCreate"},
	{"deployment-malformed.yaml", Unknown, "status.replicas: string is not an integer", ""},

	{"replicaset-available.yaml", Healthy, "2/2 replicas available", ""},
	{"replicaset-failed-create.yaml", Progressing, `0/2 replicas available: pods "web-7d9f8b6c5d-" is forbidden: error looking up service account shop/web: serviceaccount "web" not found`, "FailedCreate"},

	{"statefulset-ready.yaml", Healthy, "3/3 replicas ready", ""},
	{"statefulset-starting.yaml", Progressing, "1/3 replicas ready", ""},
	{"statefulset-rolling.yaml", Progressing, "rolling update: 1/3 replicas at revision db-59d4c7b8f6", ""},
	{"statefulset-partitioned.yaml", Healthy, "3/3 replicas ready", ""},
	{"statefulset-ondelete.yaml", Healthy, "2/2 replicas ready", ""},

	{"daemonset-available.yaml", Healthy, "2/2 pods available", ""},
	{"daemonset-updating.yaml", Progressing, "1/3 pods updated", ""},
	{"daemonset-unavailable.yaml", Progressing, "1/3 pods available", ""},

	{"job-complete.yaml", Healthy, "completed (1 succeeded)", ""},
	{"job-failed.yaml", Degraded, "job failed: Job has reached the specified backoff limit", "BackoffLimitExceeded"},
	{"job-running.yaml", Progressing, "1 active, 0 succeeded, 1 failed", ""},
	{"job-suspended.yaml", Suspended, "suspended", "JobSuspended"},

	{"pod-running-ready.yaml", Healthy, "running and ready", ""},
	{"pod-crashloop.yaml", Degraded, "back-off 2m40s restarting failed container=web pod=web-7d9f8b6c5d-x2kq9_shop(6d0c2f4e-8a1b-4c7d-9e2f-3a4b5c6d7e8f)", "CrashLoopBackOff"},
	{"pod-imagepullbackoff.yaml", Degraded, `Back-off pulling image "x"`, "ImagePullBackOff"},
	{"pod-init-config-error.yaml", Degraded, `container "setup": CreateContainerConfigError`, "CreateContainerConfigError"},
	{"pod-unschedulable.yaml", Progressing, "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.", "Unschedulable"},
	{"pod-creating.yaml", Progressing, "pending", ""},
	{"pod-running-not-ready.yaml", Progressing, "containers with unready status: [web]", ""},
	{"pod-failed.yaml", Degraded, `container "migrate": OOMKilled (exit code 137)`, ""},
	{"pod-evicted.yaml", Degraded, "The node was low on resource: memory. Threshold quantity: 100Mi, available: 88Mi.", "Evicted"},
	{"pod-succeeded.yaml", Healthy, "succeeded", ""},
	{"pod-deleting.yaml", Progressing, "being deleted", "Terminating"},

	{"pvc-bound.yaml", Healthy, "bound to pvc-4c1d2e3f-5a6b-7c8d-9e0f-1a2b3c4d5e6f", ""},
	{"pvc-pending.yaml", Progressing, "waiting for a volume (phase Pending)", ""},
	{"pvc-lost.yaml", Degraded, "volume pv-data-0 lost", "Lost"},

	{"service-clusterip.yaml", Healthy, "", ""},
	{"service-loadbalancer-pending.yaml", Progressing, "waiting for a load balancer address", ""},
	{"service-loadbalancer.yaml", Healthy, "address 203.0.113.10, web-1234.elb.example.com", ""},
	{"ingress.yaml", Healthy, "address 203.0.113.20", ""},
	{"ingress-pending.yaml", Progressing, "waiting for an ingress controller to assign an address", ""},

	{"crd-established.yaml", Healthy, "established", ""},
	{"crd-names-conflict.yaml", Degraded, `"Widget" is already in use`, "KindConflict"},
	{"crd-new.yaml", Progressing, "waiting to be established", ""},
	{"apiservice-available.yaml", Healthy, "available", ""},
	{"apiservice-unavailable.yaml", Progressing, `service/metrics-server in "kube-system" is not present`, "ServiceNotFound"},

	{"hpa-v2-healthy.yaml", Healthy, "recommended size matches current size", "ReadyForNewScale"},
	{"hpa-v2-degraded.yaml", Degraded, `the HPA controller was unable to get the target's current scale: deployments/scale.apps "wbe" not found`, "FailedGetScale"},
	{"hpa-v2-no-metrics.yaml", Healthy, "able to scale; the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API", "FailedGetResourceMetric"},
	{"hpa-v2-new.yaml", Progressing, "waiting for the autoscaler", ""},
	{"hpa-v1-annotated.yaml", Healthy, "recommended size matches current size", "ReadyForNewScale"},

	{"namespace-active.yaml", Healthy, "", ""},
	{"namespace-terminating.yaml", Progressing, "terminating", "Terminating"},

	{"certificate-ready.yaml", Healthy, "Certificate is up to date and has not expired", "Ready"},
	{"certificate-issuing.yaml", Progressing, "Issuing certificate as Secret does not exist", "DoesNotExist"},
	{"custom-stale-generation.yaml", Progressing, "waiting for the controller to observe generation 3 (at 2)", ""},
	{"configmap.yaml", Healthy, "", ""},
}

func TestCheck(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			got := Check(load(t, tc.file))
			want := Result{Status: tc.want, Message: tc.message, Reason: tc.reason}
			if got != want {
				t.Errorf("Check = %#v\n          want %#v", got, want)
			}
		})
	}
}

// Every file in testdata is in the table above.
func TestEveryTestdataFileIsChecked(t *testing.T) {
	listed := map[string]bool{}
	for _, tc := range cases {
		listed[tc.file] = true
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !listed[filepath.Base(f)] {
			t.Errorf("%s is not in the table", f)
		}
	}
}

func TestCheckMissing(t *testing.T) {
	if got := Check(nil); got.Status != Missing {
		t.Errorf("Check(nil) = %v", got)
	}
}

// Objects that went through a plain JSON decoder (a recorded state file) carry
// float64 numbers; they read the same.
func TestFloatNumbers(t *testing.T) {
	u := load(t, "deployment-partly-available.yaml")
	b, err := u.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["spec"].(map[string]any)["replicas"].(float64); !ok {
		t.Fatalf("replicas decoded as %T", m["spec"].(map[string]any)["replicas"])
	}
	got := Check(&unstructured.Unstructured{Object: m})
	if want := (Result{Status: Progressing, Message: "1/3 replicas available"}); got != want {
		t.Errorf("Check = %#v, want %#v", got, want)
	}
}

func TestWorst(t *testing.T) {
	healthy := Result{Status: Healthy, Message: "3/3 replicas available"}
	progressing := Result{Status: Progressing, Message: "1/3 replicas available"}
	degraded := Result{Status: Degraded, Message: "job failed"}
	missing := Result{Status: Missing, Message: "not found"}
	suspended := Result{Status: Suspended}
	for _, tc := range []struct {
		in   []Result
		want Result
	}{
		{nil, Result{Status: Healthy}},
		{[]Result{healthy}, healthy},
		{[]Result{healthy, suspended}, suspended},
		{[]Result{healthy, progressing, suspended}, progressing},
		{[]Result{progressing, missing, healthy}, missing},
		{[]Result{missing, degraded, progressing}, degraded},
		{[]Result{degraded, {Status: Unknown}}, Result{Status: Unknown}},
		{[]Result{degraded, {Status: "Bogus"}}, Result{Status: "Bogus"}}, // unrecognised counts as Unknown
	} {
		if got := Worst(tc.in...); got != tc.want {
			t.Errorf("Worst(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

package generate

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kumoproj/kumo/engine"
)

// Workload types, which are also the names of their modules: a workspace's
// modules.service.config holds defaults for every service workload.
const (
	ServiceModule = "service"
	JobModule     = "job"
)

// workloadCommon is what every workload type has.
type workloadCommon struct {
	Type        string               `json:"type"`
	Containers  map[string]Container `json:"containers"`
	Labels      map[string]string    `json:"labels,omitempty"`
	Annotations map[string]string    `json:"annotations,omitempty"`
}

// ServiceWorkload is a long-running workload: a Deployment.
type ServiceWorkload struct {
	workloadCommon
	Replicas *int64 `json:"replicas,omitempty"`
}

// JobWorkload runs to completion: a Job, or a CronJob when it has a schedule.
type JobWorkload struct {
	workloadCommon
	Schedule string `json:"schedule,omitempty"`
}

// Container is one container of a workload.
type Container struct {
	Image      string            `json:"image"`
	Command    []string          `json:"command,omitempty"`
	Args       []string          `json:"args,omitempty"`
	Env        map[string]string `json:"env,omitempty"`
	WorkingDir string            `json:"workingDir,omitempty"`
	// Resources are cpu, memory and ephemeral-storage quantities, used as both
	// requests and limits.
	Resources      map[string]string `json:"resources,omitempty"`
	ReadinessProbe *Probe            `json:"readinessProbe,omitempty"`
	LivenessProbe  *Probe            `json:"livenessProbe,omitempty"`
	StartupProbe   *Probe            `json:"startupProbe,omitempty"`
}

// Probe is a Kubernetes probe with exactly one handler.
type Probe struct {
	HTTPGet             *HTTPGetAction   `json:"httpGet,omitempty"`
	Exec                *ExecAction      `json:"exec,omitempty"`
	TCPSocket           *TCPSocketAction `json:"tcpSocket,omitempty"`
	InitialDelaySeconds *int64           `json:"initialDelaySeconds,omitempty"`
	PeriodSeconds       *int64           `json:"periodSeconds,omitempty"`
	TimeoutSeconds      *int64           `json:"timeoutSeconds,omitempty"`
	SuccessThreshold    *int64           `json:"successThreshold,omitempty"`
	FailureThreshold    *int64           `json:"failureThreshold,omitempty"`
}

type HTTPGetAction struct {
	Path   string `json:"path,omitempty"`
	Port   int64  `json:"port"`
	Scheme string `json:"scheme,omitempty"`
}

type ExecAction struct {
	Command []string `json:"command"`
}

type TCPSocketAction struct {
	Port int64 `json:"port"`
}

var resourceNames = []string{"cpu", "memory", "ephemeral-storage"}

// workload is a built workload resource, with handles on the parts that
// accessories patch.
type workload struct {
	res         engine.Resource
	podTemplate map[string]any
	containers  []map[string]any
}

// buildWorkload decodes an app's workload config (already merged with the
// workspace defaults) and builds its resource.
func buildWorkload(a *appContext, path string, config map[string]any) (*workload, error) {
	typ, _ := config["type"].(string)
	switch typ {
	case ServiceModule:
		var w ServiceWorkload
		if err := decode(path, config, &w); err != nil {
			return nil, err
		}
		return buildService(a, path, &w)
	case JobModule:
		var w JobWorkload
		if err := decode(path, config, &w); err != nil {
			return nil, err
		}
		return buildJob(a, path, &w)
	case "":
		return nil, errorAt(join(path, "type"), "missing: want %s or %s", ServiceModule, JobModule)
	}
	return nil, errorAt(join(path, "type"), "unknown workload type %q: want %s or %s", typ, ServiceModule, JobModule)
}

func buildService(a *appContext, path string, w *ServiceWorkload) (*workload, error) {
	replicas := int64(1)
	if w.Replicas != nil {
		if *w.Replicas < 0 {
			return nil, errorAt(join(path, "replicas"), "must not be negative, got %d", *w.Replicas)
		}
		replicas = *w.Replicas
	}
	pod, containers, err := podTemplate(a, path, &w.workloadCommon, "Always")
	if err != nil {
		return nil, err
	}
	obj := object("apps/v1", "Deployment", a.name, a.namespace, a.labelsWith(w.Labels), w.Annotations)
	obj["spec"] = map[string]any{
		"replicas": replicas,
		"selector": map[string]any{"matchLabels": stringMap(a.selector)},
		"template": pod,
	}
	return a.workloadResource(obj, pod, containers), nil
}

// cronSchedule accepts five cron fields or a @-macro; the apiserver checks the rest.
var cronSchedule = regexp.MustCompile(`^(@(yearly|annually|monthly|weekly|daily|midnight|hourly|every \S+)|\S+( \S+){4})$`)

func buildJob(a *appContext, path string, w *JobWorkload) (*workload, error) {
	pod, containers, err := podTemplate(a, path, &w.workloadCommon, "Never")
	if err != nil {
		return nil, err
	}
	labels := a.labelsWith(w.Labels)
	jobSpec := map[string]any{"template": pod}
	if w.Schedule == "" {
		obj := object("batch/v1", "Job", a.name, a.namespace, labels, w.Annotations)
		obj["spec"] = jobSpec
		return a.workloadResource(obj, pod, containers), nil
	}
	if !cronSchedule.MatchString(strings.TrimSpace(w.Schedule)) {
		return nil, errorAt(join(path, "schedule"), "%q is not a cron schedule (five fields, e.g. \"0 * * * *\", or @hourly, @daily, ...)", w.Schedule)
	}
	obj := object("batch/v1", "CronJob", a.name, a.namespace, labels, w.Annotations)
	obj["spec"] = map[string]any{
		"schedule": strings.TrimSpace(w.Schedule),
		"jobTemplate": map[string]any{
			"metadata": map[string]any{"labels": stringMap(labels)},
			"spec":     jobSpec,
		},
	}
	return a.workloadResource(obj, pod, containers), nil
}

func (a *appContext) workloadResource(obj, pod map[string]any, containers []map[string]any) *workload {
	id, _ := engine.KubernetesIDOf(obj) // apiVersion, kind and name are set above
	return &workload{
		res:         engine.Resource{ID: id, Type: engine.Kubernetes, Attributes: obj, DependsOn: []string{a.namespaceID}},
		podTemplate: pod,
		containers:  containers,
	}
}

// podTemplate builds the pod template; containers come in name order.
func podTemplate(a *appContext, path string, w *workloadCommon, restart string) (map[string]any, []map[string]any, error) {
	if len(w.Containers) == 0 {
		return nil, nil, errorAt(join(path, "containers"), "missing: a workload needs at least one container")
	}
	var containers []map[string]any
	list := make([]any, 0, len(w.Containers))
	for _, name := range sortedKeys(w.Containers) {
		c, err := container(join(join(path, "containers"), name), name, w.Containers[name])
		if err != nil {
			return nil, nil, err
		}
		containers = append(containers, c)
		list = append(list, c)
	}
	meta := map[string]any{"labels": stringMap(a.labelsWith(w.Labels))}
	if len(w.Annotations) > 0 {
		meta["annotations"] = stringMap(w.Annotations)
	}
	spec := map[string]any{"containers": list}
	if restart != "Always" {
		spec["restartPolicy"] = restart
	}
	return map[string]any{"metadata": meta, "spec": spec}, containers, nil
}

func container(path, name string, c Container) (map[string]any, error) {
	if err := dnsLabel(name); err != nil {
		return nil, errorAt(path, "container name: %v", err)
	}
	if strings.TrimSpace(c.Image) == "" {
		return nil, errorAt(join(path, "image"), "missing: every container needs an image")
	}
	out := map[string]any{"name": name, "image": c.Image}
	if len(c.Command) > 0 {
		out["command"] = stringList(c.Command)
	}
	if len(c.Args) > 0 {
		out["args"] = stringList(c.Args)
	}
	if c.WorkingDir != "" {
		out["workingDir"] = c.WorkingDir
	}
	if len(c.Env) > 0 {
		env := make([]any, 0, len(c.Env))
		for _, k := range sortedKeys(c.Env) {
			env = append(env, map[string]any{"name": k, "value": c.Env[k]})
		}
		out["env"] = env
	}
	if len(c.Resources) > 0 {
		q := map[string]any{}
		for _, k := range sortedKeys(c.Resources) {
			if !slices.Contains(resourceNames, k) {
				return nil, errorAt(join(path, "resources"), "unknown resource %q (known: %s)", k, strings.Join(resourceNames, ", "))
			}
			if _, err := resource.ParseQuantity(c.Resources[k]); err != nil {
				return nil, errorAt(join(join(path, "resources"), k), "%q is not a quantity (e.g. 250m, 1, 256Mi)", c.Resources[k])
			}
			q[k] = c.Resources[k]
		}
		out["resources"] = map[string]any{"requests": q, "limits": maps.Clone(q)}
	}
	probes := []struct {
		field string
		p     *Probe
	}{{"readinessProbe", c.ReadinessProbe}, {"livenessProbe", c.LivenessProbe}, {"startupProbe", c.StartupProbe}}
	for _, pr := range probes {
		if pr.p == nil {
			continue
		}
		probe, err := probe(join(path, pr.field), pr.p)
		if err != nil {
			return nil, err
		}
		out[pr.field] = probe
	}
	return out, nil
}

func probe(path string, p *Probe) (map[string]any, error) {
	out := map[string]any{}
	handlers := 0
	if p.HTTPGet != nil {
		handlers++
		if err := checkPort(join(join(path, "httpGet"), "port"), p.HTTPGet.Port); err != nil {
			return nil, err
		}
		h := map[string]any{"port": p.HTTPGet.Port, "path": "/"}
		if p.HTTPGet.Path != "" {
			h["path"] = p.HTTPGet.Path
		}
		if p.HTTPGet.Scheme != "" {
			h["scheme"] = p.HTTPGet.Scheme
		}
		out["httpGet"] = h
	}
	if p.Exec != nil {
		handlers++
		if len(p.Exec.Command) == 0 {
			return nil, errorAt(join(join(path, "exec"), "command"), "missing")
		}
		out["exec"] = map[string]any{"command": stringList(p.Exec.Command)}
	}
	if p.TCPSocket != nil {
		handlers++
		if err := checkPort(join(join(path, "tcpSocket"), "port"), p.TCPSocket.Port); err != nil {
			return nil, err
		}
		out["tcpSocket"] = map[string]any{"port": p.TCPSocket.Port}
	}
	if handlers != 1 {
		return nil, errorAt(path, "want exactly one of httpGet, exec and tcpSocket, got %d", handlers)
	}
	for field, v := range map[string]*int64{
		"initialDelaySeconds": p.InitialDelaySeconds, "periodSeconds": p.PeriodSeconds, "timeoutSeconds": p.TimeoutSeconds,
		"successThreshold": p.SuccessThreshold, "failureThreshold": p.FailureThreshold,
	} {
		if v != nil {
			out[field] = *v
		}
	}
	return out, nil
}

func checkPort(path string, port int64) error {
	if port < 1 || port > 65535 {
		return errorAt(path, "want a port between 1 and 65535, got %d", port)
	}
	return nil
}

// object starts a Kubernetes object with its metadata.
func object(apiVersion, kind, name, namespace string, labels, annotations map[string]string) map[string]any {
	meta := map[string]any{"name": name}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	if len(labels) > 0 {
		meta["labels"] = stringMap(labels)
	}
	if len(annotations) > 0 {
		meta["annotations"] = stringMap(annotations)
	}
	return map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta}
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func stringList(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

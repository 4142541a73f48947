package runspec

// RuntimeSettings say where a run's resources live (from the workspace, overridden by
// CLI flags). Empty values mean the worker's defaults.
type RuntimeSettings struct {
	Kubeconfig string `json:"kubeconfig,omitempty"`
	Context    string `json:"context,omitempty"`
	// Kubeconfigs are the clusters a resource's kubeConfig extension may name
	// (cluster name -> kubeconfig path). Never part of a run's input: the
	// worker sets it from the workspace stored in the backend
	// (runtimes.kubernetes.kubeconfigs), so a caller starting a run cannot
	// widen it.
	Kubeconfigs map[string]string `json:"-"`
	// AllowExecPlugins lets kubeconfigs run exec credential plugins; set by
	// the worker from the stored workspace's runtimes.kubernetes.allowExecPlugins,
	// never from a run's input.
	AllowExecPlugins bool `json:"-"`
	// TerraformAllowedProviders are the provider source patterns a Terraform
	// resource may use (engine.ProviderAllowed); set by the worker from the
	// stored workspace's runtimes.terraform.allowedProviders (or their
	// default), never from a run's input.
	TerraformAllowedProviders []string `json:"-"`
	// TerraformBinary is "terraform", "tofu" or a path (default: terraform on
	// PATH), and TerraformPluginDir a provider filesystem mirror for offline
	// installs. Both choose what the worker executes, so they are never part
	// of a run's input: the worker sets them from the stored workspace's
	// runtimes.terraform.
	TerraformBinary    string `json:"-"`
	TerraformPluginDir string `json:"-"`
	// ForceConflicts takes over, on objects kumo has not recorded yet, the
	// fields another Kubernetes field manager owns (kubectl's --force-conflicts).
	// Without it such an apply fails naming the fields and their managers.
	// Objects kumo already recorded are always applied with force: kumo's
	// desired state wins over a change made outside it (drift).
	ForceConflicts bool `json:"forceConflicts,omitempty"`
	// TaskQueue, when set, is where the run's runtime steps (everything that
	// touches Kubernetes or runs Terraform) execute: workers started with
	// `kumo worker --task-queue` inside the target's network. Empty: the
	// workflow's own queue. From the workspace's temporal.taskQueue.
	TaskQueue string `json:"taskQueue,omitempty"`
}

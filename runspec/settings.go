package runspec

// RuntimeSettings say where a run's resources live (from the workspace, overridden by
// CLI flags). Empty values mean the worker's defaults.
type RuntimeSettings struct {
	Kubeconfig string `json:"kubeconfig,omitempty"`
	Context    string `json:"context,omitempty"`
	// Kubeconfigs are the clusters a resource's kubeConfig extension may name
	// (cluster name -> kubeconfig path), from the workspace's
	// runtimes.kubernetes.kubeconfigs; the worker refuses any other.
	Kubeconfigs map[string]string `json:"kubeconfigs,omitempty"`
	// AllowExecPlugins lets kubeconfigs run exec credential plugins, from the
	// workspace's runtimes.kubernetes.allowExecPlugins.
	AllowExecPlugins bool `json:"allowExecPlugins,omitempty"`
	// TerraformBinary is "terraform", "tofu" or a path (default: terraform on PATH).
	TerraformBinary string `json:"terraformBinary,omitempty"`
	// TerraformPluginDir is a provider filesystem mirror for offline installs.
	TerraformPluginDir string `json:"terraformPluginDir,omitempty"`
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

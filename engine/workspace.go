package engine

import (
	"fmt"

	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/engine/notify"
	"github.com/kumoproj/kumo/engine/planpolicy"
)

// Workspace is a target environment (dev, prod): the platform team's defaults for
// every project deployed into it. It is stored in the backend and edited with
// `kumo workspace create|update --file ws.yaml`.
type Workspace struct {
	Name string `json:"name"`
	// Modules holds per-module defaults (modules.<name>.config); an app's own
	// module config overrides them key by key.
	Modules map[string]ModuleDefaults `json:"modules,omitempty"`
	// Generators declares external generators available to every project here.
	Generators map[string]GeneratorDecl `json:"generators,omitempty"`
	// GeneratorTrust says which external generators may run for this
	// workspace, and with which environment. A project.yaml (or this file)
	// only names a command; the worker runs it only when trusted here.
	GeneratorTrust GeneratorTrust `json:"generatorTrust,omitzero"`
	// Runtimes says where resources live in this workspace.
	Runtimes Runtimes `json:"runtimes,omitempty"`
	// Context is free values handed to generators.
	Context map[string]any `json:"context,omitempty"`
	// Drift says what drift checks ignore here and how many reports they keep.
	Drift drift.Config `json:"drift,omitzero"`
	// Temporal says where this workspace's runs execute.
	Temporal TemporalSettings `json:"temporal,omitzero"`
	// Approval says who must approve a run's plan here.
	Approval ApprovalPolicy `json:"approval,omitzero"`
	// Health says which kinds an apply here does not wait for.
	Health HealthSettings `json:"health,omitzero"`
	// Runs says how runs here start.
	Runs RunSettings `json:"runs,omitzero"`
	// Notifications are where this workspace's run and drift events go
	// (Slack, generic webhooks): the workspace's administrators choose them,
	// never a run's input or a spec.
	Notifications notify.Config `json:"notifications,omitzero"`
	// Policies are the rules every plan here must pass, after its preview
	// and before its approval (see package planpolicy); checked and compiled
	// when the workspace is saved.
	Policies []planpolicy.Rule `json:"policies,omitempty"`
	// SecretStore is where the ref:// values of this workspace's Secrets are
	// read at apply time (Kusion's secretStore, plus the secrets specs may
	// read); credentials stay the worker's.
	SecretStore *WorkspaceSecretStore `json:"secretStore,omitempty"`
	// Sources are this workspace's git source settings: its default source
	// and the signed-commit requirement.
	Sources WorkspaceSources `json:"sources,omitzero"`
}

// TemporalSettings are a workspace's Temporal settings.
type TemporalSettings struct {
	// TaskQueue routes the runtime steps of this workspace's runs (previews,
	// applies, deletes, waits, compensations, drift reads) to workers started
	// with `kumo worker --task-queue <queue>`, e.g. inside the target cluster's
	// network; orchestration and the release lifecycle stay on the default
	// queue. Empty: every step runs on the default queue.
	TaskQueue string `json:"taskQueue,omitempty"`
}

// RunSettings are a workspace's defaults for its runs.
type RunSettings struct {
	// Queue makes every apply, destroy and rollback here wait its turn in
	// the stack's run queue while another run holds the stack, as `--queue`
	// does, instead of failing; `--queue=false` opts a run out.
	Queue bool `json:"queue,omitempty"`
}

// ModuleDefaults is a workspace's configuration for one module.
type ModuleDefaults struct {
	Config map[string]any `json:"config,omitempty"`
}

// GeneratorDecl declares an external generator: the command kumo runs, with the
// JSON request on stdin and the JSON response read from stdout. A relative path
// in Command[0] is relative to the file that declared it (project.yaml's directory;
// the working directory for a workspace).
type GeneratorDecl struct {
	Command []string `json:"command"`
}

// GeneratorTrust is the generators a workspace's administrators allow: an
// external generator is a program the worker runs with its own user, so a
// stack or a project.yaml cannot choose one by itself.
type GeneratorTrust struct {
	// SHA256 trusts a generator by its module name and the sha256 (hex) of
	// its executable (symlinks resolved): a changed executable is refused.
	SHA256 map[string]string `json:"sha256,omitempty"`
	// Dirs trusts every executable under these absolute directories (symlinks
	// resolved), e.g. /opt/kumo/generators.
	Dirs []string `json:"dirs,omitempty"`
	// Env names the worker's environment variables generators get besides
	// the fixed PATH, HOME, LANG, LC_ALL, TMPDIR and TZ.
	Env []string `json:"env,omitempty"`
}

// Runtimes are a workspace's runtime settings. Empty values mean the worker's defaults.
type Runtimes struct {
	Kubernetes KubernetesRuntime `json:"kubernetes,omitempty"`
	Terraform  TerraformRuntime  `json:"terraform,omitempty"`
}

// KubernetesRuntime names the cluster Kubernetes resources are applied to.
type KubernetesRuntime struct {
	Kubeconfig string `json:"kubeconfig,omitempty"`
	Context    string `json:"context,omitempty"`
	// Kubeconfigs are the other clusters a resource may be sent to with its
	// kubeConfig extension: a cluster name -> a kubeconfig file on the worker.
	// The extension names one by name or by that path; anything else is
	// refused, since a spec is untrusted and the worker holds every cluster's
	// credentials.
	Kubeconfigs map[string]string `json:"kubeconfigs,omitempty"`
	// AllowExecPlugins lets a kubeconfig whose user has an exec credential
	// plugin run that program on the worker (EKS, GKE, OIDC logins). Off, such
	// a kubeconfig is refused when it is loaded, before the program runs.
	AllowExecPlugins bool `json:"allowExecPlugins,omitempty"`
}

// CheckKubeconfigs reports an empty cluster name or path in k.Kubeconfigs.
func (k KubernetesRuntime) CheckKubeconfigs() error {
	for name, path := range k.Kubeconfigs {
		if name == "" || path == "" {
			return fmt.Errorf("runtimes.kubernetes.kubeconfigs: %q: %q: a cluster needs a name and a kubeconfig path", name, path)
		}
	}
	return nil
}

// TerraformRuntime names the terraform-compatible binary and where providers come from.
type TerraformRuntime struct {
	// Binary is "terraform", "tofu" or a path; found on PATH when not a path.
	Binary string `json:"binary,omitempty"`
	// PluginDir is a provider filesystem mirror for offline use; empty means the
	// user's CLI configuration decides.
	PluginDir string `json:"pluginDir,omitempty"`
	// AllowedProviders are the provider sources a Terraform resource may use,
	// as patterns (see ProviderAllowed): "registry.terraform.io/hashicorp/*",
	// "registry.example.com/*". A provider is a program the worker downloads
	// and runs with its credentials, so a spec may not pick one freely. Empty:
	// DefaultAllowedProviders plus the registry hosts of the providers this
	// workspace's releases already use.
	AllowedProviders []string `json:"allowedProviders,omitempty"`
}

// DefaultWorkspace always exists: an empty workspace until it is updated.
const DefaultWorkspace = "default"

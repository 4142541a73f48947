// Package terraform is kumo's Terraform runtime: it applies, previews, reads and
// deletes resources of type Terraform with a terraform-compatible binary
// (terraform or tofu) through github.com/hashicorp/terraform-exec.
//
// # One working directory per resource
//
// A resource (ID providerNamespace:providerName:resourceType:resourceName, provider
// and type in its extensions, see engine.ParseTerraform) gets its own working
// directory under Config.Dir/work, named after its ID. Before every operation the
// runtime writes main.tf.json there: the provider's requirement and configuration
// (extensions.providerMeta) and, when the operation needs it, the resource block
// with the resource's attributes as its arguments and an output of the whole
// resource (all its attributes, computed ones included). `terraform init` runs only when
// what decides provider installation (binary, provider requirement, plugin
// directory, CLI configuration) changed since the directory's last init, or the
// provider it installed is gone (a deleted mirror, a cleaned plugin cache); a
// command that still finds it missing initialises once more (see initcache.go),
// so the cache, shared by every kumo home of a user, heals itself. Directories
// are locked (flock) for the length of an operation, so workers on one machine
// share them safely.
//
// Providers are installed as the user's CLI configuration says (TF_CLI_CONFIG_FILE,
// ~/.terraformrc), or only from Config.PluginDir (init -plugin-dir) when set, for
// offline use. Every directory shares one plugin cache (Config.Dir/plugins), so 50
// resources of one provider install it once and link it 50 times; an init that
// would put a new provider into the cache runs alone (terraform's cache is not safe
// for concurrent writers), inits of cached providers run in parallel.
//
// # State lives with kumo, not on the worker's disk
//
// A resource's terraform state travels with the resource: every result carries the
// terraform.tfstate JSON in extensions[engine.ExtTerraformState], kumo records it in
// its own state (the backend), and hands it back with the resource before the next
// operation. The runtime writes exactly that state into the working directory
// before running terraform (and removes any other), so any worker, or the same one
// after a crash or with its directories deleted, continues from what kumo
// recorded. A failed apply returns the state it left (a tainted object, say)
// together with its error, so that is recorded too and the next apply replaces the
// object instead of creating a second one. terraform runs in its own process group
// and is killed if the worker dies (terraform-exec sets Pdeathsig), so no orphaned
// terraform keeps creating objects that no record will know of; the provider's
// in-flight call sees its connection drop and is cancelled. What remains is
// terraform's own window: a provider that created an object and was killed before
// returning it. A cancelled operation interrupts terraform (SIGINT), which stops
// its providers and writes its state, and that state is returned.
//
// # Operations
//
//   - Apply: init, then `terraform apply`; the result's attributes are the output
//     of the whole resource (arguments and computed values such as ids), read from
//     the new state and usable by $kumo_path references. A resource with
//     extensions."kusionstack.io/import-id" and no recorded state is first adopted
//     with `terraform import`, so the existing object is taken over, not recreated.
//   - Preview (and Apply with DryRun): `terraform plan -out` and `terraform show
//     -json` of the plan. The plan refreshes the object, so its "before" is the live
//     resource and its "after" is what an apply would produce; values only known
//     after apply are engine.KnownAfterApply. engine.Diff turns the two into kumo's
//     Create, Update or UnChanged with field-level changes. A plan with no change
//     at all (not even to the output of the whole resource, which any drift would
//     change) and a plan that creates need no show: live and planned are the
//     recorded output, or nothing and the arguments.
//   - Read: `terraform apply -refresh-only` with a configuration that has only the
//     provider (the resource's own arguments may hold references not resolved
//     yet), then `terraform show -json` of the refreshed state. A resource with no
//     recorded state does not exist for kumo, unless it has an import ID. A
//     resource that does not exist, or whose object the refresh found gone, is
//     an error wrapping runtime.ErrNotFound.
//   - Delete: `terraform destroy` of what the recorded state holds.
//
// Errors name the operation and the resource, and carry terraform's own diagnostics
// (the Error: lines and their details, one line each). Errors from terraform are
// permanent (retrying a configuration or provider error does not help), unless
// the diagnostics tell of a passing failure: the provider's API or the registry
// unreachable, overloaded, throttling or timing out (connection refused, 503,
// 429, ...), or terraform's state lock held. A missing binary, an invalid ID or
// missing extensions are permanent; a cancelled context is not.
package terraform

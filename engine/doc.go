// Package engine is kumo's pure domain: the resource Spec (KusionStack's format), State
// and Release types, resource IDs, references between resources, the dependency graph
// and the three-way diff. It does no I/O and never imports Temporal or client-go;
// its subpackages that must (engine/input reads user files, engine/generate reads
// stack files and runs external generators, engine/runtime talks to the
// infrastructure) say where in their docs.
//
// A Spec goes through these steps:
//
//  1. Package engine/input reads it from what a user gives, YAML or JSON, bounded
//     (size, UTF-8, aliases, nesting, numbers): a Spec, or plain Kubernetes
//     manifests that ManifestSpec turns into one (manifest.go). MarshalSpec writes
//     a Spec back and HashSpec names its content.
//  2. Spec.Validate reports every problem at once: duplicate or malformed IDs, unknown
//     types, dangling dependsOn and $kumo_path (or $kusion_path) references, dependency cycles.
//  3. Spec.Graph builds the dependency graph (package engine/dag) from dependsOn and
//     $kumo_path (or $kusion_path) references; apply walks it in order, destroy walks its Reverse.
//  4. Diff compares, per resource, what an apply would produce with what is live and
//     what was last recorded, giving a Create, Update, Delete or UnChanged Change.
//     ResolveRefs fills $kumo_path (or $kusion_path) references from live resources just before apply.
//
// Talking to the infrastructure is the job of the runtimes in engine/runtime.
package engine

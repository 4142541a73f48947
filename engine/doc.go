// Package engine is kumo's pure domain: the resource Spec (KusionStack's format), State
// and Release types, resource IDs, references between resources, the dependency graph
// and the three-way diff. It does no I/O and never imports Temporal or client-go;
// its subpackages that must (engine/generate reads stack files and runs external
// generators, engine/runtime talks to the infrastructure) say where in their docs.
//
// A Spec goes through these steps:
//
//  1. ParseSpec reads it from YAML or JSON (MarshalSpec writes it back, HashSpec names
//     its content). ReadInputs reads what `kumo apply -f` is given: a Spec, or plain
//     Kubernetes manifests that ManifestSpec turns into one (manifest.go). Every
//     reader of user input (these, and ParseYAML for configuration files) refuses
//     input over MaxInputSize, bytes that are not UTF-8, aliases that expand a
//     document past the limit, nesting deeper than MaxDepth and numbers JSON cannot
//     hold, naming the file, line and column (input.go, yamlinput.go).
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

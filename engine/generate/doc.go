// Package generate turns a stack (its app.yaml of AppConfigurations) and a
// workspace into a resource Spec.
//
// Besides engine/input (which reads user files), it is the part of engine that
// touches the outside world, and it keeps that at two edges: Load (files.go) reads project.yaml, stack.yaml and app.yaml
// into a Source, and ExecRunner (exec.go) runs external generators as processes.
// Generate itself reads no files: given a Source, a Workspace and a Runner, its
// output depends only on its input, so tests pass a Source and a fake Runner.
// ExecRunner runs only the generators a Trust allows (trust.go: by sha256 or
// directory, with a scrubbed environment), and Policy.Load reads only stacks
// under the worker's stack roots.
// Workspaces are stored in the backend and parsed here (ParseWorkspace) from
// bytes the caller read. Files are read, and their YAML parsed, by engine/input,
// as every user file is.
package generate

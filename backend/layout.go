package backend

import "strconv"

// The layout every driver holds, as slash-separated keys (a directory tree for
// backend/local, object keys under a prefix for backend/s3):
//
//	releases/<project>/<workspace>/<revision>.yaml            one engine.Release: a compressed
//	                                                          record naming its spec and state
//	                                                          chunks (format 2), or plain YAML
//	                                                          with both inline (format 1, older)
//	releases/<project>/<workspace>/<revision>.state/<h>.json  one StateEntry per resource of
//	                                                          a running release (<h> = sha256
//	                                                          of the resource ID)
//	releases/<project>/<workspace>/<revision>.state/preview.json
//	                                                          the running release's previews,
//	                                                          kept by a run that walks in the
//	                                                          task that previewed (store_previews.go)
//	releases/<project>/<workspace>/.latest                    a hint: the highest revision its
//	                                                          writer had created
//	releases/<project>/<workspace>/.floor                     the oldest revision kept (the release
//	                                                          history limit removed those under
//	                                                          it; none: 1), store_floor.go
//	releases/<project>/<workspace>/chunks/<sha256>            a chunk of a release's state,
//	                                                          compressed, named by the hash of
//	                                                          its bytes (store_chunks.go)
//	specs/<hash>.yaml                                         specs by content hash (compressed
//	                                                          JSON; older ones plain YAML)
//	workspaces/<name>.yaml                                    one engine.Workspace
//	runs/<run ID>/<part>.log                                  the parts of a run's log
//	drift/<project>/<workspace>/<time>_<run ID>.json          one drift check's report
//	audit/<day>/<time>_<entry ID>.json                        one audit log entry
//
// Every name is checked with ValidateName (or is a hex hash) before it becomes a
// key segment, so no caller-supplied value adds a '/' or reaches outside.
const (
	releasesDir   = "releases"
	specsDir      = "specs"
	workspacesDir = "workspaces"
	runsDir       = "runs"
	driftRoot     = "drift"
	jsonExt       = ".json"
	yamlExt       = ".yaml"
	stateExt      = ".state"
	logExt        = ".log"
	latestHint    = ".latest"
	floorMark     = ".floor"
)

func workspaceDir(project, workspace string) string {
	return releasesDir + "/" + project + "/" + workspace
}

func releaseKey(k ReleaseKey) string {
	return workspaceDir(k.Project, k.Workspace) + "/" + strconv.Itoa(k.Revision) + yamlExt
}

func hintKey(project, workspace string) string {
	return workspaceDir(project, workspace) + "/" + latestHint
}

func stateDir(k ReleaseKey) string {
	return workspaceDir(k.Project, k.Workspace) + "/" + strconv.Itoa(k.Revision) + stateExt
}

func specKey(hash string) string { return specsDir + "/" + hash + yamlExt }

func workspaceKey(name string) string { return workspacesDir + "/" + name + yamlExt }

func runDir(runID string) string { return runsDir + "/" + runID }

func runLogKey(runID, part string) string { return runDir(runID) + "/" + part + logExt }

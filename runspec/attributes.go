package runspec

// Search attribute names, for visibility queries (`KumoStatus = 'running'`).
// SearchAttributes says what each holds.
const (
	AttrProject    = "KumoProject"
	AttrStack      = "KumoStack"
	AttrWorkspace  = "KumoWorkspace"
	AttrOperation  = "KumoOperation"
	AttrRevision   = "KumoRevision"
	AttrStatus     = "KumoStatus"
	AttrDrifted    = "KumoDrifted"
	AttrDriftCount = "KumoDriftCount"
	AttrStartedBy  = "KumoStartedBy"
)

// AttributeType is the kind of value a search attribute holds, named as
// Temporal names its indexed value types, so a server's own words for them
// convert without a table.
type AttributeType string

const (
	Keyword AttributeType = "Keyword"
	Int     AttributeType = "Int"
	Bool    AttributeType = "Bool"
)

// SearchAttribute is a custom search attribute kumo files its runs under.
type SearchAttribute struct {
	Name string
	Type AttributeType
	// Holds says what a run's value is.
	Holds string
}

// SearchAttributes is every search attribute kumo sets, so runs are
// filterable (CLI, Web UI) by project, stack, workspace, operation, revision,
// status and drift. It is the one list: the workflows derive their typed keys
// from it, and the embedded server and `kumo temporal setup` register it.
var SearchAttributes = []SearchAttribute{
	{AttrProject, Keyword, "the project's name"},
	{AttrStack, Keyword, "the stack's name"},
	{AttrWorkspace, Keyword, "the workspace's name"},
	{AttrOperation, Keyword, "what the run does: generate, preview, apply, destroy, rollback, remediate or drift"},
	{AttrRevision, Int, "the release revision the run made or checked"},
	{AttrStatus, Keyword, "where the run is (a Status: running, awaiting-approval, ..., succeeded), kept current"},
	{AttrDrifted, Bool, "set by drift checks: whether any resource was not in sync"},
	{AttrDriftCount, Int, "set by drift checks: how many resources were not in sync"},
	{AttrStartedBy, Keyword, "who started the run: the subject kumo's frontend authenticated (it replaces any value a client sets), counted for the starter's quota of runs in flight"},
}

// LookupSearchAttribute finds name in SearchAttributes.
func LookupSearchAttribute(name string) (SearchAttribute, bool) {
	for _, a := range SearchAttributes {
		if a.Name == name {
			return a, true
		}
	}
	return SearchAttribute{}, false
}

// SQLVisibilityColumns is how many custom search attributes of each type one
// namespace can hold on Temporal's SQL visibility (the PostgreSQL, MySQL and
// SQLite schemas preallocate columns Keyword01..Keyword10, Int01..Int03,
// Bool01..Bool03, and three of each other type), the store a production
// cluster without Elasticsearch runs. SearchAttributes must fit within it;
// what kumo leaves free is the operator's.
var SQLVisibilityColumns = map[AttributeType]int{Keyword: 10, Int: 3, Bool: 3}

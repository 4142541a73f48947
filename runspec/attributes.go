package runspec

// Search attribute names: the workflows set them on every run, and the embedded
// server (and `kumo temporal setup`) registers them, so both read them from here.
const (
	AttrProject   = "KumoProject"
	AttrStack     = "KumoStack"
	AttrWorkspace = "KumoWorkspace"
	AttrOperation = "KumoOperation"
	AttrRevision  = "KumoRevision"
	// AttrStatus is where a run is (running, awaiting-approval, ..., succeeded), kept current.
	AttrStatus  = "KumoStatus"
	AttrDrifted = "KumoDrifted"
	// AttrDriftCount is how many resources a drift check found not in sync.
	AttrDriftCount = "KumoDriftCount"
)

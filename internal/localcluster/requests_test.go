package localcluster

import (
	"strings"
	"testing"
)

func TestParseRequests(t *testing.T) {
	text := `# HELP apiserver_request_total [STABLE] Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="APPLY",version="v1"} 7
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="APPLY",version="v1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="All",group="",resource="configmaps",scope="resource",subresource="",verb="APPLY",version="v1"} 4
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="LIST",version="v1"} 2
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="secrets",scope="resource",subresource="",verb="GET",version="v1"} 9
apiserver_request_duration_seconds_bucket{verb="GET",resource="configmaps",le="0.1"} 100
`
	got, err := parseRequests(strings.NewReader(text), []string{"configmaps"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "APPLY configmaps 10, APPLY configmaps (dry run) 4, LIST configmaps 2"; got.String() != want {
		t.Errorf("got %s, want %s", got, want)
	}
	all, err := parseRequests(strings.NewReader(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	if all["GET secrets"] != 9 {
		t.Errorf("every resource: %s, want GET secrets 9 among them", all)
	}
	later := Requests{"APPLY configmaps": 15, "APPLY configmaps (dry run)": 4, "LIST configmaps": 3, "GET configmaps": 1}
	if d, want := later.Since(got).String(), "APPLY configmaps 5, GET configmaps 1, LIST configmaps 1"; d != want {
		t.Errorf("since: %s, want %s", d, want)
	}
	if _, err := parseRequests(strings.NewReader(`apiserver_request_total{verb="GET"}`), nil); err == nil {
		t.Error("a series without a value: no error")
	}
}

func TestLabel(t *testing.T) {
	labels := `code="200",component="apiserver",dry_run="All",group="",resource="configmaps",scope="resource",subresource="",verb="APPLY",version="v1"`
	for name, want := range map[string]string{"resource": "configmaps", "verb": "APPLY", "dry_run": "All", "group": "", "code": "200", "missing": "", "source": ""} {
		if got := label(labels, name); got != want {
			t.Errorf("label %s = %q, want %q", name, got, want)
		}
	}
}

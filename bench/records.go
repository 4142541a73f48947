package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
)

// What a revision costs in storage, kumo's backend against Helm's release
// Secret for the same objects: issue 34's comparison, kept in the report.

// storedBytes is how many bytes the records of kumo's backend b under home
// hold (releases, specs and their chunks; run logs, workspaces and the
// Temporal database apart): what a revision adds to it is its cost. The
// driver's trash is emptied first, and what it writes aside is not counted:
// a run's state entries, cleared into the trash as it finished, were
// counted as the revision's for as long as the trash had not freed them,
// more the faster the finish.
func storedBytes(b backend.Backend, home string) (int64, error) {
	backend.Settle(b)
	var n int64
	for _, dir := range []string{"releases", "specs"} {
		err := filepath.WalkDir(filepath.Join(home, dir), func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case local.IsTemp(d.Name()) && d.IsDir():
				return fs.SkipDir
			case d.IsDir(), local.IsTemp(d.Name()), strings.HasSuffix(path, ".lock"):
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			n += fi.Size()
			return nil
		})
		if err != nil && !errorsIsNotExist(err) {
			return 0, err
		}
	}
	return n, nil
}

func errorsIsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// helmReleaseBytes is the size of the release Secret's payload (data.release:
// the release JSON, gzipped, base64-encoded, as Helm's storage driver writes
// it) of a Helm release of the same objects as spec, revision rev: a chart of
// one template, the rendered manifest, the values. A revision of Helm always
// stores all of this again, changed or not.
func helmReleaseBytes(ctx context.Context, spec *engine.Spec, rev int) (int64, error) {
	var manifest strings.Builder
	for _, r := range spec.Resources {
		doc, err := yaml.Marshal(r.Attributes)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", r.ID, err)
		}
		manifest.WriteString("---\n# Source: bench/templates/configmaps.yaml\n")
		manifest.Write(doc)
	}
	tmpl := []byte(`{{- range $i := until (int .Values.count) }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ printf "cm-%05d" $i }}
  namespace: {{ $.Release.Namespace }}
data:
  index: {{ $i | quote }}
{{- end }}
`)
	rel := &release.Release{
		Name:      "bench",
		Namespace: "bench",
		Version:   rev,
		Info:      &release.Info{Status: release.StatusDeployed, Description: "Upgrade complete"},
		Chart: &chart.Chart{
			Metadata:  &chart.Metadata{APIVersion: chart.APIVersionV2, Name: "bench", Version: "0.1.0"},
			Templates: []*chart.File{{Name: "templates/configmaps.yaml", Data: tmpl}},
			Values:    map[string]any{"count": len(spec.Resources)},
		},
		Config:   map[string]any{"count": len(spec.Resources)},
		Manifest: manifest.String(),
	}
	cs := fake.NewClientset()
	key := fmt.Sprintf("sh.helm.release.v1.%s.v%d", rel.Name, rev)
	if err := driver.NewSecrets(cs.CoreV1().Secrets("bench")).Create(key, rel); err != nil {
		return 0, fmt.Errorf("helm: store %s: %w", key, err)
	}
	sec, err := cs.CoreV1().Secrets("bench").Get(ctx, key, metav1.GetOptions{})
	if err != nil {
		return 0, fmt.Errorf("helm: read %s: %w", key, err)
	}
	return int64(len(sec.Data["release"])), nil
}

// oldReleaseBytes is what a release file of record format 1 (the whole
// release as YAML, before compact records) held for r: the "before" figure.
func oldReleaseBytes(r *engine.Release) (int64, error) {
	n, err := backend.RecordSize(r)
	return int64(n), err
}

// revisionBytes is what one revision costs in storage.
type revisionBytes struct {
	// stored: how much kumo's backend files grew; before: what record format
	// 1 wrote for the same revision (its release file, and its spec when new);
	// helm: Helm's release Secret payload for the same objects (0: no Helm
	// equivalent, a destroy).
	stored, before, helm int64
}

// revisionCost measures revision rev of project, made by a run of spec (nil:
// a destroy), which grew the backend under home from stored0 bytes.
func revisionCost(ctx context.Context, b backend.Backend, home, project string, rev int, spec *engine.Spec, stored0 int64) (revisionBytes, error) {
	var c revisionBytes
	stored, err := storedBytes(b, home)
	if err != nil {
		return c, err
	}
	c.stored = stored - stored0
	r, err := b.GetRelease(ctx, project, "default", rev)
	if err != nil {
		return c, err
	}
	if c.before, err = oldReleaseBytes(r); err != nil {
		return c, err
	}
	if rev == 1 && r.Spec != nil {
		n, err := backend.RecordSize(r.Spec)
		if err != nil {
			return c, err
		}
		c.before += int64(n)
	}
	if spec != nil {
		if c.helm, err = helmReleaseBytes(ctx, spec, rev); err != nil {
			return c, err
		}
	}
	return c, nil
}

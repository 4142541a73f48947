package release

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"sync"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/secretstore"
)

// withSecrets is desired with its secret-store references (ref:// values of
// a v1 Secret, engine.SecretRefsOf) replaced by the values read, on this
// worker, from the store the workspace configures (engine.ChooseSecretStore)
// with the worker's credentials. The values live only in the returned
// resource: the runtime applies it and the backend seals what is recorded;
// a preview's diff compares fingerprints and prints them masked. A reference
// that cannot be read is an error naming the resource, the field and the
// store, before anything of this resource is applied.
func (m *Manager) withSecrets(ctx context.Context, in Node, spec *specIndex, desired *engine.Resource) (*engine.Resource, error) {
	refs, err := engine.SecretRefsOf(desired)
	if err != nil {
		return nil, kindErr(ErrInvalid, err)
	}
	if len(refs) == 0 {
		return desired, nil
	}
	ws, err := m.storedWorkspace(ctx, in.Key.Workspace)
	if err != nil {
		return nil, err
	}
	var specStore any
	if spec != nil {
		specStore = spec.SecretStore
	}
	store, err := engine.ChooseSecretStore(specStore, ws)
	if err != nil {
		return nil, kindf(ErrInvalid, "%s: %s: %s: %v", desired.ID, refs[0].Path(), refs[0].Ref, err)
	}
	r, err := m.secretReaders.get(ctx, store.Provider)
	if err != nil {
		return nil, kindf(ErrInvalid, "%s: %s: secret store %s: %v", desired.ID, refs[0].Path(), store.Provider, err)
	}
	values, err := secretstore.Resolve(ctx, desired.ID, refs, store, r)
	if err != nil {
		if secretstore.Permanent(err) {
			return nil, kindErr(ErrInvalid, err)
		}
		return nil, err
	}
	out := engine.WithSecretValues(*desired, refs, values)
	return &out, nil
}

// withRecordedSecrets is desired (a spec resource with references) with
// each reference replaced by the value recorded for it when it was applied
// (recorded, as state keeps it: a stringData value is in data): what a
// drift check compares live with. The store is not asked: a drift check
// says whether the cluster still holds what was applied, and a value that
// changed in the store since is the next apply's to bring. A reference
// with no recorded value stays as written.
func withRecordedSecrets(desired, recorded *engine.Resource) *engine.Resource {
	refs, err := engine.SecretRefsOf(desired)
	if err != nil || len(refs) == 0 || recorded == nil {
		return desired
	}
	var keep []engine.SecretRefField
	var values [][]byte
	for _, f := range refs {
		if v, ok := recordedValue(recorded, f); ok {
			keep = append(keep, f)
			values = append(values, v)
		}
	}
	out := engine.WithSecretValues(*desired, keep, values)
	return &out
}

func recordedValue(r *engine.Resource, f engine.SecretRefField) ([]byte, bool) {
	if f.Field == "stringData" {
		if m, _ := r.Attributes["stringData"].(map[string]any); m != nil {
			if s, ok := m[f.Key].(string); ok {
				return []byte(s), true
			}
		}
	}
	m, _ := r.Attributes["data"].(map[string]any)
	s, ok := m[f.Key].(string)
	if !ok {
		return nil, false
	}
	b, err := base64.StdEncoding.DecodeString(s)
	return b, err == nil
}

// secretReaders keeps one reader per store a worker reads (the AWS SDK's
// configuration and credential cache, Vault's connections), opened with the
// worker's environment.
type secretReaders struct {
	mu      sync.Mutex
	readers map[string]secretstore.Reader
	env     secretstore.Env
}

func (s *secretReaders) get(ctx context.Context, p engine.SecretProvider) (secretstore.Reader, error) {
	key, _ := json.Marshal(p.Normalized())
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.readers[string(key)]; ok {
		return r, nil
	}
	env := s.env
	if env == nil {
		env = os.Getenv
	}
	r, err := secretstore.Open(ctx, p, env)
	if err != nil {
		return nil, err
	}
	if s.readers == nil {
		s.readers = map[string]secretstore.Reader{}
	}
	s.readers[string(key)] = r
	return r, nil
}

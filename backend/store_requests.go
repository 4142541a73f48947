package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Requests remember which run an idempotent request started (the HTTP
// API's POST runs with an Idempotency-Key), so that the request retried,
// by the same caller, starts none and gets the first run: across API
// processes and restarts, since they share the backend. One object per key,
// created create-only, so of two concurrent first requests exactly one
// claims it:
//
//	requests/<key>.json

// RequestRecord is one idempotent request and the run it started.
type RequestRecord struct {
	// Key names the request (a hash of who asked and their key: a name).
	Key string `json:"key"`
	// Fingerprint is a hash of what was asked: the same key with another
	// request is refused, not answered with the first run.
	Fingerprint string    `json:"fingerprint"`
	Created     time.Time `json:"created"`
	// RunID, WorkflowID and Operation are the run it started; empty while
	// the run is being started.
	RunID      string `json:"runID,omitempty"`
	WorkflowID string `json:"workflowID,omitempty"`
	Operation  string `json:"operation,omitempty"`
	// Project and Workspace are the run's.
	Project   string `json:"project,omitempty"`
	Workspace string `json:"workspace,omitempty"`
}

func requestKey(key string) string { return "requests/" + key + ".json" }

// ClaimRequest records r unless a request with r.Key was recorded before;
// then it returns that record and an error wrapping ErrExists.
func (s *Store) ClaimRequest(ctx context.Context, r RequestRecord) (RequestRecord, error) {
	if err := ValidateName("request", r.Key); err != nil {
		return RequestRecord{}, err
	}
	data, err := json.Marshal(r)
	if err != nil {
		return RequestRecord{}, err
	}
	_, err = s.write(ctx, requestKey(r.Key), data, Condition{CreateOnly: true})
	if errors.Is(err, ErrExists) {
		prior, gerr := s.GetRequest(ctx, r.Key)
		if gerr != nil {
			return RequestRecord{}, gerr
		}
		return prior, fmt.Errorf("request %s: %w", r.Key, ErrExists)
	}
	if err != nil {
		return RequestRecord{}, fmt.Errorf("request %s: %w", r.Key, err)
	}
	return r, nil
}

// GetRequest returns the record of request key, or an error wrapping
// ErrNotFound.
func (s *Store) GetRequest(ctx context.Context, key string) (RequestRecord, error) {
	if err := ValidateName("request", key); err != nil {
		return RequestRecord{}, err
	}
	data, _, err := s.read(ctx, requestKey(key), "request "+key)
	if err != nil {
		return RequestRecord{}, err
	}
	var r RequestRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return RequestRecord{}, fmt.Errorf("request %s: %w", key, err)
	}
	return r, nil
}

// PutRequest replaces the record of a claimed request (with its run).
func (s *Store) PutRequest(ctx context.Context, r RequestRecord) error {
	if err := ValidateName("request", r.Key); err != nil {
		return err
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if _, err := s.write(ctx, requestKey(r.Key), data, Condition{}); err != nil {
		return fmt.Errorf("request %s: %w", r.Key, err)
	}
	return nil
}

// DeleteRequest forgets a claimed request whose run did not start, so that
// it can be retried.
func (s *Store) DeleteRequest(ctx context.Context, key string) error {
	if err := ValidateName("request", key); err != nil {
		return err
	}
	err := s.d.Delete(ctx, requestKey(key))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("request %s: %w", key, err)
	}
	return nil
}

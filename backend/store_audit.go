package backend

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The audit log is append-only and written by every kumo server, worker and
// client sharing the backend, so it is one object per entry, each written
// create-only under a key no other writer picks: no read-modify-write of a
// shared object, hence no lost entry when writers race. Keys sort by time:
//
//	audit/<day, 2006-01-02>/<time, UnixNano, 20 digits>_<entry ID>.json
//
// A day's folder lets a listing since a time skip the days before it.

// AuditResult says whether an audited action was allowed.
type AuditResult string

const (
	AuditAllowed AuditResult = "allowed"
	AuditDenied  AuditResult = "denied"
)

// AuditEntry is one accepted or denied action.
type AuditEntry struct {
	// ID names the entry; appending an entry with an ID already appended at
	// the same Time keeps the first (a retried write adds nothing). Empty: a
	// random one.
	ID   string    `json:"id"`
	Time time.Time `json:"time"`
	// Subject is who asked (the authenticated subject, or a name nobody
	// vouched for, then Verified is false).
	Subject  string `json:"subject"`
	Verified bool   `json:"verified"`
	// Action is what was asked ("start apply", "approve", "cancel",
	// "workspace update", ...).
	Action    string `json:"action"`
	Project   string `json:"project,omitempty"`
	Workspace string `json:"workspace,omitempty"`
	// Target names what the action was on (a workflow ID, a workspace, a
	// schedule, a token).
	Target string      `json:"target,omitempty"`
	Result AuditResult `json:"result"`
	Reason string      `json:"reason,omitempty"`
}

// AuditFilter selects audit entries; zero fields select all.
type AuditFilter struct {
	Project   string
	Workspace string
	// Since keeps entries at or after it.
	Since time.Time
}

const (
	auditRoot = "audit"
	// auditDay names an entry's day folder (UTC).
	auditDay = "2006-01-02"
	// maxAuditField bounds each text field, so one entry stays small.
	maxAuditField = 4096
)

func auditKey(e AuditEntry) string {
	t := e.Time.UTC()
	return fmt.Sprintf("%s/%s/%020d_%s%s", auditRoot, t.Format(auditDay), t.UnixNano(), e.ID, jsonExt)
}

// checkAudit checks an entry about to be appended.
func checkAudit(e *AuditEntry) error {
	if e.ID == "" {
		var b [12]byte
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		e.ID = hex.EncodeToString(b[:])
	}
	if err := ValidateName("audit entry", e.ID); err != nil {
		return err
	}
	switch {
	case e.Time.IsZero() || e.Time.UnixNano() < 0:
		return errors.New("no time")
	case e.Subject == "":
		return errors.New("no subject")
	case e.Action == "":
		return errors.New("no action")
	case e.Result != AuditAllowed && e.Result != AuditDenied:
		return fmt.Errorf("result %q: want %s or %s", e.Result, AuditAllowed, AuditDenied)
	}
	for name, v := range map[string]string{"subject": e.Subject, "action": e.Action, "project": e.Project,
		"workspace": e.Workspace, "target": e.Target, "reason": e.Reason} {
		if len(v) > maxAuditField {
			return fmt.Errorf("%s is longer than %d bytes", name, maxAuditField)
		}
	}
	return nil
}

// AppendAudit appends one entry to the audit log.
func (s *Store) AppendAudit(ctx context.Context, e AuditEntry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkAudit(&e); err != nil {
		return fmt.Errorf("append audit entry %s %s by %s: %w", e.Action, e.Target, e.Subject, err)
	}
	e.Time = e.Time.UTC()
	data, err := encodeJSON(e)
	if err != nil {
		return fmt.Errorf("append audit entry %s: %w", e.ID, err)
	}
	_, err = s.write(ctx, auditKey(e), data, Condition{CreateOnly: true})
	if errors.Is(err, ErrExists) {
		return nil // this entry was appended already (a retry)
	}
	if err != nil {
		return fmt.Errorf("append audit entry %s %s by %s: %w", e.Action, e.Target, e.Subject, err)
	}
	return nil
}

// ListAudit returns the entries f selects, oldest first.
func (s *Store) ListAudit(ctx context.Context, f AuditFilter) ([]AuditEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for kind, name := range map[string]string{"project": f.Project, "workspace": f.Workspace} {
		if name != "" {
			if err := ValidateName(kind, name); err != nil {
				return nil, fmt.Errorf("list audit: %w", err)
			}
		}
	}
	days, err := s.d.List(ctx, auditRoot)
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	since := f.Since.UTC()
	var keys []string
	for _, d := range days {
		day, err := time.Parse(auditDay, d.Name)
		if !d.Dir || err != nil || (!f.Since.IsZero() && day.Add(24*time.Hour).Before(since)) {
			continue
		}
		ents, err := s.d.List(ctx, auditRoot+"/"+d.Name)
		if err != nil {
			return nil, fmt.Errorf("list audit of %s: %w", d.Name, err)
		}
		for _, e := range ents {
			stamp, rest, ok := strings.Cut(e.Name, "_")
			nanos, err := strconv.ParseInt(stamp, 10, 64)
			if e.Dir || !ok || err != nil || !strings.HasSuffix(rest, jsonExt) {
				continue
			}
			if !f.Since.IsZero() && time.Unix(0, nanos).Before(since) {
				continue
			}
			keys = append(keys, auditRoot+"/"+d.Name+"/"+e.Name)
		}
	}
	slices.Sort(keys)
	out := make([]AuditEntry, len(keys))
	err = forEach(ctx, len(keys), func(ctx context.Context, i int) error {
		data, _, err := s.read(ctx, keys[i], "audit entry "+keys[i])
		if err != nil {
			return err
		}
		return decodeJSON(data, &out[i])
	})
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	return slices.DeleteFunc(out, func(e AuditEntry) bool {
		return (f.Project != "" && e.Project != f.Project) || (f.Workspace != "" && e.Workspace != f.Workspace)
	}), nil
}

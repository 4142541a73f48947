package tfhttp

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
)

// lockInfo is the body of LOCK and UNLOCK, and of a 423/409 answer naming the
// holder: the fields of Terraform's lock info.
type lockInfo struct {
	ID        string    `json:"ID"`
	Operation string    `json:"Operation"`
	Info      string    `json:"Info"`
	Who       string    `json:"Who"`
	Version   string    `json:"Version"`
	Created   time.Time `json:"Created"`
	Path      string    `json:"Path"`
}

// kumoOperation marks the locks kumo takes (only those are ever broken).
const kumoOperation = "kumo-write"

func newLockID() string {
	b := make([]byte, 16)
	_, _ = crand.Read(b)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func (d *Driver) lockAddress(name string) string { return d.address(name) + d.o.LockSuffix }

// lock takes the lock of document name, waiting (with backoff) while another
// holds it, until ctx ends. It returns the lock ID to present and to unlock with.
func (d *Driver) lock(ctx context.Context, name, path string) (string, error) {
	info := lockInfo{ID: newLockID(), Operation: kumoOperation, Info: "kumo backend write", Who: d.who,
		Version: "kumo", Created: time.Now().UTC(), Path: path}
	body, err := json.Marshal(info)
	if err != nil {
		return "", err
	}
	addr := d.lockAddress(name)
	wait := 5 * time.Millisecond
	for {
		status, data, err := d.do(ctx, d.o.LockMethod, addr, body)
		if err != nil {
			return "", fmt.Errorf("lock %s: %w", addr, err)
		}
		switch status {
		case http.StatusOK, http.StatusCreated, http.StatusNoContent:
			return info.ID, nil
		case http.StatusLocked, http.StatusConflict:
			var holder lockInfo
			_ = json.Unmarshal(data, &holder)
			if holder.ID == info.ID {
				return info.ID, nil // a retried LOCK whose first answer was lost
			}
			if holder.Operation == kumoOperation && !holder.Created.IsZero() && time.Since(holder.Created) > StaleLock {
				// A kumo that died holding it: break it.
				if err := d.unlock(ctx, name, holder.ID); err != nil {
					return "", fmt.Errorf("break the stale lock of %s (held by %s since %s): %w", addr, holder.Who, holder.Created.Format(time.RFC3339), err)
				}
				continue
			}
			select {
			case <-ctx.Done():
				who := strings.TrimSpace(holder.Who + " " + holder.Operation)
				if who == "" {
					who = "another client"
				}
				return "", fmt.Errorf("lock %s: held by %s: %w", addr, who, ctx.Err())
			case <-time.After(wait/2 + rand.N(wait)):
			}
			wait = min(2*wait, 250*time.Millisecond)
		default:
			return "", &statusError{method: d.o.LockMethod, url: addr, status: status, body: snippet(data)}
		}
	}
}

// unlock releases the lock id of document name. It is called with a context
// of its own (see release): a canceled caller must not leave the lock behind.
func (d *Driver) unlock(ctx context.Context, name, id string) error {
	body, err := json.Marshal(lockInfo{ID: id})
	if err != nil {
		return err
	}
	addr := d.lockAddress(name)
	status, data, err := d.do(ctx, d.o.UnlockMethod, addr, body)
	if err != nil {
		return fmt.Errorf("unlock %s: %w", addr, err)
	}
	if status != http.StatusOK && status != http.StatusNoContent {
		return &statusError{method: d.o.UnlockMethod, url: addr, status: status, body: snippet(data)}
	}
	return nil
}

// withLock runs fn holding the lock of document name, and releases it
// however fn ends; a failed unlock is reported unless fn failed first.
func (d *Driver) withLock(ctx context.Context, name, path string, fn func(id string) error) (err error) {
	id, err := d.lock(ctx, name, path)
	if err != nil {
		return err
	}
	defer func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if uerr := d.unlock(uctx, name, id); uerr != nil && err == nil {
			err = uerr
		}
	}()
	return fn(id)
}

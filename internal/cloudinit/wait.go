package cloudinit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/guestcheck/guestcheck/internal/fs"
)

// ErrInsideCloudInit is returned by Wait when guestcheck was started by
// cloud-init: cloud-init cannot finish before its child returns, so
// waiting would only ever time out.
var ErrInsideCloudInit = errors.New("refusing to wait for cloud-init from inside cloud-init")

// DefaultPoll is Wait's polling interval when none is given.
const DefaultPoll = time.Second

// Wait polls status.json and result.json on the live system until
// cloud-init is done or disabled (or not installed), or ctx ends, which
// bounds the wait. It returns the last state and whether it gave up
// because ctx ended. Unlike `cloud-init status --wait` it does not consult
// systemd units, so a crashed stage is waited on until the deadline; the
// check reports the failed unit afterwards. A status.json that stays
// unreadable is returned as the error at the deadline; a broken
// result.json still counts as existing, as it does for cloud-init.
func Wait(ctx context.Context, root *fs.Root, poll time.Duration) (*State, bool, error) {
	if inside, why := Inside(root); inside {
		return nil, false, fmt.Errorf("%w (started by %s)", ErrInsideCloudInit, why)
	}
	if poll <= 0 {
		poll = DefaultPoll
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		snap := Read(root, ReadOptions{Live: true})
		var st *State
		var err error
		if snap.Usable() {
			st = snap.State()
			if !st.Installed || st.Running == Done || st.Running == Disabled {
				return st, false, nil
			}
		} else {
			err = snap.StatusErr
		}
		// cloud-init replaces its files atomically, so a broken file is
		// not a half-written one; still, the next stage rewrites
		// status.json, so keep polling rather than give up early.
		select {
		case <-ctx.Done():
			return st, true, err
		case <-t.C:
		}
	}
}

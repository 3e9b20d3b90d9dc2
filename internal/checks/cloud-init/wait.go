package cloudinit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
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
	if inside, why := Inside(nil, root); inside {
		return nil, false, fmt.Errorf("%w (started by %s)", ErrInsideCloudInit, why)
	}
	if poll <= 0 {
		poll = DefaultPoll
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		st, done, err := waitOutcome(Read(root, ReadOptions{Live: true}))
		if done {
			return st, false, nil
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

// WaitBeforeChecks is --wait: it waits up to d (and no longer than ctx)
// for cloud-init to finish before the checks run. It never waits from
// inside cloud-init, which would wait for itself, and only on the running
// system. The checks run afterwards either way, so it returns no error,
// only a notice for the user when the wait did not end in a finished
// cloud-init ("" when there is nothing to say).
func WaitBeforeChecks(ctx context.Context, env *runner.Env, d time.Duration) string {
	if !env.Live {
		return "--wait ignored: " + env.NotLiveReason()
	}
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	st, timedOut, err := Wait(wctx, env.Root, 0)
	return waitNotice(d, st, timedOut, err)
}

// waitOutcome judges one poll: the state when status.json is usable, and
// whether it ends the wait (cloud-init done, disabled or not installed);
// else the file's error.
func waitOutcome(snap *Snapshot) (st *State, done bool, err error) {
	if !snap.Usable() {
		return nil, false, snap.StatusErr
	}
	st = snap.State()
	return st, !st.Installed || st.Running == Done || st.Running == Disabled, nil
}

// waitNotice is what the user is told about a wait of d that ended with
// st, timedOut and err; "" when cloud-init finished.
func waitNotice(d time.Duration, st *State, timedOut bool, err error) string {
	switch {
	case errors.Is(err, ErrInsideCloudInit):
		return fmt.Sprintf("not waiting: %v", err)
	case timedOut && st != nil:
		return fmt.Sprintf("cloud-init is still %q after --wait %s; checking now", st.ExtendedStatus(), d)
	case timedOut:
		return fmt.Sprintf("cloud-init state unknown after --wait %s (%v); checking now", d, err)
	}
	return ""
}

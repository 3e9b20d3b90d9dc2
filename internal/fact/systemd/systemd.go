// Package systemd answers unit-state questions through systemd's D-Bus API
// (go-systemd's dbus package), reads this boot's journal through systemd's
// journalctl (journald has no D-Bus query interface), and says clearly when
// there is no systemd to ask, so that checks can report skip instead of
// error.
package systemd

import (
	"context"
	"errors"
)

// ErrNotRunning is wrapped by every error that means "there is no systemd
// manager to ask here" (not booted with systemd, no bus, an image root).
var ErrNotRunning = errors.New("systemd is not running")

// UnitState is the state of one unit as systemctl shows it.
type UnitState struct {
	Name          string `json:"name"`
	LoadState     string `json:"load_state"`      // loaded, not-found, masked, error, bad-setting
	ActiveState   string `json:"active_state"`    // active, inactive, failed, activating, deactivating, reloading
	SubState      string `json:"sub_state"`       // running, exited, dead, failed, ...
	UnitFileState string `json:"unit_file_state"` // enabled, disabled, static, masked, ... ("" when not found)
	// NRestarts and MainPID are filled for loaded .service units only; a
	// restart loop or a dead main process is what "active" hides.
	NRestarts uint32 `json:"n_restarts,omitempty"`
	MainPID   uint32 `json:"main_pid,omitempty"`
}

// Found reports whether the unit exists.
func (u UnitState) Found() bool { return u.LoadState != "" && u.LoadState != "not-found" }

// Failed reports whether the unit is in the failed state.
func (u UnitState) Failed() bool { return u.ActiveState == "failed" }

// Manager is what checks use; tests supply fakes.
type Manager interface {
	// Units returns the state of each named unit, in order. A unit that
	// does not exist is not an error: its LoadState is "not-found".
	Units(ctx context.Context, names ...string) ([]UnitState, error)
}

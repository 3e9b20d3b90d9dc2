// Package drill is guestcheck freeze-drill: it freezes and thaws the
// filesystems of VMs the operator names through their guest agents, as a
// platform's snapshot does (guest-fsfreeze-freeze, -status, -thaw), times
// each step, reads the fsfreeze hook's log and compares what was frozen
// with the guest's own fs-freeze prediction. A guard process in its own
// session (guard.go) thaws the guest when the drill dies or overruns, so
// a drill never leaves a guest frozen.
package drill

import (
	"slices"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/fleet"
)

// SchemaVersion is the version of the drill's JSON document
// (schema/freeze-drill-v1.schema.json). Changes within a version are
// additive.
const SchemaVersion = 1

// Status is a VM's drill verdict.
type Status string

// The statuses, best first. Unknown: the drill could not freeze (the
// agent is unreachable, blocks the freeze, or the guest is frozen
// already); nothing is known to be broken.
const (
	Pass    Status = "pass"
	Warn    Status = "warn"
	Unknown Status = "unknown"
	Fail    Status = "fail"
)

// Statuses lists every status, best first.
var Statuses = []Status{Pass, Warn, Unknown, Fail}

// Worse reports whether s is worse than o.
func (s Status) Worse(o Status) bool { return slices.Index(Statuses, s) > slices.Index(Statuses, o) }

// Result is one drill of one or more VMs: what the JSON output is.
type Result struct {
	SchemaVersion int       `json:"schema_version" schema:"req,const=1"`
	Tool          string    `json:"tool" schema:"req,const=guestcheck freeze-drill"`
	Version       string    `json:"version" schema:"req,nonempty"`
	Host          string    `json:"host" schema:"req" doc:"the hypervisor host's name"`
	StartedAt     time.Time `json:"started_at" schema:"req"`
	DurationMS    int64     `json:"duration_ms" schema:"req,min=0"`
	DeadlineMS    int64     `json:"deadline_ms" schema:"req,min=1" doc:"the platform's freeze deadline the drill judged against (--deadline)"`
	Status        Status    `json:"status" schema:"req" doc:"the worst VM status; at least unknown when a source could not be read or a named VM was not found"`
	// SourceErrors are sources that could not be listed, and names that
	// matched no VM.
	SourceErrors []fleet.SourceError `json:"source_errors,omitempty" doc:"sources that could not list their VMs, and --name values no VM has"`
	VMs          []VM                `json:"vms" schema:"req" doc:"every VM drilled, in the order named"`
}

// VM is one VM's drill.
type VM struct {
	Name   string `json:"name" schema:"req,nonempty" doc:"libvirt domain, --agent-socket NAME, Proxmox VMID"`
	Source string `json:"source" schema:"req" doc:"libvirt, socket or proxmox"`
	Status Status `json:"status" schema:"req"`
	// Reason is one line: what went wrong, or what was frozen.
	Reason string `json:"reason" schema:"req,nonempty" doc:"one line: what was frozen and how long it took, or why the drill failed or could not run"`
	// Fix says what to do about a status worse than pass.
	Fix          string `json:"fix,omitempty" doc:"what to do, for a status worse than pass"`
	AgentVersion string `json:"agent_version,omitempty" doc:"the guest agent's version from guest-info"`
	// Froze is true once guest-fsfreeze-freeze succeeded.
	Froze bool `json:"froze" doc:"whether guest-fsfreeze-freeze succeeded"`
	// FrozenCount is the freeze's answer: how many filesystems it froze.
	FrozenCount int `json:"frozen_count" schema:"req,min=0" doc:"guest-fsfreeze-freeze's answer: the filesystems frozen"`
	// ThawedCount is the thaw's answer.
	ThawedCount int `json:"thawed_count" schema:"req,min=0" doc:"guest-fsfreeze-thaw's answer: the filesystems thawed"`
	// StatusFrozen is guest-fsfreeze-status while frozen.
	StatusFrozen string `json:"status_while_frozen,omitempty" doc:"guest-fsfreeze-status between the freeze and the thaw"`
	// ThawedBy says who thawed: the drill, or its guard.
	ThawedBy string `json:"thawed_by,omitempty" doc:"drill, or guard when the drill could not thaw and its guard did"`
	// FreezeMS, FrozenMS and ThawMS are the freeze call's time, the time
	// from the freeze's answer to the thaw's, and the thaw call's time.
	FreezeMS int64 `json:"freeze_ms" schema:"req,min=0" doc:"guest-fsfreeze-freeze's time, hooks included"`
	FrozenMS int64 `json:"frozen_ms" schema:"req,min=0" doc:"from the freeze's answer to the thaw's"`
	ThawMS   int64 `json:"thaw_ms" schema:"req,min=0" doc:"guest-fsfreeze-thaw's time, hooks included"`
	// FSBefore and FSAfter are guest-get-fsinfo before and after.
	FSBefore []FS `json:"fs_before" schema:"req" doc:"guest-get-fsinfo before the freeze"`
	FSAfter  []FS `json:"fs_after" schema:"req" doc:"guest-get-fsinfo after the thaw"`
	// Hook is what the fsfreeze hook's log says of this drill.
	Hook Hook `json:"hook" schema:"req"`
	// Prediction is the guest's own fs-freeze prediction, compared.
	Prediction Prediction `json:"prediction" schema:"req"`
	DurationMS int64      `json:"duration_ms" schema:"req,min=0"`
}

// FS is one filesystem of guest-get-fsinfo.
type FS struct {
	Mountpoint string `json:"mountpoint" schema:"req,nonempty"`
	Type       string `json:"type" schema:"req"`
	Name       string `json:"name" schema:"req" doc:"the device (sda1, dm-0)"`
}

// Hook states.
const (
	HookRan     = "ran"
	HookFailed  = "failed"
	HookSilent  = "silent"
	HookUnknown = "unknown"
)

// Hook is the evidence of qemu-ga's fsfreeze hook.
type Hook struct {
	State string `json:"state" schema:"req" doc:"ran (its log has lines from this drill), failed (a script exited non-zero), silent (no log lines from this drill) or unknown (the log could not be read)"`
	// Log is the log file read.
	Log string `json:"log,omitempty" doc:"the hook's log file in the guest"`
	// Why says why the state is unknown or silent.
	Why string `json:"why,omitempty" doc:"why the state is unknown or silent"`
	// Scripts are the hook scripts the log names, in order.
	Scripts []HookScript `json:"scripts,omitempty" doc:"each script the log shows run, with its result"`
}

// HookScript is one run of a script of fsfreeze-hook.d.
type HookScript struct {
	Path   string `json:"path" schema:"req,nonempty"`
	Action string `json:"action" schema:"req" doc:"freeze or thaw"`
	// Result is "ok", "exit N", or "no result" when the log shows the
	// start alone.
	Result string `json:"result" schema:"req" doc:"ok, exit N, or no result when the log shows it start only"`
}

// Prediction states.
const (
	Agree       = "agree"
	Disagree    = "disagree"
	NotCompared = "not compared"
)

// Prediction is the guest's fs-freeze check against the drill.
type Prediction struct {
	State string `json:"state" schema:"req" doc:"agree, disagree or not compared"`
	// Predicted is the check's freeze order (fs-freeze-list-ok's
	// detail.freeze_order).
	Predicted []string `json:"predicted,omitempty" doc:"the mount points guestcheck in the guest says qemu-ga freezes"`
	Why       string   `json:"why,omitempty" doc:"what disagrees, or why nothing was compared"`
}

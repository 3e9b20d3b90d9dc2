package cloudinit

import (
	"sort"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/parse/cloudinitstatus"
)

// Running is cloud-init's RunningStatus.
type Running string

// The running states, worded as cloud-init words them.
const (
	NotStarted Running = "not started"
	IsRunning  Running = "running"
	Done       Running = "done"
	Disabled   Running = "disabled"
)

// Condition is cloud-init's ConditionStatus.
type Condition string

// The conditions, worded as cloud-init words them.
const (
	Healthy  Condition = "healthy"
	Degraded Condition = "degraded"
	Errored  Condition = "error"
)

// SystemdFailureMessage is the error cloud-init appends when a unit of its
// own failed while status.json still says running.
const SystemdFailureMessage = "Failed due to systemd unit failure. Ensure all cloud-init " +
	"services are enabled, and check 'systemctl' or 'journalctl' for more information."

// UnitNames returns the units cloud-init's status consults, in its order
// (cmd/status.py systemd_failed); a unit missing on this release (e.g.
// cloud-init-main before 24.3) is skipped.
func UnitNames() []string {
	return []string{
		"cloud-final.service",
		"cloud-config.service",
		"cloud-init-network.service",
		"cloud-init-local.service",
		"cloud-init-main.service",
	}
}

// Inputs are everything State is computed from. Read fills them from a
// root; tests build them directly.
type Inputs struct {
	// Installed is false when nothing of cloud-init is present.
	Installed bool
	// Boot is the boot status code.
	Boot BootStatus
	// Status is status.json; nil when the file does not exist.
	Status *cloudinitstatus.StatusFile
	// ResultExists: result.json exists (cloud-init only tests existence).
	ResultExists bool
	// Result is result.json when it parsed; nil otherwise.
	Result *cloudinitstatus.ResultFile
	// Units are cloud-init's systemd units; nil when systemd cannot be
	// asked, which skips the unit-failure rule as cloud-init does without
	// systemd.
	Units []systemd.UnitState
	// Clock relates uptime and wall time for this boot.
	Clock BootClock
	// BootFinished is /var/lib/cloud/instance/boot-finished, if present.
	BootFinished *FileFacts
	// DataResult is /var/lib/cloud/data/result.json, if present.
	DataResult *FileFacts
}

// FileFacts describes a persistent file whose age matters.
type FileFacts struct {
	// Path is the guest path.
	Path string
	// ModTime is the file's modification time.
	ModTime time.Time
	// Content is the parsed boot-finished (nil for other files or when it
	// did not parse; ParseErr says why).
	Content  *cloudinitstatus.BootFinished
	ParseErr error
}

// StageError is one unrecoverable error with the stage that recorded it.
type StageError struct {
	Stage   string
	Message string
}

// RecoverableError is one message cloud-init logged at a warning level or
// above during a stage without failing it.
type RecoverableError struct {
	Level   string
	Stage   string
	Message string
}

// StageTimes is one stage's start and finish, raw and as wall time.
type StageTimes struct {
	Name                    string
	Start, Finished         cloudinitstatus.Timestamp
	StartWall, FinishedWall time.Time // zero when unknown
}

// Leftover is a file from an earlier boot that could be mistaken for this
// boot's result.
type Leftover struct {
	Path   string
	Reason string
}

// State is cloud-init's status for this boot, computed the way `cloud-init
// status --long` computes it, plus the facts guestcheck adds.
type State struct {
	Installed bool
	Running   Running
	Condition Condition
	Boot      BootStatus
	// Datasource is normalised as cloud-init does ("DataSourceNoCloud
	// [seed=...]" becomes "nocloud"); DatasourceRaw is as written.
	Datasource    string
	DatasourceRaw string
	// Stage is the stage running now, "" when none.
	Stage string
	// Detail is cloud-init's "detail" line.
	Detail string
	// Errors are in cloud-init's order (stages sorted by name), without
	// the systemd message, which SystemdFailure stands for.
	Errors []StageError
	// Recoverable is sorted by level, then in cloud-init's stage order.
	Recoverable []RecoverableError
	// SystemdFailure: status.json said running but a cloud-init unit
	// failed or is not enabled, so cloud-init reports "error - done".
	SystemdFailure bool
	// Stages are in boot order.
	Stages []StageTimes
	// LatestEvent is the newest start/finish as written (cloud-init's
	// latest_event); LastUpdate is it as wall time (zero when unknown).
	LatestEvent cloudinitstatus.Timestamp
	LastUpdate  time.Time
	// Encoding is how status.json's timestamps are written.
	Encoding cloudinitstatus.TimeEncoding
	// StatusStale: status.json exists but its timestamps prove it was
	// written during an earlier boot, so it says nothing about this one.
	StatusStale bool
	// Leftovers are results from an earlier boot (only looked for when
	// status.json says nothing about this boot).
	Leftovers []Leftover
	// Clock is the boot clock used.
	Clock BootClock
}

// NormalizeDatasource lower-cases the datasource's first word and drops
// the "datasource" prefix, as cloud-init's get_datasource does.
func NormalizeDatasource(raw string) string {
	ds, _, _ := strings.Cut(raw, " ")
	return strings.ReplaceAll(strings.ToLower(ds), "datasource", "")
}

// Compute derives the state from its inputs.
func Compute(in Inputs) *State {
	s := &State{Installed: in.Installed, Boot: in.Boot, Condition: Healthy, Clock: in.Clock}
	sf := in.Status
	if sf == nil {
		sf = &cloudinitstatus.StatusFile{}
	}
	s.DatasourceRaw = sf.Datasource
	s.Datasource = NormalizeDatasource(sf.Datasource)
	s.Stage = sf.Stage
	switch {
	case sf.Datasource != "":
		s.Detail = sf.Datasource
	case sf.Stage != "":
		s.Detail = "Running in stage: " + sf.Stage
	default:
		s.Detail = in.Boot.Reason
	}

	levels := map[string]bool{}
	for _, st := range sf.Stages { // sorted by name: cloud-init's order
		for _, e := range st.Errors {
			s.Errors = append(s.Errors, StageError{Stage: st.Name, Message: e})
		}
		for lvl := range st.RecoverableErrors {
			levels[lvl] = true
		}
		for _, ts := range []cloudinitstatus.Timestamp{st.Start, st.Finished} {
			if ts.Set && ts.Raw > s.LatestEvent.Raw {
				s.LatestEvent = ts
			}
		}
	}
	for _, lvl := range sortedKeys(levels) {
		for _, st := range sf.Stages {
			for _, m := range st.RecoverableErrors[lvl] {
				s.Recoverable = append(s.Recoverable, RecoverableError{Level: lvl, Stage: st.Name, Message: m})
			}
		}
	}
	s.Stages = stageTimes(sf.Stages, in.Clock)
	s.Encoding = s.LatestEvent.Encoding()
	s.LastUpdate, _ = in.Clock.Wall(s.LatestEvent)

	switch {
	case len(s.Errors) > 0:
		s.Condition = Errored
	case len(s.Recoverable) > 0:
		s.Condition = Degraded
	}
	switch {
	case in.Boot.Code.Disabled():
		s.Running = Disabled
	case in.Status != nil && !in.ResultExists:
		s.Running = IsRunning
	case s.LatestEvent.Raw > 0:
		s.Running = Done
	default:
		s.Running = NotStarted
	}
	if s.Running == IsRunning && in.Units != nil && unitsFailed(in.Units) {
		s.Running, s.Condition, s.SystemdFailure = Done, Errored, true
		s.Detail = "Failed due to systemd unit failure"
	}

	s.StatusStale = in.Status != nil && statusFromEarlierBoot(s.LatestEvent, in.Clock)
	if in.Status == nil || s.StatusStale {
		s.Leftovers = leftovers(in)
	}
	return s
}

// statusFromEarlierBoot: an uptime-encoded time beyond the current uptime,
// or an epoch time before this boot, was written during an earlier boot.
// The uptime rule holds whatever the wall clock did.
func statusFromEarlierBoot(latest cloudinitstatus.Timestamp, c BootClock) bool {
	switch latest.Encoding() {
	case cloudinitstatus.EncodingUptime:
		return c.UptimeKnown && seconds(latest.Raw) > c.Uptime+staleSlack
	case cloudinitstatus.EncodingEpoch:
		return c.BeforeBoot(epochTime(latest.Raw))
	}
	return false
}

func leftovers(in Inputs) []Leftover {
	var out []Leftover
	if bf := in.BootFinished; bf != nil {
		switch {
		case bf.Content != nil && bf.Content.UptimeKnown && in.Clock.UptimeKnown &&
			bf.Content.Uptime > in.Clock.Uptime+staleSlack:
			out = append(out, Leftover{bf.Path, "written at uptime " + fmtDur(bf.Content.Uptime) +
				", but this boot has been up only " + fmtDur(in.Clock.Uptime)})
		case in.Clock.BeforeBoot(bf.ModTime):
			out = append(out, Leftover{bf.Path, "modified " + fmtTime(bf.ModTime) +
				", before this boot at " + fmtTime(in.Clock.BootTime)})
		}
	}
	if dr := in.DataResult; dr != nil && in.Clock.BeforeBoot(dr.ModTime) {
		out = append(out, Leftover{dr.Path, "modified " + fmtTime(dr.ModTime) +
			", before this boot at " + fmtTime(in.Clock.BootTime)})
	}
	return out
}

// unitsFailed mirrors cloud-init's systemd_failed: walk the units in
// order; a disabled or failed unit is a failure, a cleanly exited one is
// passed over, and any other (still starting, running) ends the walk with
// no failure. Units that do not exist, or whose unit-file state is unknown,
// are skipped rather than counted as disabled, so that older releases
// without cloud-init-main or cloud-init-network are not misjudged.
func unitsFailed(units []systemd.UnitState) bool {
	byName := map[string]systemd.UnitState{}
	for _, u := range units {
		byName[u.Name] = u
	}
	for _, name := range UnitNames() {
		u, ok := byName[name]
		if !ok || !u.Found() {
			continue
		}
		if u.UnitFileState != "" && !UnitFileEnabled(u.UnitFileState) {
			return true
		}
		switch {
		case u.ActiveState == "active" && u.SubState == "exited":
			continue
		case u.ActiveState == "active":
			return false
		case u.ActiveState == "failed" || u.SubState == "failed":
			return true
		}
		return false
	}
	return false
}

// UnitFileEnabled reports whether a unit-file state counts as enabled for
// cloud-init ("enabled", "enabled-runtime" or "static").
func UnitFileEnabled(state string) bool {
	return strings.HasPrefix(state, "enabled") || state == "static"
}

func stageTimes(stages []cloudinitstatus.StageStatus, c BootClock) []StageTimes {
	out := make([]StageTimes, 0, len(stages))
	for _, st := range stages {
		t := StageTimes{Name: st.Name, Start: st.Start, Finished: st.Finished}
		t.StartWall, _ = c.Wall(st.Start)
		t.FinishedWall, _ = c.Wall(st.Finished)
		out = append(out, t)
	}
	sort.SliceStable(out, func(i, j int) bool { return stageLess(out[i].Name, out[j].Name) })
	return out
}

func stageLess(a, b string) bool {
	ra, oka := cloudinitstatus.StageRank(a)
	rb, okb := cloudinitstatus.StageRank(b)
	switch {
	case oka && okb:
		return ra < rb
	case oka != okb:
		return oka
	}
	return a < b
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Status is cloud-init's short "status" word, which hides "degraded" for
// backwards compatibility.
func (s *State) Status() string {
	if s.Condition == Errored {
		return "error"
	}
	return string(s.Running)
}

// ExtendedStatus is cloud-init's extended_status: "not started",
// "running", "done", "error - done", "error - running", "degraded done",
// "degraded running" or "disabled" (and, as cloud-init would print them,
// "error - not started"/"error - disabled" for files with errors but no
// run).
func (s *State) ExtendedStatus() string {
	switch {
	case s.Condition == Errored:
		return "error - " + string(s.Running)
	case s.Condition == Degraded && (s.Running == Done || s.Running == IsRunning):
		return "degraded " + string(s.Running)
	}
	return string(s.Running)
}

// ExitCode is what `cloud-init status` exits with: 1 for an error, 2 for
// a degraded run, else 0.
func (s *State) ExitCode() int {
	switch s.Condition {
	case Errored:
		return 1
	case Degraded:
		return 2
	}
	return 0
}

// ErrorMessages lists the errors as `cloud-init status` prints them,
// including the systemd message when that rule fired.
func (s *State) ErrorMessages() []string {
	out := make([]string, 0, len(s.Errors)+1)
	for _, e := range s.Errors {
		out = append(out, e.Message)
	}
	if s.SystemdFailure {
		out = append(out, SystemdFailureMessage)
	}
	return out
}

// RecoverableByLevel groups the recoverable errors as `cloud-init status`
// prints them: level to messages, in stage order.
func (s *State) RecoverableByLevel() map[string][]string {
	out := map[string][]string{}
	for _, r := range s.Recoverable {
		out[r.Level] = append(out[r.Level], r.Message)
	}
	return out
}

// StageErrorsBefore reports whether any stage other than the named one
// recorded an error: "earlier stages are clean" for a check running from
// inside that stage.
func (s *State) StageErrorsBefore(stage string) bool {
	for _, e := range s.Errors {
		if e.Stage != stage {
			return true
		}
	}
	return false
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func fmtDur(d time.Duration) string { return d.Round(time.Second).String() }

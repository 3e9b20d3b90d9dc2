package cloudinit

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/parse/cloudinitstatus"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// baseDetail is the evidence every finding carries: the state as
// `cloud-init status --long` would show it, the timestamps behind it, and
// what was read to decide it.
func baseDetail(f Facts, st *State) map[string]string {
	unitsNote := f.UnitsNote
	if unitsNote == "" {
		unitsNote = describeUnits(f.Snap.Inputs.Units)
	}
	d := map[string]string{
		"status_file":          f.show(StatusPath),
		"extended_status":      st.ExtendedStatus(),
		"cloud_init_exit_code": strconv.Itoa(st.ExitCode()),
		"boot_status_code":     string(st.Boot.Code),
		"boot_status_reason":   st.Boot.Reason,
		"datasource":           or(st.Datasource, "not detected yet"),
		"stage":                or(st.Stage, "none running"),
		"units":                unitsNote,
		"boot_finished":        bootFinishedDetail(f.Snap.Inputs.BootFinished),
	}
	if f.Snap.InstalledEvidence != "" {
		d["installed"] = f.show(f.Snap.InstalledEvidence)
	}
	if f.Inside {
		d["invoked_from"] = f.Via
	}
	addTimeDetail(d, st)
	if id := f.Snap.InstanceData; id != nil {
		d = runner.Detail(d, "cloud_name", id.CloudName, "platform", id.Platform,
			"subplatform", id.Subplatform, "local_hostname", id.LocalHostname)
		// A UUID instance-id may be the machine-id itself: only its hash.
		identity.InstanceIDDetail(d, "instance_id", id.InstanceID)
	}
	d = runner.Detail(d, "datasource_detail", st.DatasourceRaw)
	for p, note := range f.Snap.Notes {
		d["note_"+strings.NewReplacer("/", "_", ".", "_").Replace(strings.TrimPrefix(p, "/"))] = note
	}
	return d
}

// describeUnits renders the units systemd reported, one "name=state" each.
func describeUnits(us []systemd.UnitState) string {
	parts := make([]string, 0, len(us))
	for _, u := range us {
		if !u.Found() {
			parts = append(parts, u.Name+"=not-found")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%s/%s (%s)", u.Name, u.ActiveState, u.SubState, u.UnitFileState))
	}
	return strings.Join(parts, ", ")
}

// addTimeDetail adds the timestamps: the last event, every stage that
// started or finished, and the boot clock they were read against.
func addTimeDetail(d map[string]string, st *State) {
	if st.LatestEvent.Set {
		d["timestamp_encoding"] = string(st.Encoding)
		d["last_update"] = when(st.LatestEvent, st.LastUpdate)
	}
	for _, s := range st.Stages {
		if !s.Start.Set && !s.Finished.Set {
			continue
		}
		key := "stage_" + strings.NewReplacer("-", "_", ".", "_").Replace(s.Name)
		d[key] = "start " + when(s.Start, s.StartWall) + ", finished " + when(s.Finished, s.FinishedWall)
	}
	if c := st.Clock; c.UptimeKnown {
		d["uptime"] = c.Uptime.Round(time.Second).String()
	}
	if c := st.Clock; c.Known() {
		d["boot_time"] = c.BootTime.UTC().Format(time.RFC3339)
	}
}

// bootFinishedDetail describes boot-finished: when it was written and by
// which cloud-init, or why that cannot be told.
func bootFinishedDetail(bf *FileFacts) string {
	if bf == nil {
		return "absent"
	}
	v := "modified " + bf.ModTime.UTC().Format(time.RFC3339)
	switch {
	case bf.ParseErr != nil:
		v += "; unparsable: " + bf.ParseErr.Error()
	case bf.Content != nil:
		if bf.Content.UptimeKnown {
			v += fmt.Sprintf("; written at uptime %s", bf.Content.Uptime.Round(time.Second))
		}
		v += "; cloud-init " + bf.Content.Version
	}
	return v
}

// when renders a status.json time with its raw value, since the raw value
// is what `cloud-init status` shows (as a 1970 date for 24.2+ uptimes).
func when(ts cloudinitstatus.Timestamp, wall time.Time) string {
	if !ts.Set {
		return "never"
	}
	raw := strconv.FormatFloat(ts.Raw, 'f', -1, 64)
	if wall.IsZero() {
		return raw + " (" + string(ts.Encoding()) + ", boot time unknown)"
	}
	return wall.UTC().Format(time.RFC3339) + " (" + raw + ")"
}

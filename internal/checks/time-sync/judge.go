package timesync

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Finding codes of the time-sync check, in groups. Each group is a section
// of the Codes in docs/checks/time-sync.md; TestCodeGroupsDocumented in
// internal/checks holds the two in step.

// Finding codes: where the check applies.
const (
)

// Finding codes: the clock.
const (
)

// Finding codes: the time daemon.
const (
)

// Finding codes: its time sources.
const (
)

// Codes lists every code Run can emit, a line per group.
var Codes = []string{
	CodeNotLive,
	CodeSynced, CodeUnsynced, CodeClockOff, CodeClockUnreadable,
	CodeDaemonActive, CodeDaemonDisabled, CodeNoDaemon, CodeMultiple, CodeNoSystemd, CodeUnitsUnreadable,
	CodeServersOK, CodeNoServers, CodeConfigInvalid,
}

// why is the consequence every clock remediation starts from.
const why = "TLS certificate checks, Kerberos (5 minutes of skew), log correlation and snapshot schedules depend on the clock"

// Run is the time-sync check.
func Run(ctx context.Context, env *runner.Env) []runner.Finding {
	return Judge(Gather(ctx, env))
}

// Judge turns the facts into findings.
func Judge(f Facts) []runner.Finding {
	var out []runner.Finding
	if f.Live {
		out = append(out, JudgeClock(f)...)
	} else {
		out = append(out, runner.Skipf(CodeNotLive, "kernel clock and running daemons not checked: "+f.NotLiveReason, nil))
	}
	active, find := JudgeDaemons(f)
	out = append(out, find...)
	out = append(out, JudgeServers(f, active)...)
	return out
}

var timeStates = []string{"TIME_OK", "TIME_INS", "TIME_DEL", "TIME_OOP", "TIME_WAIT", "TIME_ERROR"}

func clockDetail(t Timex) map[string]string {
	st := fmt.Sprint(t.State)
	if t.State >= 0 && t.State < len(timeStates) {
		st = timeStates[t.State]
	}
	return map[string]string{
		"kernel_state":    st,
		"max_error":       (time.Duration(t.MaxError) * time.Microsecond).String(),
		"estimated_error": (time.Duration(t.EstError) * time.Microsecond).String(),
		"offset":          t.OffsetDuration().String(),
		"sta_unsync":      fmt.Sprint(t.Status&StaUnsync != 0),
		"source":          "adjtimex(2), modes 0",
	}
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// JudgeClock judges the kernel's own view: synchronised (maximum error
// under 16 s, as timedatectl's NTPSynchronized), and the error the
// disciplining daemon left it with (its remaining offset plus its
// estimated error) within time_sync.max_offset.
func JudgeClock(f Facts) []runner.Finding {
	if f.TimexErr != nil {
		return []runner.Finding{runner.Errorf(CodeClockUnreadable, "cannot read the kernel clock state", map[string]string{"error": f.TimexErr.Error()},
			"Run guestcheck on the guest itself; adjtimex(2) with modes 0 needs no privilege")}
	}
	t := f.Timex
	d := clockDetail(t)
	d["max_offset"] = f.MaxOffset.String()
	if !t.Synchronized() {
		return []runner.Finding{runner.New(runner.Warn, CodeUnsynced,
			fmt.Sprintf("the kernel clock is not synchronised (maximum error %s): timedatectl shows NTPSynchronized=no", time.Duration(t.MaxError)*time.Microsecond), d,
			"Make a time daemon reach its servers (`chronyc sources`, `timedatectl timesync-status`, `ntpq -p`); "+why)}
	}
	off := abs(t.OffsetDuration()) + time.Duration(t.EstError)*time.Microsecond
	if off > f.MaxOffset {
		return []runner.Finding{runner.New(runner.Fail, CodeClockOff,
			fmt.Sprintf("the clock is off by about %s (offset %s, estimated error %s), more than time_sync.max_offset %s",
				off, t.OffsetDuration(), time.Duration(t.EstError)*time.Microsecond, f.MaxOffset), d,
			"Let the daemon step the clock (`chronyc makestep`, or restart systemd-timesyncd) and find why it drifted (a paused or restored VM, an unreachable server); "+why)}
	}
	return []runner.Finding{runner.Passf(CodeSynced,
		fmt.Sprintf("the kernel clock is synchronised (estimated error %s, maximum error %s)", time.Duration(t.EstError)*time.Microsecond, time.Duration(t.MaxError)*time.Microsecond), d)}
}

func (d Daemon) unitName() string {
	if d.Unit.Name != "" {
		return d.Unit.Name
	}
	if d.EnabledUnit != "" {
		return d.EnabledUnit
	}
	return d.Units[0]
}

func (d Daemon) masked() bool {
	return d.Unit.LoadState == "masked" || d.Unit.UnitFileState == "masked" || d.Enablement == "masked"
}

// JudgeDaemons: exactly one time daemon runs and is enabled. Under
// --root, "runs" means enabled in the image. It returns the daemons that
// run (or would), whose servers JudgeServers then judges.
func JudgeDaemons(f Facts) ([]Daemon, []runner.Finding) {
	if f.Live && f.UnitsErr != nil {
		if errors.Is(f.UnitsErr, systemd.ErrNotRunning) {
			return nil, []runner.Finding{runner.Skipf(CodeNoSystemd, "time daemons' unit state not checked: "+f.UnitsErr.Error(), nil)}
		}
		return nil, []runner.Finding{runner.Errorf(CodeUnitsUnreadable, "cannot read the time daemons' unit state", map[string]string{"error": f.UnitsErr.Error()},
			"Check that systemd answers on D-Bus (`systemctl status chrony systemd-timesyncd ntp`)")}
	}
	var active []Daemon
	var out []runner.Finding
	states := map[string]string{}
	var masked []string
	for _, d := range f.Daemons {
		key := strings.ReplaceAll(d.Name, "-", "_")
		switch {
		case f.Live && d.Unit.Found():
			states[key] = fmt.Sprintf("%s %s/%s (%s)", d.Unit.Name, d.Unit.ActiveState, d.Unit.SubState, d.Unit.UnitFileState)
		case !f.Live && (d.Installed || d.Enablement != "disabled"):
			states[key] = d.unitName() + " " + d.Enablement
		case d.Installed:
			states[key] = "installed, no unit"
		}
		if d.masked() && (d.Installed || d.Unit.Found()) {
			masked = append(masked, d.Name+" ("+d.unitName()+") is masked")
		}
		if f.Live {
			if d.Unit.ActiveState != "active" && d.Unit.ActiveState != "activating" {
				continue
			}
			active = append(active, d)
			switch d.Unit.UnitFileState {
			case "enabled", "enabled-runtime", "static", "indirect", "alias", "generated", "linked":
			default:
				out = append(out, runner.New(runner.Warn, CodeDaemonDisabled,
					fmt.Sprintf("%s runs but is %s: it will not start at the next boot", d.Unit.Name, d.Unit.UnitFileState), states,
					"Enable it: `systemctl enable "+d.Unit.Name+"` (or `timedatectl set-ntp true`)"))
			}
		} else if d.Enablement == "enabled" && d.Installed {
			active = append(active, d)
		}
	}
	if len(active) == 0 {
		msg := "no time daemon runs (chrony, systemd-timesyncd, ntpd)"
		if !f.Live {
			msg = "no time daemon is enabled in the image (chrony, systemd-timesyncd, ntpd)"
		}
		if len(masked) > 0 {
			msg += ": " + strings.Join(masked, ", ")
		}
		return nil, append(out, runner.New(runner.Fail, CodeNoDaemon, msg, states,
			runner.Fix(f.Live,
				"Install and enable one: `apt install systemd-timesyncd` or `chrony`, `systemctl unmask` a masked one, then `timedatectl set-ntp true`",
				"Install one in the image's build (the systemd-timesyncd or chrony package enables its unit), or enable an installed one with its link in /etc/systemd/system/*.wants/ of the image; a masked one is a link to /dev/null in /etc/systemd/system/ of the image: remove it")+
				"; without one the clock drifts from the moment the VM starts, and "+why))
	}
	var names []string
	for _, d := range active {
		names = append(names, d.unitName())
	}
	if len(active) > 1 {
		out = append(out, runner.New(runner.Warn, CodeMultiple, "more than one time daemon runs: "+strings.Join(names, ", "), states,
			"Keep one: the daemons fight over the clock (chrony and timesyncd conflict in their units, ntpd does not); "+
				runner.Fix(f.Live, "`systemctl disable --now` the others", "remove the others' links in /etc/systemd/system/*.wants/ of the image, or their packages from its build")))
	}
	verb := "runs"
	if !f.Live {
		verb = "is enabled"
	}
	out = append(out, runner.Passf(CodeDaemonActive, names[0]+" "+verb, states))
	return active, out
}

// JudgeServers: the running daemon has time sources configured.
func JudgeServers(f Facts, active []Daemon) []runner.Finding {
	var out []runner.Finding
	for _, d := range f.Daemons {
		if len(d.Problems) > 0 {
			out = append(out, runner.New(runner.Warn, CodeConfigInvalid, d.Problems[0],
				map[string]string{"daemon": d.Name, "problems": strings.Join(d.Problems, "\n")},
				"Fix the reported lines; "+d.Name+" ignores or rejects them"))
		}
	}
	for _, d := range active {
		det := map[string]string{"daemon": d.Name, "files": strings.Join(d.Files, ", ")}
		if d.Fallback {
			det["servers"] = "compiled-in FallbackNTP"
			out = append(out, runner.Passf(CodeServersOK, d.Name+" has no NTP= configured and uses its compiled-in fallback servers", det))
			continue
		}
		if len(d.Servers) == 0 {
			out = append(out, runner.New(runner.Warn, CodeNoServers, d.Name+" has no time servers configured", det,
				serverFix(d.Name, f.Live)))
			continue
		}
		var s []string
		for _, x := range d.Servers {
			s = append(s, x.Kind+" "+x.Host+" ("+x.At+")")
		}
		det["servers"] = strings.Join(s, "\n")
		out = append(out, runner.Passf(CodeServersOK, fmt.Sprintf("%s has %d time source(s): %s", d.Name, len(d.Servers), d.Servers[0].Host), det))
	}
	return out
}

// serverFix says where daemon name's servers go; on the running system
// the daemon is then restarted, in an image it reads them at first boot.
func serverFix(name string, live bool) string {
	then := runner.Fix(live, " and restart "+name, " in the image")
	switch name {
	case "chrony":
		return "Add `pool 2.pool.ntp.org iburst` (or your site's servers) to /etc/chrony/chrony.conf (/etc/chrony.conf on RHEL), or `refclock PHC /dev/ptp0` with the ptp_kvm module on KVM" + then
	case "systemd-timesyncd":
		return "Set `NTP=` under [Time] in /etc/systemd/timesyncd.conf.d/*.conf (an empty FallbackNTP= removed the built-in servers)" + then
	}
	return "Add `pool 2.pool.ntp.org iburst` (or your site's servers) to /etc/ntp.conf" + runner.Fix(live, " and restart ntpd", " in the image")
}

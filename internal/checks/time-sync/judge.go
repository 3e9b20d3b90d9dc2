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
		out = append(out, runner.Skipf(CodeNotLive.ID, "kernel clock and running daemons not checked: "+f.NotLiveReason, nil))
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
		return []runner.Finding{CodeClockUnreadable.New(runner.Error, "cannot read the kernel clock state", map[string]string{"error": f.TimexErr.Error()},
			CodeClockUnreadable.Fixf())}
	}
	t := f.Timex
	d := clockDetail(t)
	d["max_offset"] = f.MaxOffset.String()
	if !t.Synchronized() {
		return []runner.Finding{CodeUnsynced.New(runner.Warn,
			fmt.Sprintf("the kernel clock is not synchronised (maximum error %s): timedatectl shows NTPSynchronized=no", time.Duration(t.MaxError)*time.Microsecond), d,
			CodeUnsynced.Fixf())}
	}
	off := abs(t.OffsetDuration()) + time.Duration(t.EstError)*time.Microsecond
	if off > f.MaxOffset {
		return []runner.Finding{CodeClockOff.New(runner.Fail,
			fmt.Sprintf("the clock is off by about %s (offset %s, estimated error %s), more than time_sync.max_offset %s",
				off, t.OffsetDuration(), time.Duration(t.EstError)*time.Microsecond, f.MaxOffset), d,
			CodeClockOff.Fixf())}
	}
	return []runner.Finding{runner.Passf(CodeSynced.ID,
		fmt.Sprintf("the kernel clock is synchronised (estimated error %s, maximum error %s)", time.Duration(t.EstError)*time.Microsecond, time.Duration(t.MaxError)*time.Microsecond), d)}
}

func (d Daemon) unitName() string {
	if d.Unit.Name != "" {
		return d.Unit.Name
	}
	if d.EnabledUnit != "" {
		return d.EnabledUnit
	}
	if len(d.Units) > 0 {
		return d.Units[0]
	}
	return d.Name
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
			return nil, []runner.Finding{runner.Skipf(CodeNoSystemd.ID, "time daemons' unit state not checked: "+f.UnitsErr.Error(), nil)}
		}
		return nil, []runner.Finding{CodeUnitsUnreadable.New(runner.Error, "cannot read the time daemons' unit state", map[string]string{"error": f.UnitsErr.Error()},
			CodeUnitsUnreadable.Fixf())}
	}
	var active []Daemon
	var out []runner.Finding
	states := map[string]string{}
	var masked []string
	firstMasked := ""
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
			if firstMasked == "" {
				firstMasked = d.unitName()
			}
		}
		if f.Live {
			if d.Unit.ActiveState != "active" && d.Unit.ActiveState != "activating" {
				continue
			}
			active = append(active, d)
			switch d.Unit.UnitFileState {
			case "enabled", "enabled-runtime", "static", "indirect", "alias", "generated", "linked":
			default:
				out = append(out, CodeDaemonDisabled.New(runner.Warn,
					fmt.Sprintf("%s runs but is %s: it will not start at the next boot", d.Unit.Name, d.Unit.UnitFileState), states,
					CodeDaemonDisabled.Fixf("unit", d.Unit.Name)))
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
		return nil, append(out, CodeNoDaemon.New(runner.Fail, msg, states, noDaemonFix(f.Live, firstMasked)))
	}
	var names []string
	for _, d := range active {
		names = append(names, d.unitName())
	}
	if len(active) > 1 {
		out = append(out, CodeMultiple.New(runner.Warn, "more than one time daemon runs: "+strings.Join(names, ", "), states,
			CodeMultiple.FixOn(f.Live, "keep", names[0], "others", strings.Join(names[1:], " "))))
	}
	verb := "runs"
	if !f.Live {
		verb = "is enabled"
	}
	out = append(out, runner.Passf(CodeDaemonActive.ID, names[0]+" "+verb, states))
	return active, out
}

// JudgeServers: the running daemon has time sources configured.
func JudgeServers(f Facts, active []Daemon) []runner.Finding {
	var out []runner.Finding
	for _, d := range f.Daemons {
		if len(d.Problems) > 0 {
			out = append(out, CodeConfigInvalid.New(runner.Warn, d.Problems[0],
				map[string]string{"daemon": d.Name, "problems": strings.Join(d.Problems, "\n")},
				CodeConfigInvalid.Fixf("daemon", d.Name, "problem", d.Problems[0])))
		}
	}
	for _, d := range active {
		det := map[string]string{"daemon": d.Name, "files": strings.Join(d.Files, ", ")}
		if d.Fallback {
			det["servers"] = "compiled-in FallbackNTP"
			out = append(out, runner.Passf(CodeServersOK.ID, d.Name+" has no NTP= configured and uses its compiled-in fallback servers", det))
			continue
		}
		if len(d.Servers) == 0 {
			out = append(out, CodeNoServers.New(runner.Warn, d.Name+" has no time servers configured", det, serverFix(d, f.Live)))
			continue
		}
		var s []string
		for _, x := range d.Servers {
			s = append(s, x.Kind+" "+x.Host+" ("+x.At+")")
		}
		det["servers"] = strings.Join(s, "\n")
		out = append(out, runner.Passf(CodeServersOK.ID, fmt.Sprintf("%s has %d time source(s): %s", d.Name, len(d.Servers), d.Servers[0].Host), det))
	}
	return out
}

// noDaemonFix is the fix when no time daemon runs (live) or is enabled
// in the image: install one, or unmask the first masked one.
func noDaemonFix(live bool, masked string) string {
	switch {
	case masked != "" && live:
		return CodeNoDaemon.CaseFix("when one is masked", "unit", masked)
	case masked != "":
		return CodeNoDaemon.CaseFix("when one is masked in the image", "unit", masked)
	}
	return CodeNoDaemon.FixOn(live)
}

// serverFix says where daemon d's servers go; on the running system the
// daemon is then restarted, in an image it reads them at first boot.
func serverFix(d Daemon, live bool) string {
	unit := d.unitName()
	switch {
	case d.Name == "chrony":
		return CodeNoServers.FixOn(live, "unit", unit)
	case d.Name == "systemd-timesyncd" && live:
		return CodeNoServers.CaseFix("for systemd-timesyncd")
	case d.Name == "systemd-timesyncd":
		return CodeNoServers.CaseFix("for systemd-timesyncd in an image")
	case live:
		return CodeNoServers.CaseFix("for ntpd", "unit", unit)
	}
	return CodeNoServers.CaseFix("for ntpd in an image")
}

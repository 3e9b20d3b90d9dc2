package prove

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/qga"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
)

// pollEvery is how often prove looks for a file the guest writes late.
const pollEvery = 3 * time.Second

// collect takes an answering clone's verdict and identity: guestcheck's
// report when the image has guestcheck, else cloud-init's end and the
// identity through the agent.
func (r *cloneRun) collect(ctx context.Context, a *qga.Client) {
	r.res.Boot = BootUp
	name := r.clone.Name
	gc, err := r.hasGuestcheck(ctx, a)
	if err != nil {
		r.res.Problem = "the guest agent stopped answering: " + cleanLine(err.Error())
		r.fail(ctx)
		return
	}
	t := time.Now()
	var rep *reportv1.Report
	if gc {
		r.cfg.Progress.Phase(name, "waiting for guestcheck's report")
		got, err := r.waitReport(ctx, a)
		if err != nil {
			r.res.Problem = err.Error()
			r.fail(ctx)
			if ctx.Err() == nil {
				r.res.Boot = BootUp // up, but with nothing to judge it by
			}
			return
		}
		rep = &got
		r.res.BootTime = bootTimeOf(got, time.Since(r.con.start))
		v := verdictOf(got)
		r.res.Verdict, r.res.VerdictSource, r.res.Failing, r.res.Checks = &v, SourceAgent, failing(got), checkVerdicts(got)
		r.res.Baseline = baselineFindings(got)
	} else {
		r.res.IdentityOnly = true
		r.res.Notes = append(r.res.Notes, "guestcheck is not in the image: only identity was compared")
		r.cfg.Progress.Phase(name, "waiting for cloud-init")
		if err := r.waitFile(ctx, a, "/run/cloud-init/result.json", "/usr/bin/cloud-init"); err != nil {
			r.res.Notes = append(r.res.Notes, err.Error())
		} else {
			r.res.BootTime = &BootTime{ToVerdictMS: ms(time.Since(r.con.start))}
		}
	}
	r.res.Timings.Guestcheck = ms(time.Since(t))
	r.cfg.Progress.Phase(name, "reading identity")
	t = time.Now()
	r.identity(ctx, a, rep)
	r.res.Timings.Collection = ms(time.Since(t))
}

// identity takes guestcheck's identity when its report carries one (it
// reads the DHCP client identity and MAC-pinned configuration as well),
// and otherwise reads what the agent can.
func (r *cloneRun) identity(ctx context.Context, a qga.Agent, rep *reportv1.Report) {
	if rep != nil && rep.Identity != nil {
		id := *rep.Identity
		if len(id.Interfaces) == 0 {
			if ifs, err := qga.Interfaces(ctx, a); err == nil {
				id.Interfaces = agentInterfaces(ifs)
			}
		}
		r.res.Identity, r.res.IdentitySource = &id, "guestcheck"
		return
	}
	id, sealHash := AgentIdentity(ctx, a)
	r.res.Identity, r.res.IdentitySource, r.res.sealHash = &id, SourceAgent, sealHash
}

// hasGuestcheck reports whether guestcheck's boot unit is installed.
func (r *cloneRun) hasGuestcheck(ctx context.Context, a qga.Agent) (bool, error) {
	for _, p := range []string{guestcheckUnit, "/lib/systemd/system/guestcheck.service"} {
		ok, err := agentFS{ctx: ctx, a: a}.exists(p)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// waitReport polls for guestcheck's report until it parses, the guest
// dies or the deadline passes.
func (r *cloneRun) waitReport(ctx context.Context, a qga.Agent) (reportv1.Report, error) {
	var last error
	for {
		b, err := qga.ReadFile(ctx, a, ReportPath, maxReport)
		if err == nil {
			rep, perr := parseReport(b)
			if perr == nil {
				// Beside the clone's console and disk, so that --keep
				// keeps the report prove judged by.
				name := "report.json"
				if r.rebooted {
					name = "report-reboot.json"
				}
				if werr := os.WriteFile(filepath.Join(r.clone.Dir, name), b, 0o644); werr != nil {
					r.res.Notes = append(r.res.Notes, "the report was not kept: "+cleanLine(werr.Error()))
				}
				return rep, nil
			}
			last = perr
		}
		if err := r.still(ctx); err != nil {
			if last != nil {
				return reportv1.Report{}, fmt.Errorf("%v; the last report read: %v", err, last)
			}
			return reportv1.Report{}, fmt.Errorf("%v: guestcheck.service wrote no %s", err, ReportPath)
		}
	}
}

// waitFile waits for path to appear, when the guest has need (a file
// that shows the program that writes path is installed).
func (r *cloneRun) waitFile(ctx context.Context, a qga.Agent, path, need string) error {
	fsys := agentFS{ctx: ctx, a: a}
	if ok, err := fsys.exists(need); err != nil || !ok {
		return nil
	}
	for {
		if ok, err := fsys.exists(path); err == nil && ok {
			return nil
		}
		if err := r.still(ctx); err != nil {
			return fmt.Errorf("%v: %s did not appear", err, path)
		}
	}
}

// still waits one poll interval, watching the console; an error says the
// wait is over (the guest died, QEMU stopped, the deadline passed).
func (r *cloneRun) still(ctx context.Context) error {
	select {
	case <-ctx.Done():
	case <-time.After(pollEvery):
	}
	r.con.Poll()
	st := r.con.State()
	switch {
	case ctx.Err() != nil:
		return errors.New(ended(ctx))
	case st.Dead != "":
		return fmt.Errorf("the guest went down: %s", st.Dead)
	case !r.vm.Alive():
		return fmt.Errorf("QEMU stopped (%v)", r.vm.exitErr())
	}
	return nil
}

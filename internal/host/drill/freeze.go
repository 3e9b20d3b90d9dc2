package drill

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/qga"
)

// outcome is what the freeze and thaw calls answered.
type outcome struct {
	freezeErr, thawErr error
	// handedOver: the drill's own thaw failed or could not be tried, and
	// the guard was told to thaw; guardErr is how that went.
	handedOver bool
	guardErr   error
}

// freezeAndThaw arms the guard, freezes, reads the status, thaws and
// checks the thaw. Whatever happens after the guard is armed, the guest
// ends thawed: by this drill, or by the guard. It is false when nothing
// was tried (the VM is then unknown, with the reason).
func (d *vmDrill) freezeAndThaw(ctx context.Context) bool {
	dl, _ := ctx.Deadline()
	g, err := startGuard(d.o.Exe, d.t.Name, d.t.Reach, dl.Add(guardGrace))
	if err != nil {
		d.vm.unknown("not frozen: the guard that guarantees the thaw did not start: " + err.Error())
		return false
	}
	var out outcome
	start := time.Now()
	var n int
	out.freezeErr = d.agent.Exec(ctx, "guest-fsfreeze-freeze", nil, &n)
	d.vm.FreezeMS = time.Since(start).Milliseconds()
	frozenAt := time.Now()
	switch {
	case out.freezeErr == nil:
		d.vm.Froze, d.vm.FrozenCount = true, max(0, min(n, maxFS))
		var st string
		if d.call(ctx, stepTimeout, "guest-fsfreeze-status", nil, &st) == nil {
			d.vm.StatusFrozen = bounded(st, 40)
		}
	case disabled(out.freezeErr):
		// Refused before anything was frozen: nothing to thaw.
		g.Done()
		d.vm.unknown("the agent's RPC filter blocks guest-fsfreeze-freeze: this VM's snapshots are never quiesced, and the drill cannot run")
		d.vm.Fix = d.filterFix("guest-fsfreeze-freeze")
		return false
	}
	if ctx.Err() == nil {
		// Thaw even after a failed freeze: qemu-ga thaws what it froze
		// on error, and a thaw of nothing is harmless.
		tstart := time.Now()
		var m int
		out.thawErr = d.call(ctx, stepTimeout, "guest-fsfreeze-thaw", nil, &m)
		d.vm.ThawMS = time.Since(tstart).Milliseconds()
		d.vm.ThawedCount = max(0, min(m, maxFS))
		if d.vm.Froze {
			d.vm.FrozenMS = time.Since(frozenAt).Milliseconds()
		}
		var st string
		if out.thawErr == nil {
			if err := d.call(ctx, stepTimeout, "guest-fsfreeze-status", nil, &st); err != nil || st != "thawed" {
				out.thawErr = fmt.Errorf("guest-fsfreeze-status after the thaw: %s", cmp(bounded(st, 40), d.explainErr(err)))
			}
		}
	} else {
		out.thawErr = fmt.Errorf("the drill's time (%s) ran out during the freeze", d.o.VMTimeout)
	}
	if out.thawErr == nil {
		d.vm.ThawedBy = "drill"
		g.Done()
	} else {
		// Hand over: the agent's socket takes one client, so the drill's
		// connection goes first; then the guard, told nothing, thaws.
		d.agent.Close()
		d.agent = nil
		out.handedOver = true
		out.guardErr = abandon(g, guardWait)
		if out.guardErr == nil {
			d.vm.ThawedBy = "guard"
		}
		d.reconnect(ctx)
	}
	d.out = out
	return true
}

func (d *vmDrill) explainErr(err error) string {
	if err == nil {
		return "no answer"
	}
	return d.explain(err)
}

// reconnect opens a new agent connection after the guard's thaw, for
// the reads that follow.
func (d *vmDrill) reconnect(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), connectTimeout)
	defer cancel()
	a, err := d.t.Dial(cctx)
	if err != nil {
		return err
	}
	widen(a, stepTimeout)
	d.agent = a
	return nil
}

// judge gives the verdict from what was seen.
func (d *vmDrill) judge() {
	vm, out := d.vm, d.out
	dl := d.o.Deadline
	d.compare()
	hook := ""
	if s := hookScripts(vm.Hook, "freeze"); s != "" {
		hook = "; the fsfreeze hook ran " + s
	}
	switch {
	case out.handedOver && out.guardErr != nil:
		vm.Status, vm.Reason = Fail, oneLine(fmt.Sprintf("the guest may still be frozen: the drill could not thaw it (%v) and neither could its guard (%v)", out.thawErr, out.guardErr))
		vm.Fix = "Thaw it now: virsh domfsthaw DOMAIN, qm guest cmd VMID fsfreeze-thaw, or guest-fsfreeze-thaw on its agent socket; then find why the agent did not answer."
	case out.freezeErr != nil && errors.Is(out.freezeErr, context.DeadlineExceeded):
		vm.Status, vm.Reason = Fail, oneLine(fmt.Sprintf("guest-fsfreeze-freeze did not answer within %s, far past the %s deadline%s; thawed by the %s", d.o.VMTimeout, dl, hook, vm.ThawedBy))
		vm.Fix = "Find what holds the freeze (a hook script that hangs, I/O that never flushes): the platform's snapshot fails the same way."
	case out.freezeErr != nil && isHookError(out.freezeErr):
		vm.Status, vm.Reason = Fail, oneLine(fmt.Sprintf("the fsfreeze hook failed (%s)%s; nothing stayed frozen, thawed by the %s", d.explain(out.freezeErr), failedScripts(vm.Hook), vm.ThawedBy))
		vm.Fix = "Fix the hook script that fails (its output is in " + d.o.HookLog + " in the guest), or remove it from /etc/qemu/fsfreeze-hook.d: until then every quiesced snapshot of this VM fails."
	case out.freezeErr != nil:
		vm.Status, vm.Reason = Fail, oneLine(fmt.Sprintf("the freeze failed: %s; thawed by the %s", d.explain(out.freezeErr), vm.ThawedBy))
		vm.Fix = "Fix what the agent names (SELinux denying qemu-ga the mount, a filesystem that cannot freeze such as NFS or FUSE on a block device): until then the platform's snapshot fails or is crash-consistent."
	case out.handedOver:
		vm.Status, vm.Reason = Fail, oneLine(fmt.Sprintf("froze %d filesystem(s), but the drill's thaw failed (%v); its guard thawed the guest", vm.FrozenCount, out.thawErr))
		vm.Fix = "Find why guest-fsfreeze-thaw failed (the agent's log in the guest): a platform whose thaw fails leaves the VM frozen until its own timeout."
	case time.Duration(vm.FreezeMS)*time.Millisecond > dl:
		vm.Status, vm.Reason = Fail, oneLine(fmt.Sprintf("freezing took %s, past the %s deadline%s; thawed by the drill", ms(vm.FreezeMS), dl, hook))
		vm.Fix = "Make the freeze faster (a hook script that waits, dirty data to flush: vm.dirty_bytes) or give the platform a longer deadline (Harvester 1.9+: VirtualMachineBackup spec.fsFreezeDeadline): until then its snapshots of this VM fail or are not quiesced."
	case vm.Hook.State == HookFailed:
		vm.Status, vm.Reason = Fail, oneLine("froze and thawed, but a hook script failed"+failedScripts(vm.Hook))
		vm.Fix = "Fix the hook script that fails (its output is in " + d.o.HookLog + " in the guest): what it should quiesce is not quiesced."
	case vm.Prediction.State == Disagree:
		vm.Status, vm.Reason = Warn, oneLine(fmt.Sprintf("froze %d filesystem(s) in %s, but %s", vm.FrozenCount, ms(vm.FreezeMS), vm.Prediction.Why))
		vm.Fix = "One of them is wrong: compare guest-get-fsinfo (fs_before) with guestcheck --only fs-freeze in the guest, and report it to guestcheck if the agent is right."
	default:
		vm.Status, vm.Reason = Pass, oneLine(fmt.Sprintf("froze %d filesystem(s) in %s (deadline %s), frozen %s, thawed in %s%s", vm.FrozenCount, ms(vm.FreezeMS), dl, ms(vm.FrozenMS), ms(vm.ThawMS), hook))
	}
}

func ms(n int64) string { return (time.Duration(n) * time.Millisecond).String() }

// isHookError spots qemu-ga's "fsfreeze hook has failed with status N"
// and "fsfreeze hook has terminated abnormally".
func isHookError(err error) bool {
	var qe *qga.Error
	return errors.As(err, &qe) && strings.Contains(qe.Desc, "fsfreeze hook")
}

// compare judges the guest's prediction against the drill.
func (d *vmDrill) compare() {
	p, vm := &d.vm.Prediction, d.vm
	if p.State != Agree {
		return // not compared: Why says why
	}
	if !vm.Froze {
		p.State, p.Why = NotCompared, "nothing was frozen to compare with"
		return
	}
	listed := map[string]bool{}
	for _, f := range vm.FSBefore {
		listed[f.Mountpoint] = true
	}
	var missing []string
	for _, m := range p.Predicted {
		if len(vm.FSBefore) > 0 && !listed[m] {
			missing = append(missing, m)
		}
	}
	switch {
	case len(p.Predicted) != vm.FrozenCount:
		p.State, p.Why = Disagree, fmt.Sprintf("the guest's fs-freeze check predicted %d (%s) and the agent froze %d", len(p.Predicted), strings.Join(p.Predicted, ", "), vm.FrozenCount)
	case len(missing) > 0:
		p.State, p.Why = Disagree, fmt.Sprintf("the guest's fs-freeze check predicted %s, which guest-get-fsinfo does not list", strings.Join(missing, ", "))
	default:
		p.Why = ""
	}
	p.Why = oneLine(p.Why)
}

// predict runs guestcheck --only fs-freeze in the guest through
// guest-exec and keeps its freeze list; compare judges it once frozen.
func (d *vmDrill) predict(ctx context.Context) {
	p := &d.vm.Prediction
	if ok, known := d.enabled["guest-exec"]; known && !ok {
		p.State, p.Why = NotCompared, "guest-exec is disabled by the agent's RPC filter (the RHEL family's default), so guestcheck in the guest cannot be asked"
		return
	}
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	res, err := qga.Run(cctx, d.agent, d.o.GuestcheckPath, []string{"--only", "fs-freeze", "--format", "json", "--exit-zero"}, maxReport)
	switch {
	case err != nil:
		p.State, p.Why = NotCompared, oneLine("guestcheck in the guest could not run: "+d.explain(err))
		return
	case res.Exit != 0 || res.Signal != 0 || res.Truncated:
		p.State, p.Why = NotCompared, oneLine(fmt.Sprintf("guestcheck in the guest exited %d: %s", res.Exit, bounded(string(res.Stderr), 200)))
		return
	}
	order, why := freezeOrder(res.Stdout)
	if why != "" {
		p.State, p.Why = NotCompared, oneLine(why)
		return
	}
	p.State, p.Predicted = Agree, order
}

// hookLogSize is the hook log's size before the freeze, so that the
// drill reads only its own lines; why says why it cannot be read.
func (d *vmDrill) hookLogSize(ctx context.Context) (int64, string) {
	for _, c := range []string{"guest-file-open", "guest-file-read", "guest-file-seek"} {
		if ok, known := d.enabled[c]; known && !ok {
			return 0, c + " is disabled by the agent's RPC filter, so the hook's log cannot be read"
		}
	}
	var h int
	err := d.call(ctx, stepTimeout, "guest-file-open", map[string]string{"path": d.o.HookLog, "mode": "r"}, &h)
	if err != nil {
		return 0, "" // no log yet: this drill's hook may create it
	}
	defer d.call(context.WithoutCancel(ctx), 5*time.Second, "guest-file-close", map[string]int{"handle": h}, nil)
	var pos struct {
		Position int64 `json:"position"`
	}
	if err := d.call(ctx, stepTimeout, "guest-file-seek", map[string]any{"handle": h, "offset": 0, "whence": "end"}, &pos); err != nil {
		return 0, "guest-file-seek on the hook's log: " + d.explain(err)
	}
	return max(0, pos.Position), ""
}

// readHook reads the hook log's lines written since start, bounded.
func (d *vmDrill) readHook(ctx context.Context, start int64, why string) {
	hk := &d.vm.Hook
	hk.Log = d.o.HookLog
	if why != "" {
		hk.State, hk.Why = HookUnknown, oneLine(why)
		return
	}
	if d.agent == nil {
		hk.State, hk.Why = HookUnknown, "no agent connection after the thaw"
		return
	}
	b, err := d.readFrom(ctx, start)
	switch {
	case err != nil && strings.Contains(err.Error(), "No such file"):
		hk.State, hk.Why = HookSilent, "no hook log: qemu-ga runs /etc/qemu/fsfreeze-hook only when started with --fsfreeze-hook (-F)"
		return
	case err != nil:
		hk.State, hk.Why = HookUnknown, oneLine("the hook's log could not be read: "+err.Error())
		return
	}
	hk.Scripts = parseHookLog(b)
	hk.State, hk.Why = HookRan, ""
	switch {
	case len(hk.Scripts) == 0:
		hk.State, hk.Why = HookSilent, "no hook log lines from this drill: qemu-ga runs the hook only when started with --fsfreeze-hook (-F), and the hook logs only the scripts of /etc/qemu/fsfreeze-hook.d"
	case failedScripts(*hk) != "":
		hk.State = HookFailed
	}
}

// readFrom reads the hook log from offset start, at most maxHookLog
// bytes (the rest is left unread: a drill's own lines come first).
func (d *vmDrill) readFrom(ctx context.Context, start int64) ([]byte, error) {
	var h int
	if err := d.call(ctx, stepTimeout, "guest-file-open", map[string]string{"path": d.o.HookLog, "mode": "r"}, &h); err != nil {
		return nil, errors.New(d.explain(err))
	}
	defer d.call(context.WithoutCancel(ctx), 5*time.Second, "guest-file-close", map[string]int{"handle": h}, nil)
	if err := d.call(ctx, stepTimeout, "guest-file-seek", map[string]any{"handle": h, "offset": start, "whence": "set"}, nil); err != nil {
		return nil, errors.New(d.explain(err))
	}
	var out []byte
	for len(out) < maxHookLog {
		var r struct {
			Count int    `json:"count"`
			Buf   string `json:"buf-b64"`
			EOF   bool   `json:"eof"`
		}
		if err := d.call(ctx, stepTimeout, "guest-file-read", map[string]int{"handle": h, "count": maxHookLog - len(out)}, &r); err != nil {
			return nil, errors.New(d.explain(err))
		}
		if base64.StdEncoding.DecodedLen(len(r.Buf)) > maxHookLog+3 {
			return nil, fmt.Errorf("the agent sent more than the %d bytes asked", maxHookLog)
		}
		b, err := base64.StdEncoding.DecodeString(r.Buf)
		if err != nil {
			return nil, errors.New("the agent's data is not base64")
		}
		out = append(out, b...)
		if r.EOF || len(b) == 0 {
			break
		}
	}
	return out[:min(len(out), maxHookLog)], nil
}

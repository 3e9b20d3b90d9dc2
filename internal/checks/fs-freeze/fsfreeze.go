package fsfreeze

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/agent"
	"github.com/guestcheck/guestcheck/internal/fact/freeze"
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/mounts"
	"github.com/guestcheck/guestcheck/internal/fact/store"
	"github.com/guestcheck/guestcheck/internal/parse/mountinfo"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Run emulates the freeze list qemu-ga builds for guest-fsfreeze-freeze
// and judges every mount in it, after whether an agent can receive a
// freeze request at all (the presence it shares with the qemu-guest-agent
// check). It never freezes anything unless env.FreezeTest asks for the
// active freeze-and-thaw test of --freeze-test.
func Run(ctx context.Context, env *runner.Env) []runner.Finding {
	return JudgeFreeze(GatherFreeze(ctx, env))
}

// FreezeFacts is everything the fs-freeze check judges (GatherFreeze), so
// that JudgeFreeze is a pure function of it.
type FreezeFacts struct {
	// Live is true when the root is the running system; NotLiveReason is
	// the skip message when it is not, and nothing else is read.
	Live          bool
	NotLiveReason string
	// Pres is the qemu-guest-agent check's probe, shared rather than made
	// again.
	Pres *agent.Presence
	// Mounts is /proc/self/mountinfo; MountsErr why it could not be read.
	Mounts    []mountinfo.Mount
	MountsErr error
	// BlockDev says, for the source of each btrfs mount without a device
	// number, whether it is a block device (qemu-ga stats it).
	BlockDev map[string]bool
	// Backing maps a freezable loop device ("loop0") to its backing file.
	Backing map[string]string
	// Test is the --freeze-test request and its outcome; nil without one.
	Test *freezeTestFacts
}

// freezeTestFacts is a --freeze-test: whether it may run here, and what
// freezing and thawing did when it ran.
type freezeTestFacts struct {
	Req            freeze.Request
	IsHost, IsRoot bool
	Result         freeze.Result
	Err            error
}

// GatherFreeze reads the mount table and what qemu-ga would look at for
// each mount, and runs the freeze test when one is asked for and allowed.
func GatherFreeze(ctx context.Context, env *runner.Env) FreezeFacts {
	f := FreezeFacts{Live: env.Live}
	if !env.Live {
		f.NotLiveReason = env.NotLiveReason()
		return f
	}
	f.Pres = agent.Detect(env.Facts, env.Root, env.Live)
	if f.Pres.Port != "" || f.Pres.QEMU {
		gatherMounts(env.Facts, env.Root, &f)
	}
	if ft := env.FreezeTest; ft != nil {
		t := &freezeTestFacts{Req: freeze.Request{Mountpoint: ft.Mountpoint, Protect: ft.Protect},
			IsHost: env.Root.IsHost(), IsRoot: env.IsRoot}
		// Only where the judge does not refuse it: freezing is an action.
		if t.IsHost && t.IsRoot {
			t.Result, t.Err = freeze.Run(ctx, t.Req)
		}
		f.Test = t
	}
	return f
}

// gatherMounts reads the mount table, and for each mount what qemu-ga
// consults: the btrfs sources it stats, the loop devices' backing files.
func gatherMounts(s *store.Store, root *fs.Root, f *FreezeFacts) {
	f.Mounts, f.MountsErr = mounts.Table(s, root)
	f.BlockDev, f.Backing = map[string]bool{}, map[string]string{}
	for _, m := range f.Mounts {
		if m.Major == 0 && m.FSType == "btrfs" && len(m.Optional) == 1 {
			st, err := root.Stat(m.Source)
			f.BlockDev[m.Source] = err == nil && st.Mode()&iofs.ModeDevice != 0 && st.Mode()&iofs.ModeCharDevice == 0
		}
		if loop := freeze.LoopBacking(m.Source); loop != "" && freeze.Freezable(m.FSType) {
			if b, err := root.ReadFile("/sys/block/" + loop + "/loop/backing_file"); err == nil {
				f.Backing[loop] = strings.TrimSpace(string(b))
			}
		}
	}
}

// JudgeFreeze turns the facts into findings. It is pure.
func JudgeFreeze(f FreezeFacts) []runner.Finding {
	if !f.Live {
		return []runner.Finding{codeFreezeNotLive.New(runner.Skip, "the mount table was not read: "+f.NotLiveReason, nil, codeFreezeNotLive.Fixf())}
	}
	var out []runner.Finding
	ga := f.Pres
	switch {
	case ga.Port == "" && !ga.QEMU:
		out = append(out, runner.Skipf(codeFreezeNotQEMU.ID, "qemu-ga never freezes filesystems here: "+ga.Platform,
			map[string]string{"platform": ga.Platform}))
	case f.MountsErr != nil:
		out = append(out, codeFreezeUnreadable.New(runner.Error, "cannot read the mount table",
			map[string]string{"file": "/proc/self/mountinfo", "error": f.MountsErr.Error()}, codeFreezeUnreadable.Fixf()))
	default:
		out = append(out, judgeFreezeList(f, agentBlockers(ga))...)
	}
	if f.Test != nil {
		out = append(out, judgeFreezeTest(*f.Test))
	}
	return out
}

// agentBlockers returns why no agent can freeze anything on this QEMU/KVM
// guest: no agent installed, no guest-agent channel. Each is a failure:
// KubeVirt and Harvester then snapshot without freezing (virt-freezer
// exits 0 with "No guest agent"), so every snapshot is silently
// crash-consistent however freezable the filesystems are.
func agentBlockers(ga *agent.Presence) []runner.Finding {
	var out []runner.Finding
	if !ga.Installed() {
		out = append(out, codeFreezeNoAgent.New(runner.Fail, "no filesystem is frozen for snapshots: qemu-guest-agent is not installed",
			map[string]string{"agent": "not installed (see the qemu-guest-agent check)"},
			codeFreezeNoAgent.Fixf()))
	}
	if ga.Port == "" {
		out = append(out, codeFreezeNoChannel.New(runner.Fail, "no filesystem is frozen for snapshots: the VM has no org.qemu.guest_agent.0 channel, so the host cannot reach an agent",
			map[string]string{"platform": ga.Platform, "ports": strings.Join(ga.Ports, ",")},
			codeFreezeNoChannel.Fixf()))
	}
	return out
}

// judgeFreezeList emulates qemu-ga's list and judges each entry; blockers
// are the reasons no agent will freeze it, reported first.
func judgeFreezeList(f FreezeFacts, blockers []runner.Finding) []runner.Finding {
	ms := f.Mounts
	out := blockers
	devOK := func(m mountinfo.Mount) bool {
		// qemu-ga's sscanf expects exactly one optional field; with any
		// other count it reads the wrong columns and drops btrfs entries.
		return len(m.Optional) == 1 && f.BlockDev[m.Source]
	}
	list, skipped := freeze.Order(ms, devOK)
	var order []string
	for _, c := range list {
		if c.Freezable && !c.Duplicate {
			order = append(order, c.Mount.MountPoint)
		}
	}
	d := map[string]string{"freeze_order": strings.Join(order, ","), "source": "/proc/self/mountinfo"}
	out = append(out, rootUnfreezable(ms, list, skipped, d["freeze_order"])...)
	out = append(out, skippedMounts(list, skipped)...)
	out = append(out, loopBacked(f, list, order, d["freeze_order"])...)
	msg := fmt.Sprintf("qemu-ga will freeze %d filesystem(s): %s", len(order), strings.Join(order, ", "))
	if len(blockers) > 0 {
		msg = fmt.Sprintf("qemu-ga would freeze %d filesystem(s) once it can run: %s", len(order), strings.Join(order, ", "))
		for _, b := range blockers {
			b.Detail["freeze_order"] = d["freeze_order"]
		}
	}
	out = append(out, runner.Passf(codeFreezeListOK.ID, msg, d))
	return out
}

// rootUnfreezable fails a root filesystem that is not in the freeze list.
func rootUnfreezable(ms []mountinfo.Mount, list []freeze.Candidate, skipped []mountinfo.Mount, order string) []runner.Finding {
	root, ok := mountinfo.Find(ms, "/")
	rootFrozen := false
	for _, c := range list {
		if c.Mount.MountPoint == "/" && c.Freezable {
			rootFrozen = true
		}
	}
	if !ok || rootFrozen {
		return nil
	}
	why := "type " + root.FSType + " cannot be frozen"
	for _, s := range skipped {
		if s.ID == root.ID {
			why = "type " + root.FSType + " has no block device, so qemu-ga never freezes it"
		}
	}
	return []runner.Finding{codeFreezeRootUnfreez.New(runner.Fail, "the root filesystem is not frozen by qemu-ga: "+why,
		map[string]string{"root_type": root.FSType, "root_source": root.Source, "freeze_order": order},
		codeFreezeRootUnfreez.Fixf())}
}

// skippedMounts notes the mounts qemu-ga passes over: those that cannot
// be frozen, and btrfs ones whose device it cannot resolve.
func skippedMounts(list []freeze.Candidate, skipped []mountinfo.Mount) []runner.Finding {
	var out []runner.Finding
	for _, c := range list {
		m := c.Mount
		if !c.Freezable && m.MountPoint != "/" {
			out = append(out, codeFreezeMountSkipped.New(runner.Pass,
				fmt.Sprintf("info: %s (%s) cannot be frozen and is skipped by qemu-ga", m.MountPoint, m.FSType),
				map[string]string{"mountpoint": m.MountPoint, "type": m.FSType, "source": m.Source},
				codeFreezeMountSkipped.Fixf("mountpoint", m.MountPoint)))
		}
	}
	for _, s := range skipped {
		if s.FSType == "btrfs" {
			out = append(out, codeFreezeMountSkipped.New(runner.Pass,
				fmt.Sprintf("info: btrfs %s is skipped by qemu-ga: its source device cannot be resolved from mountinfo", s.MountPoint),
				map[string]string{"mountpoint": s.MountPoint, "type": s.FSType, "source": s.Source, "optional_fields": strconv.Itoa(len(s.Optional))},
				codeFreezeMountSkipped.Fixf("mountpoint", s.MountPoint)))
		}
	}
	return out
}

// loopBacked warns about loop filesystems whose backing file lies on
// another filesystem that is frozen too.
func loopBacked(f FreezeFacts, list []freeze.Candidate, order []string, freezeOrder string) []runner.Finding {
	pos := map[string]int{}
	for i, mp := range order {
		pos[mp] = i
	}
	var out []runner.Finding
	for _, c := range list {
		loop := freeze.LoopBacking(c.Mount.Source)
		if loop == "" || !c.Freezable {
			continue
		}
		backing, ok := f.Backing[loop]
		if !ok {
			continue
		}
		host, ok := mountinfo.Holding(f.Mounts, backing)
		if !ok || !freeze.Freezable(host.FSType) {
			continue
		}
		hp, hok := pos[host.MountPoint]
		lp := pos[c.Mount.MountPoint]
		orderNote := "the loop filesystem is frozen first (safe order for now)"
		if hok && hp < lp {
			orderNote = "the backing filesystem is frozen first: freezing the loop filesystem then blocks on it and the guest hangs"
		}
		out = append(out, codeFreezeLoopBacked.New(runner.Warn,
			fmt.Sprintf("%s is a loop device backed by %s on %s, which is also frozen", c.Mount.MountPoint, backing, host.MountPoint),
			map[string]string{"mountpoint": c.Mount.MountPoint, "loop_device": "/dev/" + loop, "backing_file": backing,
				"backing_mount": host.MountPoint, "order": orderNote, "freeze_order": freezeOrder},
			codeFreezeLoopBacked.Fixf("mountpoint", c.Mount.MountPoint)))
	}
	return out
}

// judgeFreezeTest judges the --freeze-test: refused where it may not run,
// else what freezing and thawing the filesystem did.
func judgeFreezeTest(t freezeTestFacts) runner.Finding {
	req := t.Req
	d := map[string]string{"mountpoint": req.Mountpoint}
	if !t.IsHost {
		return codeFreezeTestRefused.New(runner.Error, "--freeze-test works only on the running system, not under --root", d,
			codeFreezeTestRefused.CaseFix("when run under --root", "mountpoint", req.Mountpoint))
	}
	if !t.IsRoot {
		return codeFreezeTestRefused.New(runner.Error, "--freeze-test needs root", d,
			codeFreezeTestRefused.CaseFix("when not run as root", "mountpoint", req.Mountpoint))
	}
	res, err := t.Result, t.Err
	if res.Device != "" {
		d["device"] = res.Device
	}
	if res.WatchdogPID != 0 {
		d["watchdog_pid"] = strconv.Itoa(res.WatchdogPID)
	}
	d["freeze_latency"] = res.FreezeLatency.String()
	switch {
	case errors.Is(err, freeze.ErrRefused) || errors.Is(err, freeze.ErrNeedRoot):
		d["error"] = err.Error()
		return codeFreezeTestRefused.New(runner.Error, "the freeze test was refused: "+err.Error(), d, codeFreezeTestRefused.Fixf())
	case errors.Is(err, freeze.ErrCannotFreeze):
		d["error"] = err.Error()
		return codeFreezeTestUnsupport.New(runner.Warn, req.Mountpoint+" cannot freeze (EOPNOTSUPP)", d,
			codeFreezeTestUnsupport.Fixf("mountpoint", req.Mountpoint))
	case errors.Is(err, freeze.ErrAlreadyFrozen):
		d["error"] = err.Error()
		return codeFreezeTestBusy.New(runner.Warn, req.Mountpoint+" is already frozen (EBUSY)", d,
			codeFreezeTestBusy.Fixf("mountpoint", req.Mountpoint))
	case err != nil:
		d["error"] = err.Error()
		return codeFreezeTestFailed.New(runner.Fail, "freezing "+req.Mountpoint+" failed: "+err.Error(), d,
			codeFreezeTestFailed.Fixf("mountpoint", req.Mountpoint))
	}
	d["thaw_latency"] = res.ThawLatency.String()
	d["thawed_by"] = res.ThawedBy
	if res.ThawedBy == "watchdog" {
		return codeFreezeTestFailed.New(runner.Fail,
			fmt.Sprintf("freezing %s took %v, past the watchdog deadline", req.Mountpoint, res.FreezeLatency.Round(1e6)), d,
			codeFreezeTestFailed.CaseFix("when the freeze outlasted the watchdog", "mountpoint", req.Mountpoint))
	}
	return runner.Passf(codeFreezeTestOK.ID, fmt.Sprintf("%s froze in %v and thawed in %v", req.Mountpoint,
		res.FreezeLatency.Round(1e3), res.ThawLatency.Round(1e3)), d)
}

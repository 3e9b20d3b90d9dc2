package drill

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/fleet"
	"github.com/guestcheck/guestcheck/internal/host/qga"
	"github.com/guestcheck/guestcheck/internal/shared/buildinfo"
)

// Defaults of Options.
const (
	// DefaultDeadline is Harvester's default filesystem freeze deadline:
	// 1 s (harvester/harvester#3976's defaultFreezeDuration; since
	// Harvester 1.9, #10545, VirtualMachineBackup spec.fsFreezeDeadline,
	// whose UI default is still 1s). docs/freeze-drill.md has the sources.
	DefaultDeadline = time.Second
	// DefaultVMTimeout bounds one VM's drill, the freeze call included:
	// a hook that hangs is cut off then, and the guard thaws.
	DefaultVMTimeout = 2 * time.Minute
	// DefaultHookLog is where qemu's fsfreeze-hook script logs.
	DefaultHookLog = "/var/log/qga-fsfreeze-hook.log"
	// connectTimeout bounds dialling and the first exchanges.
	connectTimeout = 10 * time.Second
	// stepTimeout bounds each agent call other than the freeze.
	stepTimeout = 15 * time.Second
	// maxFS bounds guest-get-fsinfo's list; a guest with more mounts
	// than this is hostile or broken.
	maxFS = 4096
	// maxField bounds each string a guest sends.
	maxField = 4096
	// maxHookLog bounds what is read of the hook's log per drill.
	maxHookLog = 64 << 10
	// maxReport bounds guestcheck's output in the guest.
	maxReport = 4 << 20
)

// Options shape a drill.
type Options struct {
	// Deadline is the platform's freeze deadline the freeze is judged
	// against.
	Deadline time.Duration
	// VMTimeout bounds each VM's drill.
	VMTimeout time.Duration
	// GuestcheckPath is guestcheck's path in the guest, for its
	// prediction.
	GuestcheckPath string
	// HookLog is the fsfreeze hook's log in the guest.
	HookLog string
	// HostName names this host; empty: its hostname.
	HostName string
	// Exe is the binary re-executed as the guard (default
	// /proc/self/exe); its main must call RunGuard when IsGuard.
	Exe string
	// Progress, when set, is called before each VM's freeze.
	Progress func(vm string)
}

func (o Options) withDefaults() Options {
	if o.Deadline <= 0 {
		o.Deadline = DefaultDeadline
	}
	if o.VMTimeout <= 0 {
		o.VMTimeout = DefaultVMTimeout
	}
	if o.GuestcheckPath == "" {
		o.GuestcheckPath = fleet.DefaultGuestcheckPath
	}
	if o.HookLog == "" {
		o.HookLog = DefaultHookLog
	}
	if o.Exe == "" {
		o.Exe = "/proc/self/exe"
	}
	return o
}

// Target is one VM to drill: fleet's target, and how the guard reaches
// its agent again on a connection of its own.
type Target struct {
	fleet.Target
	Reach Reach
}

// Run drills each target in turn, never two at once: a drill writes to
// guests, and one at a time keeps a host's I/O and the operator's
// attention on one.
func Run(ctx context.Context, targets []Target, srcErrs []fleet.SourceError, o Options) Result {
	o = o.withDefaults()
	r := Result{SchemaVersion: SchemaVersion, Tool: "guestcheck freeze-drill", Version: buildinfo.Version,
		Host: o.HostName, StartedAt: time.Now().UTC(), DeadlineMS: o.Deadline.Milliseconds(), Status: Pass,
		SourceErrors: srcErrs, VMs: []VM{}}
	if r.Host == "" {
		r.Host, _ = os.Hostname()
	}
	if len(srcErrs) > 0 {
		r.Status = Unknown
	}
	for _, t := range targets {
		if o.Progress != nil {
			o.Progress(t.Name)
		}
		vm := drillVM(ctx, t, o)
		if vm.Status.Worse(r.Status) {
			r.Status = vm.Status
		}
		r.VMs = append(r.VMs, vm)
	}
	r.DurationMS = time.Since(r.StartedAt).Milliseconds()
	return r
}

// drillVM drills one VM within o.VMTimeout.
func drillVM(parent context.Context, t Target, o Options) VM {
	start := time.Now()
	vm := VM{Name: t.Name, Source: t.Source, FSBefore: []FS{}, FSAfter: []FS{},
		Hook: Hook{State: HookUnknown, Why: "the drill did not get that far"}, Prediction: Prediction{State: NotCompared, Why: "the drill did not get that far"}}
	defer func() { vm.DurationMS = time.Since(start).Milliseconds() }()
	if t.Unreachable != "" || t.Dial == nil {
		vm.unknown("no guest agent to freeze through: " + cmp(t.Unreachable, "the source gives no agent connection"))
		return vm
	}
	ctx, cancel := context.WithTimeout(parent, o.VMTimeout)
	defer cancel()
	d := &vmDrill{t: t, o: o, vm: &vm}
	d.run(ctx)
	return vm
}

func (vm *VM) unknown(why string) { vm.Status, vm.Reason = Unknown, oneLine(why) }

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// vmDrill is one VM's drill in progress.
type vmDrill struct {
	t       Target
	o       Options
	vm      *VM
	agent   fleet.Agent
	enabled map[string]bool
	osID    string
	out     outcome
}

// needed are the commands without which there is no drill.
var needed = []string{"guest-fsfreeze-status", "guest-fsfreeze-freeze", "guest-fsfreeze-thaw"}

func (d *vmDrill) run(ctx context.Context) {
	if !d.connect(ctx) {
		return
	}
	defer func() {
		if d.agent != nil {
			d.agent.Close()
		}
	}()
	for _, c := range needed {
		if ok, known := d.enabled[c]; known && !ok {
			d.vm.unknown(fmt.Sprintf("the agent's RPC filter blocks %s: this VM's snapshots are never quiesced, and the drill cannot run", c))
			d.vm.Fix = d.filterFix(c)
			return
		}
	}
	var st string
	if err := d.call(ctx, stepTimeout, "guest-fsfreeze-status", nil, &st); err != nil {
		d.vm.unknown("guest-fsfreeze-status: " + d.explain(err))
		return
	}
	if st != "thawed" {
		d.vm.unknown(fmt.Sprintf("refused: the agent reports the guest %s already (a snapshot or backup in progress, or a freeze left behind); the drill leaves it alone", bounded(st, 40)))
		d.vm.Fix = "Find out who froze it (a backup in progress, a failed one) before thawing: once nothing snapshots the VM, thaw it with virsh domfsthaw or guest-fsfreeze-thaw, then drill again."
		return
	}
	d.vm.FSBefore = d.fsinfo(ctx)
	d.predict(ctx)
	logStart, logWhy := d.hookLogSize(ctx)
	if d.o.Progress != nil {
		d.o.Progress(d.t.Name + " (freezing)")
	}
	if !d.freezeAndThaw(ctx) {
		return
	}
	d.vm.FSAfter = d.fsinfo(ctx)
	d.readHook(ctx, logStart, logWhy)
	d.judge()
}

// connect dials the agent and reads guest-info.
func (d *vmDrill) connect(ctx context.Context) bool {
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	a, err := d.t.Dial(cctx)
	if err != nil {
		d.vm.unknown("cannot reach the guest agent: " + d.explain(err))
		return false
	}
	d.agent = a
	widen(a, d.o.VMTimeout)
	var in qga.Info
	if err := a.Exec(cctx, "guest-info", nil, &in); err != nil {
		a.Close()
		d.agent = nil
		d.vm.unknown("the guest agent does not answer guest-info: " + d.explain(err))
		return false
	}
	d.vm.AgentVersion = bounded(in.Version, 64)
	d.enabled = map[string]bool{}
	for i, c := range in.SupportedCommands {
		if i >= 1024 {
			break
		}
		d.enabled[c.Name] = c.Enabled
	}
	var os struct {
		ID string `json:"id"`
	}
	if d.enabled["guest-get-osinfo"] && a.Exec(cctx, "guest-get-osinfo", nil, &os) == nil {
		d.osID = bounded(os.ID, 64)
	}
	return true
}

// call runs one agent command bounded by within.
func (d *vmDrill) call(ctx context.Context, within time.Duration, cmd string, args, result any) error {
	if d.agent == nil {
		return errors.New("no agent connection")
	}
	cctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	return d.agent.Exec(cctx, cmd, args, result)
}

// explain turns an agent error into words.
func (d *vmDrill) explain(err error) string {
	var qe *qga.Error
	switch {
	case errors.As(err, &qe):
		return oneLine(qe.Class + ": " + qe.Desc)
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer in time"
	}
	return oneLine(err.Error())
}

// disabled reports whether err is the agent's RPC filter refusing.
func disabled(err error) bool {
	var qe *qga.Error
	return errors.As(err, &qe) && qe.Class == "CommandNotFound" && strings.Contains(qe.Desc, "disabled")
}

// filterFix is the fix for a blocked freeze RPC, for the guest's
// distribution when guest-get-osinfo names it.
func (d *vmDrill) filterFix(cmd string) string {
	rpcs := "guest-fsfreeze-freeze,guest-fsfreeze-thaw,guest-fsfreeze-status,guest-get-fsinfo"
	switch d.osID {
	case "rhel", "centos", "rocky", "almalinux", "ol", "fedora":
		return "In the guest, add " + rpcs + " to --allow-rpcs in FILTER_RPC_ARGS of /etc/sysconfig/qemu-ga (the RHEL family allows a fixed list), then systemctl restart qemu-guest-agent."
	case "debian", "ubuntu":
		return "In the guest, remove " + cmd + " from block-rpcs in /etc/qemu/qemu-ga.conf (or from --block-rpcs in the qemu-guest-agent unit), then systemctl restart qemu-guest-agent."
	case "sles", "sle-micro", "opensuse-leap", "opensuse-tumbleweed":
		return "In the guest, remove " + cmd + " from block-rpcs in /etc/qemu-ga.conf or /etc/qemu/qemu-ga.conf, and check that SELinux (SLE Micro) lets qemu-ga freeze, then systemctl restart qemu-guest-agent."
	}
	return "In the guest, let qemu-ga run " + rpcs + ": Debian and Ubuntu block RPCs in /etc/qemu/qemu-ga.conf (block-rpcs), the RHEL family allows a list in /etc/sysconfig/qemu-ga (FILTER_RPC_ARGS --allow-rpcs); then systemctl restart qemu-guest-agent (guestcheck --only qemu-guest-agent in the guest names the file in force)."
}

// fsinfo reads guest-get-fsinfo, bounded and checked; nil on failure.
func (d *vmDrill) fsinfo(ctx context.Context) []FS {
	if ok, known := d.enabled["guest-get-fsinfo"]; known && !ok {
		return []FS{}
	}
	var raw []FS
	if err := d.call(ctx, stepTimeout, "guest-get-fsinfo", nil, &raw); err != nil {
		return []FS{}
	}
	out := []FS{}
	for _, f := range raw {
		if len(out) == maxFS {
			break
		}
		if f.Mountpoint == "" || len(f.Mountpoint) > maxField {
			continue
		}
		out = append(out, FS{Mountpoint: printable(f.Mountpoint), Type: printable(bounded(f.Type, 64)), Name: printable(bounded(f.Name, 256))})
	}
	return out
}

// bounded cuts s to n bytes, on a rune boundary.
func bounded(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// oneLine is fleet's one-line form of a guest's or the agent's text, at
// most 300 runes.
func oneLine(s string) string { return fleet.OneLine(s, 300) }

// widen lifts a chardev client's own per-call bound to d, so that the
// context alone bounds a freeze that runs slow hooks.
func widen(a fleet.Agent, d time.Duration) {
	if c, ok := a.(interface{ SetTimeout(time.Duration) }); ok {
		c.SetTimeout(d)
	}
}

// printable replaces control characters (a terminal's escapes among
// them) in a guest's string with '?', keeping its spaces.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return '?'
		}
		return r
	}, s)
}

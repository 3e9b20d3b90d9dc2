package prove

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/host/nocloud"
	"github.com/guestcheck/guestcheck/internal/host/qga"
	"github.com/guestcheck/guestcheck/internal/host/vmm"
)

// Boot outcomes of a clone (CloneResult.Boot).
const (
	BootUp      = "up"      // the clone booted and answered
	BootFailed  = "failed"  // it died, or came up with nothing to judge
	BootTimeout = "timeout" // the run's deadline passed first
)

// Verdict sources (CloneResult.VerdictSource).
const (
	SourceAgent   = "agent"   // guestcheck's report.json through the agent
	SourceConsole = "console" // guestcheck's summary line on the serial console
)

// Timings are a clone's phases in milliseconds; a phase not seen is 0.
type Timings struct {
	Seed       int64 `json:"seed_ms" schema:"req,min=0"`
	Boot       int64 `json:"boot_ms" schema:"req,min=0"`
	CloudInit  int64 `json:"cloud_init_ms" schema:"req,min=0"`
	Guestcheck int64 `json:"guestcheck_ms" schema:"req,min=0"`
	Collection int64 `json:"collection_ms" schema:"req,min=0"`
}

// CloneResult is what one clone showed.
type CloneResult struct {
	Name    string `json:"name" schema:"req,pattern=clone"`
	MAC     string `json:"mac" schema:"req,pattern=mac"`
	Network string `json:"network" schema:"req,nonempty" doc:"the clone's own restrict=on user network"`
	// FirmwareUUID is the clone's SMBIOS system UUID. It is prove's own
	// random choice for a throwaway clone, not the template's, so it is
	// shown in clear even though systemd may have made it the clone's
	// machine-id.
	FirmwareUUID string `json:"firmware_uuid,omitempty" schema:"nonempty" doc:"the clone's SMBIOS system UUID, prove's own random choice"`
	// Boot is up, failed or timeout; Problem says why when not up.
	Boot    string `json:"boot" schema:"req,enum=up|failed|timeout"`
	Problem string `json:"problem,omitempty" doc:"why the clone did not come up, or what broke on the way"`
	// Verdict is guestcheck's boot verdict, nil when there is none;
	// VerdictSource says where it came from.
	Verdict       *BootVerdict `json:"verdict,omitempty" doc:"guestcheck's boot verdict as its summary line states it"`
	VerdictSource string       `json:"verdict_source,omitempty" schema:"enum=agent|console"`
	// Failing are guestcheck's failing checks, "id: summary", but for
	// those that failed on BaselineCodes alone.
	Failing []string `json:"failing,omitempty" doc:"guestcheck's failing checks, \"id: summary\", but for those that failed on baseline findings alone"`
	// Baseline are guestcheck's failing findings of BaselineCodes,
	// "id: code: message": reported, never a reason the clone fails.
	Baseline []string `json:"baseline,omitempty" doc:"guestcheck's failing findings of its security baseline (ssh-auth-baseline, ssh-auth-conditional, ssh-pwauth-unread), \"id: code: message\": reported, never a reason the clone fails"`
	// Checks are guestcheck's checks with their status and summary, when
	// its report came through the agent (the console gives counts only).
	Checks []CheckVerdict `json:"checks,omitempty" doc:"guestcheck's checks, when its report came through the agent"`
	// IdentityOnly is set when guestcheck is not in the image: only
	// identity was compared.
	IdentityOnly bool `json:"identity_only" schema:"req" doc:"guestcheck is not in the image: only identity was compared"`
	// Identity is nil when it could not be read (no agent).
	Identity       *guestid.Identity `json:"identity,omitempty"`
	IdentitySource string            `json:"identity_source,omitempty" schema:"enum=guestcheck|agent" doc:"guestcheck's report, or the agent's own reads"`
	Notes          []string          `json:"notes,omitempty"`
	// ConsoleTail is the console's last lines when the clone failed.
	ConsoleTail []string `json:"console_tail,omitempty"`
	Timings     Timings  `json:"timings" schema:"req" doc:"the clone's phases in milliseconds; 0 is a phase not seen"`
	// BootTime is the time to the verdict and guestcheck's own boot-time
	// finding; nil when the clone gave no verdict.
	BootTime *BootTime `json:"boot_time,omitempty"`
	// Reboot is the second boot under --reboot: nil without it, or when
	// the first boot gave nothing to compare a second one with.
	Reboot *RebootResult `json:"reboot,omitempty"`

	// poweredOff says how the clone powered off for the copies made of
	// its disk (--copy); "" when it did not.
	poweredOff string

	// sealHash is the clone's machine-id as sealprep's template records
	// hash it (sealrecord.HashID), for the comparison with the template's
	// ID before the seal; zero when not read.
	sealHash sealrecord.IDHash
}

// Bounds of a problem or a note in a report.
const (
	textRunes = 1000
	textBytes = 2048
)

// safe is the result with every text that a guest or QEMU could have
// shaped (the console's lines, a problem quoting the console or QEMU's
// stderr, the notes) bounded and stripped of control characters and
// escapes, whatever path it came by: every renderer prints these.
func (c CloneResult) safe() CloneResult {
	c.Problem = safeText(c.Problem, textRunes, textBytes)
	c.Notes = safeTexts(c.Notes, textRunes, textBytes)
	c.ConsoleTail = safeTexts(c.ConsoleTail, lineRunes, lineBytes)
	c.Failing = safeTexts(c.Failing, lineRunes, lineBytes)
	c.Baseline = safeTexts(c.Baseline, lineRunes, lineBytes)
	if len(c.ConsoleTail) > tailLines {
		c.ConsoleTail = c.ConsoleTail[len(c.ConsoleTail)-tailLines:]
	}
	if c.Reboot != nil {
		rb := *c.Reboot
		s := CloneResult{Problem: rb.Problem, Notes: rb.Notes, ConsoleTail: rb.ConsoleTail, Failing: rb.Failing}.safe()
		rb.Problem, rb.Notes, rb.ConsoleTail, rb.Failing = s.Problem, s.Notes, s.ConsoleTail, s.Failing
		c.Reboot = &rb
	}
	return c
}

func safeTexts(l []string, runes, bytes int) []string {
	if l == nil {
		return nil
	}
	out := make([]string, 0, len(l))
	for _, s := range l {
		out = append(out, safeText(s, runes, bytes))
	}
	return out
}

// cloneRun is everything one clone's boot needs.
type cloneRun struct {
	cfg   Config
	clone Clone
	boot  Boot
	jail  Jail // who QEMU runs as
	res   CloneResult
	con   *Console
	vm    *VM
	// rebooted is set for the second boot under --reboot: its report is
	// kept apart from the first boot's.
	rebooted bool
	// powerOff: power the guest off at the end instead of killing QEMU,
	// so that its disk is whole for the copies made of it (--copy).
	powerOff bool
	// copyOf names the clone this one is a copy of (--copy); keptSeed
	// is that clone's seed file when the platform keeps it.
	copyOf, keptSeed string
}

// maxSeed bounds a seed file a copy takes from its source (prove wrote
// it: user-data and network-config are bounded when read).
const maxSeed = 64 << 20

// prepare creates the clone's directory (QEMU's user's own, 0700), its
// overlay on the template, its seed, its console file and, for UEFI, its
// own variable store, each a file of QEMU's user, mode 0600.
func (r *cloneRun) prepare(ctx context.Context, instanceTag string) error {
	c := r.clone
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return err
	}
	if err := r.jail.Own(c.Dir, 0o700); err != nil {
		return err
	}
	if err := r.overlay(ctx); err != nil {
		return err
	}
	if r.keptSeed != "" {
		// A copy that keeps its source's seed gets that very file.
		if err := r.jail.StageFile(r.keptSeed, c.Seed(), maxSeed); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
		return r.freshFiles()
	}
	id, host := fmt.Sprint(c.Index+1), "prove-"+fmt.Sprint(c.Index+1)
	if r.copyOf != "" {
		id, host = c.Name, "prove-"+c.Name
	}
	seed := nocloud.Seed{InstanceID: "prove-" + instanceTag + "-" + id, Hostname: host,
		UserData: r.cfg.UserData, NetworkConfig: r.cfg.NetworkConfig}
	if len(seed.NetworkConfig) == 0 {
		seed.NetworkConfig = DefaultNetworkConfig(c) // netconfig.go: QEMU's restricted DHCP offers no router
	}
	if err := nocloud.Write(c.Seed(), seed); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	if err := r.jail.Own(c.Seed(), 0o600); err != nil {
		return err
	}
	return r.freshFiles()
}

// freshFiles creates the clone's empty console (QEMU's -serial file:
// truncates it) and, for UEFI, copies its variable store.
func (r *cloneRun) freshFiles() error {
	c := r.clone
	if err := r.newConsole(); err != nil {
		return err
	}
	if r.boot.Firmware == FirmwareUEFI {
		return r.jail.StageFile(r.boot.OVMF.Vars, c.Vars(), maxVars)
	}
	return nil
}

// newConsole creates the clone's console file, empty, QEMU's user's.
func (r *cloneRun) newConsole() error {
	c := r.clone
	f, err := os.OpenFile(c.Console(), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	return r.jail.Own(c.Console(), 0o600)
}

// maxVars bounds a UEFI variable store (Debian's are 128 KiB and 528 KiB).
const maxVars = 64 << 20

// overlay creates the clone's qcow2 overlay on the template, or for a
// copy on its source's disk.
func (r *cloneRun) overlay(ctx context.Context) error {
	if r.clone.Base != "" {
		layers := r.boot.layers()
		if len(layers) == 0 {
			return fmt.Errorf("no vetted template chain")
		}
		return overlayOn(ctx, r.cfg.QEMUImg, r.clone.Base, "qcow2", layers[0].VirtualSize, r.clone.Overlay(), r.jail)
	}
	return CreateOverlay(ctx, r.cfg.QEMUImg, r.boot, r.clone.Overlay(), r.jail)
}

// CreateOverlay creates a qcow2 overlay at path on b's template chain, as
// j's user's, with -u: qemu-img writes the top layer's path and format
// into the header without opening it (QEMU is told its backing node
// anyway), and the size comes from the chain.
func CreateOverlay(ctx context.Context, qemuImg string, b Boot, path string, j Jail) error {
	layers := b.layers()
	if len(layers) == 0 || layers[0].VirtualSize <= 0 {
		return fmt.Errorf("no vetted template chain (%d layers)", len(layers))
	}
	top := layers[0]
	return overlayOn(ctx, qemuImg, top.Path, top.Format, top.VirtualSize, path, j)
}

// overlayOn creates a qcow2 overlay at path on backing (of format fmt
// and size bytes), as j's user's.
func overlayOn(ctx context.Context, qemuImg, backing, format string, size int64, path string, j Jail) error {
	args := []string{"create", "-q", "-u", "-f", "qcow2", "-F", format, "-b", backing, path, fmt.Sprint(size)}
	out, err := exec.CommandContext(ctx, qemuImg, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("qemu-img create %s: %v: %s", path, err, vmm.FirstLines(string(out), 2))
	}
	return j.Own(path, 0o600)
}

// run boots the clone and collects its verdict and identity. It always
// stops QEMU before returning.
func (r *cloneRun) run(ctx context.Context, tag string) CloneResult {
	c := r.clone
	r.res = CloneResult{Name: c.Name, MAC: c.MAC, Network: c.Net.String(), FirmwareUUID: c.UUID, Boot: BootFailed}
	t0 := time.Now()
	r.cfg.Progress.Phase(c.Name, "seed and overlay")
	if err := r.prepare(ctx, tag); err != nil {
		r.res.Problem = err.Error()
		return r.res
	}
	r.res.Timings.Seed = ms(time.Since(t0))
	r.cfg.Progress.Phase(c.Name, "booting")
	launched := time.Now()
	a, err := r.bootAgent(ctx)
	// r.vm is the last QEMU: a reboot may have started another.
	defer func() {
		if r.vm != nil {
			r.vm.Stop()
		}
	}()
	if err != nil {
		r.res.Problem = err.Error()
		r.fail(ctx)
		return r.res
	}
	if a == nil {
		r.consoleVerdict()
		return r.res
	}
	defer a.Close()
	r.collect(ctx, a)
	r.phaseTimes(launched)
	if r.cfg.Reboot && r.res.Boot == BootUp && r.res.Problem == "" && r.res.Identity != nil {
		r.reboot(ctx, a)
	}
	if r.powerOff {
		r.shutdown(ctx)
	}
	return r.res
}

// maxAttempts bounds the boots of one clone: a guest kernel under TCG
// now and then panics in its first second (a timer or IO-APIC check that
// the host's load upset), before it runs init; that is booted again on a
// fresh overlay. A panic after init, or any other failure, never is.
const maxAttempts = 3

// bootAgent starts QEMU and waits for the guest agent (see waitAgent), booting
// again after an early kernel panic under TCG. r.vm is the last QEMU.
func (r *cloneRun) bootAgent(ctx context.Context) (*qga.Client, error) {
	c := r.clone
	for attempt := 1; ; attempt++ {
		r.con = NewConsole(c.Console(), time.Now())
		v, err := Start(ctx, r.cfg.QEMU, c, r.boot, Devices{}, r.jail)
		if err != nil {
			return nil, err
		}
		r.vm = v
		a, err := r.waitAgent(ctx)
		st := r.con.State()
		_, ranInit := st.Marks["init"]
		if err == nil || attempt == maxAttempts || ctx.Err() != nil || r.boot.Accel != AccelTCG ||
			ranInit || !strings.Contains(st.Dead, "Kernel panic") {
			return a, err
		}
		r.res.Notes = append(r.res.Notes, fmt.Sprintf("attempt %d: the guest kernel panicked before it ran init (%s), as TCG guests on a loaded host now and then do; booted again on a fresh overlay", attempt, st.Dead))
		v.Kill()
		if err := r.fresh(ctx, attempt); err != nil {
			return nil, err
		}
	}
}

// fresh puts the failed attempt's console aside and gives the clone a new
// overlay (and UEFI variables).
func (r *cloneRun) fresh(ctx context.Context, attempt int) error {
	c := r.clone
	os.Rename(c.Console(), fmt.Sprintf("%s.attempt%d", c.Console(), attempt))
	for _, p := range []string{c.Overlay(), c.QMP(), c.QGA()} {
		os.Remove(p)
	}
	if err := r.overlay(ctx); err != nil {
		return err
	}
	os.Remove(c.Vars())
	return r.freshFiles()
}

// fail records the console tail and whether the deadline ended the boot.
func (r *cloneRun) fail(ctx context.Context) {
	r.con.Poll()
	r.res.Boot = BootFailed
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		r.res.Boot = BootTimeout
	}
	r.res.ConsoleTail = r.con.Tail()
}

// ms rounds a phase's duration up, so a phase that ran in under a
// millisecond shows 0.0s rather than "-", which means it never ran.
func ms(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// ended says why ctx ended: the run's deadline, or an interrupt.
func ended(ctx context.Context) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "the deadline passed"
	}
	return "the run was interrupted"
}

// phaseTimes fills boot, cloud-init and guestcheck from the console's
// markers, when it showed them.
func (r *cloneRun) phaseTimes(launched time.Time) {
	m := r.con.State().Marks
	if d, ok := m["init-local"]; ok {
		r.res.Timings.Boot = ms(d)
		if f, ok := m["cloud-init-finished"]; ok {
			r.res.Timings.CloudInit = ms(f - d)
			if g, ok := m["guestcheck"]; ok && g > f {
				r.res.Timings.Guestcheck = ms(g - f)
			}
		}
	}
}

// noAgentGrace is how long prove waits for the agent after the console
// showed guestcheck's summary line or a login prompt: past it, the guest
// has no agent. qemu-ga starts as soon as its virtio port appears, long
// before either line, so this only covers a loaded host. A variable for
// the tests.
var noAgentGrace = 45 * time.Second

// waitAgent waits until the agent answers (the client), the console
// shows the boot finished without an agent (nil, nil), or the guest
// dies or the deadline passes (an error).
func (r *cloneRun) waitAgent(ctx context.Context) (*qga.Client, error) {
	var finishedAt time.Time
	for {
		r.con.Poll()
		st := r.con.State()
		switch {
		case st.Dead != "":
			return nil, fmt.Errorf("the guest did not come up: %s", st.Dead)
		case st.Overflow:
			return nil, errors.New("the guest wrote more than 64 MiB to its console")
		case !r.vm.Alive():
			return nil, fmt.Errorf("QEMU stopped before the guest came up (%v)", r.vm.exitErr())
		case ctx.Err() != nil:
			return nil, fmt.Errorf("%s before the guest agent answered", ended(ctx))
		}
		_, login := st.Marks["login"]
		if finishedAt.IsZero() && (st.Summary != "" || login) {
			finishedAt = time.Now()
		}
		if !finishedAt.IsZero() && time.Since(finishedAt) > noAgentGrace {
			return nil, nil
		}
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		a, err := qga.Dial(dctx, "unix", r.clone.QGA())
		cancel()
		if err == nil {
			a.SetTimeout(30 * time.Second)
			r.res.Timings.Boot = ms(time.Since(r.con.start))
			return a, nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
}

// consoleVerdict judges a clone without an agent from its console.
func (r *cloneRun) consoleVerdict() {
	st := r.con.State()
	r.res.Notes = append(r.res.Notes, "no guest agent answered: the boot verdict is the console's summary line, and identity was not compared for this clone")
	bv, ok := ParseSummary(st.Summary)
	if !ok {
		r.res.Boot = BootFailed
		r.res.Problem = "the guest booted (a login prompt on the console) but neither the guest agent nor guestcheck's console summary showed up: nothing to judge it by"
		r.res.ConsoleTail = r.con.Tail()
		return
	}
	r.res.Boot, r.res.Verdict, r.res.VerdictSource = BootUp, &bv, SourceConsole
	r.phaseTimes(r.con.start)
	if g, ok := st.Marks["guestcheck"]; ok {
		r.res.BootTime = &BootTime{ToVerdictMS: ms(g)}
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/host/appliance"
	"github.com/guestcheck/guestcheck/internal/host/image"
	"github.com/guestcheck/guestcheck/internal/host/vmm"
	"github.com/guestcheck/guestcheck/internal/seal"
	"github.com/guestcheck/guestcheck/internal/shared/buildinfo"
	"golang.org/x/sys/unix"
)

// applianceJob is what the host asks of the appliance: the command line
// of the run, as the appliance's sealprep needs it.
type applianceJob struct {
	Cmd           string `json:"cmd"`
	Ops           string `json:"ops"`
	Mode          string `json:"mode"`
	Force         bool   `json:"force"`
	Yes           bool   `json:"yes"`
	FSTrim        bool   `json:"fstrim"`
	OpsGiven      bool   `json:"ops_given"`
	ModeGiven     bool   `json:"mode_given"`
	Ask           bool   `json:"ask"`
	Unconfirmable bool   `json:"unconfirmable"`
	// File is the image's path on the host, for messages; Format its
	// format (raw or qcow2), for the plan's header.
	File   string `json:"file"`
	Format string `json:"format"`
}

// applianceEnv is what the host side of the appliance takes from the
// environment: tests point the init binary and the cache elsewhere.
type applianceEnv struct {
	qemu, init, cacheDir string
	timeout              time.Duration
}

func applianceSettings(e env) (applianceEnv, error) {
	a := applianceEnv{init: os.Getenv("SEALPREP_APPLIANCE_INIT"), cacheDir: os.Getenv("SEALPREP_APPLIANCE_CACHE")}
	if a.init == "" {
		exe, err := os.Executable()
		if err != nil {
			return a, err
		}
		a.init = exe
	}
	if a.cacheDir == "" {
		a.cacheDir = "/var/cache/sealprep/appliance"
		if os.Geteuid() != 0 {
			d, err := os.UserCacheDir()
			if err != nil {
				return a, err
			}
			a.cacheDir = filepath.Join(d, "sealprep", "appliance")
		}
	}
	if t := os.Getenv("SEALPREP_APPLIANCE_TIMEOUT"); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil {
			return a, fmt.Errorf("SEALPREP_APPLIANCE_TIMEOUT=%s: %v", t, err)
		}
		a.timeout = d
	}
	q, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		return a, &image.Refusal{Reason: "qemu-system-x86_64 is missing (Debian package qemu-system-x86): --image seals inside the sealing appliance, a QEMU VM"}
	}
	a.qemu = q
	return a, nil
}

// runAppliance seals the image inside the sealing appliance: the image is
// vetted and its partition table read in Go here, then a throwaway QEMU
// boots a kernel of this host's with sealprep as its init, which mounts
// the image's filesystems in its own kernel, seals, and reports back over
// a virtio-serial port. The report is hostile input: cleaned, decoded
// strictly and held to how the appliance ended.
func runAppliance(ctx context.Context, signalled func() os.Signal, o *options, ops []seal.Operation, stdin io.Reader, stdout, stderr io.Writer, e env) int {
	start := time.Now()
	sess, err := image.Prepare(ctx, o.image, image.Options{ReadOnly: o.cmd != "apply", StateDir: e.imageStateDir, Policy: image.Policy{AllowBacking: o.allowBacking}})
	if err != nil {
		return imageOpenFailed(o, ops, stdin, stdout, stderr, e, start, signalled, err)
	}
	defer sess.Close()
	cfg, kernel, err := applianceConfig(ctx, o, sess, stdin, e)
	if err != nil {
		return imageOpenFailed(o, ops, stdin, stdout, stderr, e, start, signalled, err)
	}
	cfg.Confirm = applianceConfirm(o, e, stdin, stderr)
	cfg.Progress = func(line string) { fmt.Fprintln(stderr, line) }
	res, err := appliance.Run(ctx, cfg)
	if err != nil {
		if s := signalled(); s != nil {
			fmt.Fprintf(stderr, "sealprep: interrupted by %v; the appliance was stopped, run again to finish\n", s)
			return seal.ExitProblem
		}
		fmt.Fprintf(stderr, "sealprep: --image %s: %v\n", o.image, err)
		return seal.ExitProblem
	}
	rep, err := decodeApplianceReport(res.Report, res.Exit, o.cmd)
	if err != nil {
		fmt.Fprintf(stderr, "sealprep: --image %s: the appliance's report is refused: %v\n", o.image, err)
		return seal.ExitProblem
	}
	if rep.Image == nil {
		rep.Image = &seal.ImageInfo{Mounts: []seal.ImageMount{}}
	}
	rep.Image.File, rep.Image.Format, rep.Image.Backing = sess.File, sess.Format, sess.Chain.Backing()
	rep.Image.Notes = append(append([]string(nil), sess.Notes...), rep.Image.Notes...)
	rep.Image.Recovered = sess.Recovered
	rep.Image.Appliance = &seal.ApplianceInfo{Kernel: kernel.Version, Accel: cfg.Accel,
		Seconds: float64(res.Duration.Milliseconds()) / 1000, BootSeconds: float64(res.Boot.Milliseconds()) / 1000}
	rep.Root = o.image
	rep.StartedAt = start.UTC()
	rep.DurationMS = time.Since(start).Milliseconds()
	return finish(o, e, rep, stdout, stderr)
}

// applianceConfig finds everything the appliance needs: the image's
// filesystem types, a kernel, QEMU, the accelerator and the jail. What is
// missing is a refusal: nothing was changed.
func applianceConfig(ctx context.Context, o *options, sess *image.Session, stdin io.Reader, e env) (appliance.Config, appliance.Kernel, error) {
	var cfg appliance.Config
	set, err := applianceSettings(e)
	if err != nil {
		return cfg, appliance.Kernel{}, err
	}
	parts, err := sess.ScanChain(ctx)
	if err != nil {
		return cfg, appliance.Kernel{}, err
	}
	types := applianceFSTypes(parts)
	k, err := appliance.FindKernel(o.applianceKernel, "/boot", "/lib/modules")
	if err != nil {
		return cfg, k, &image.Refusal{Reason: err.Error()}
	}
	ac, err := vmm.ChooseAccel(o.accel, "/dev/kvm", "/proc/cpuinfo")
	if err != nil {
		return cfg, k, &image.Refusal{Reason: err.Error()}
	}
	j, err := vmm.NewJail(ac.Accel, "/dev/kvm")
	if err != nil {
		return cfg, k, err
	}
	job, _ := json.Marshal(applianceJob{Cmd: o.cmd, Ops: o.ops, Mode: o.mode, Force: o.force, Yes: o.yes, FSTrim: o.fstrim,
		OpsGiven: o.opsGiven, ModeGiven: o.modeGiven, File: sess.File, Format: sess.Format,
		Ask: o.cmd == seal.CommandApply && !o.yes && askable(e, stdin), Unconfirmable: len(unconfirmable(o, e, stdin)) > 0})
	cfg = appliance.Config{QEMU: set.qemu, Kernel: k, Init: set.init, CacheDir: set.cacheDir, Accel: ac.Accel,
		Layers: sess.Chain.Layers, Write: o.cmd == seal.CommandApply, FSTypes: types, Job: job, Timeout: set.timeout, Jail: j}
	return cfg, k, nil
}

// applianceFSTypes are the filesystem types whose modules the appliance
// loads: those of the image's partitions, and, when it has an LVM PV,
// the device mapper and every type sealprep mounts (what is inside a
// logical volume is read only in the appliance).
func applianceFSTypes(parts []image.Part) []string {
	var types []string
	for _, p := range parts {
		if p.Mountable() {
			types = append(types, p.FS.Type)
		}
		if p.Container == "lvm" {
			types = append(types, "lvm", "ext4", "xfs", "btrfs", "vfat")
		}
	}
	return types
}

// applianceConfirm is apply's question on this terminal, about the plan
// the appliance sends: the same question as for --root.
func applianceConfirm(o *options, e env, stdin io.Reader, stderr io.Writer) func([]byte) bool {
	ask := confirm(o, e, stdin, stderr)
	if ask == nil {
		return nil
	}
	return func(b []byte) bool {
		plan, err := decodeStrict(b)
		if err != nil {
			fmt.Fprintf(stderr, "sealprep: the appliance's plan is refused: %v\n", err)
			return false
		}
		if plan.Image != nil {
			plan.Image.File = o.image
		}
		return ask(plan) == nil
	}
}

// decodeStrict decodes a report of sealprep's JSON shape and nothing
// else: no unknown field, no trailing data.
func decodeStrict(b []byte) (seal.Report, error) {
	var r seal.Report
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, err
	}
	if dec.More() {
		return r, errors.New("data after the report")
	}
	return r, nil
}

// decodeApplianceReport holds the appliance's report to what was asked:
// sealprep's schema, the command run, a known status, and the exit code
// the appliance gave it being the one the report itself calls for.
func decodeApplianceReport(b []byte, exit int, cmd string) (seal.Report, error) {
	r, err := decodeStrict(b)
	if err != nil {
		return r, err
	}
	switch {
	case r.SchemaVersion != seal.SchemaVersion || r.Tool != "sealprep":
		return r, fmt.Errorf("not a sealprep report of schema %d", seal.SchemaVersion)
	case r.Command != cmd:
		return r, fmt.Errorf("it reports %q, and %q was asked", r.Command, cmd)
	}
	switch r.Status {
	case seal.StatusPlanned, seal.StatusSealed, seal.StatusNotSealed, seal.StatusFailed, seal.StatusRefused:
	default:
		return r, fmt.Errorf("unknown status %q", r.Status)
	}
	if code := seal.ExitCode(r); code != exit {
		return r, fmt.Errorf("its status %s calls for exit code %d, and the appliance ended with %d", r.Status, code, exit)
	}
	return r, nil
}

// applianceInit is sealprep as the appliance's PID 1: it never returns.
// Whatever happens, the host is told (a report, or an error) and the
// appliance powers off.
func applianceInit() {
	var port *os.File
	defer func() {
		// A panic would end PID 1, and the kernel with it: say it, and
		// power off as on every other path.
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "sealprep appliance: panic: %v\n%s\n", r, debug.Stack())
			if port != nil {
				sendMsg(port, appliance.Message{Type: appliance.MsgError, Text: fmt.Sprintf("sealprep failed inside the appliance: %v", r)})
			}
			appliance.PowerOff()
		}
	}()
	var err error
	port, err = applianceStart()
	if err != nil {
		fmt.Fprintf(os.Stderr, "sealprep appliance: %v\n", err)
		if port != nil {
			sendMsg(port, appliance.Message{Type: appliance.MsgError, Text: err.Error()})
		}
		appliance.PowerOff()
	}
	applianceSeal(port)
	appliance.PowerOff()
}

// applianceStart mounts the kernel's filesystems, loads the modules, then
// opens the port and says that the appliance is ready.
func applianceStart() (*os.File, error) {
	if err := appliance.Boot(); err != nil {
		return nil, err
	}
	// virtio_console is a module: the port comes after the modules, and
	// a failure to load them can only go to the console.
	if err := appliance.LoadModules(); err != nil {
		return nil, err
	}
	port, err := appliance.OpenPort(30 * time.Second)
	if err == nil {
		err = sendMsg(port, appliance.Message{Type: appliance.MsgReady})
	}
	return port, err
}

// sendMsg writes one message line on the port.
func sendMsg(port io.Writer, m appliance.Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = port.Write(append(b, '\n'))
	return err
}

// portLines turns apply's progress lines into progress messages. A line
// of sealRoot's own failure ("sealprep: ...") is kept back instead: it
// is the error message the host prints, once.
type portLines struct {
	port   io.Writer
	buf    []byte
	failed []string
}

func (p *portLines) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := string(p.buf[:i])
		p.buf = p.buf[i+1:]
		if msg, ok := strings.CutPrefix(line, "sealprep: "); ok {
			p.failed = append(p.failed, msg)
			continue
		}
		sendMsg(p.port, appliance.Message{Type: appliance.MsgProgress, Text: line})
	}
}

// applianceSeal runs the job on /dev/vda and reports.
func applianceSeal(port *os.File) {
	fail := func(err error) { sendMsg(port, appliance.Message{Type: appliance.MsgError, Text: err.Error()}) }
	b, err := appliance.Job()
	if err != nil {
		fail(err)
		return
	}
	var job applianceJob
	if err := json.Unmarshal(b, &job); err != nil {
		fail(fmt.Errorf("the job: %v", err))
		return
	}
	o := &options{cmd: job.Cmd, ops: job.Ops, mode: job.Mode, force: job.Force, yes: job.Yes, fstrim: job.FSTrim,
		opsGiven: job.OpsGiven, modeGiven: job.ModeGiven, image: job.File, format: "json"}
	ops, err := seal.Select(seal.All, o.ops)
	if err != nil {
		fail(err)
		return
	}
	if err := appliance.WaitFor("/dev/vda", 30*time.Second); err != nil {
		fail(err)
		return
	}
	ctx := context.Background()
	start := time.Now()
	sess, err := image.OpenDevice(ctx, "/dev/vda", job.File, image.Options{ReadOnly: o.cmd != seal.CommandApply, StateDir: "/run/sealprep/image"})
	if err != nil {
		var ref *image.Refusal
		if !errors.As(err, &ref) {
			fail(err)
			return
		}
		meta := seal.Meta{Tool: "sealprep", Version: buildinfo.Version, Command: o.cmd, Root: o.image,
			MachineIDMode: seal.MachineIDMode(o.mode), Operations: ops, StartedAt: start, Duration: time.Since(start),
			Image: &seal.ImageInfo{File: job.File, Mounts: []seal.ImageMount{}}}
		refs := []seal.Refusal{{Op: seal.OpImage, Message: ref.Reason}}
		if job.Unconfirmable {
			refs = append(refs, seal.Refusal{Op: seal.OpConfirm, Message: notTerminal, Fix: "add --yes to apply without asking"})
		}
		sendReport(port, seal.RefusedReport(meta, seal.Plan{}, refs, nil))
		return
	}
	rep, errText, ok := applianceRun(ctx, o, ops, sess, job, port)
	cerr := sess.Close()
	unix.Sync()
	if !ok {
		fail(errors.New(strings.TrimSpace(errText)))
		return
	}
	if rep.Image != nil {
		if cerr != nil {
			rep.Image.DetachError = cerr.Error()
		} else {
			rep.Image.Detached = true
		}
	}
	sendReport(port, rep)
}

// applianceRun seals the mounted image as --root would; apply's
// question, when there is one, goes to the host, whose user answers it.
func applianceRun(ctx context.Context, o *options, ops []seal.Operation, sess *image.Session, job applianceJob, port *os.File) (seal.Report, string, bool) {
	root, err := fs.OpenConfined(sess.Root)
	if err != nil {
		return seal.Report{}, "cannot open the image's mounted root: " + err.Error(), false
	}
	defer root.Close()
	e := env{all: seal.All, live: &seal.SystemLive{}, hostRead: os.ReadFile, booted: func() bool { return false }, ctx: ctx,
		isTerminal: func(io.Reader) bool { return job.Ask }}
	if job.Ask {
		e.confirmPlan = func(plan seal.Report) error {
			b, _ := json.Marshal(plan)
			if err := sendMsg(port, appliance.Message{Type: appliance.MsgConfirm, Report: b}); err != nil {
				return err
			}
			if yes, err := appliance.Answer(port); err != nil || !yes {
				return errors.New("not confirmed: the answer was not y or yes")
			}
			return nil
		}
	}
	progress := &portLines{port: port}
	info := imageInfo(sess)
	info.Format = job.Format
	rep, code := sealRoot(o, ops, root, info, strings.NewReader(""), progress, e)
	if code >= 0 {
		return rep, strings.Join(progress.failed, "; "), false
	}
	return rep, "", true
}

// sendReport sends the report, then done with the same exit code.
func sendReport(port io.Writer, rep seal.Report) {
	b, _ := json.Marshal(rep)
	code := seal.ExitCode(rep)
	sendMsg(port, appliance.Message{Type: appliance.MsgReport, Report: b, Exit: &code})
	sendMsg(port, appliance.Message{Type: appliance.MsgDone, Exit: &code})
}

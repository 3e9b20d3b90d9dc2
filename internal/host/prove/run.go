package prove

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/image"
)

// Refusal is a reason prove did not boot anything: a usage problem, a
// template in use, a missing tool. Its exit code is 3.
type Refusal struct{ Reason string }

func (r *Refusal) Error() string { return r.Reason }

func refuse(format string, args ...any) error { return &Refusal{fmt.Sprintf(format, args...)} }

// Report is a prove run's result; renderers are pure functions of it.
type Report struct {
	SchemaVersion int    `json:"schema_version" schema:"req,const=1"`
	Tool          string `json:"tool" schema:"req,const=sealprep"`
	Command       string `json:"command" schema:"req,const=prove"`
	Version       string `json:"version" schema:"req,nonempty"`
	Image         struct {
		File   string `json:"file" schema:"req,nonempty" doc:"the template image as given"`
		Format string `json:"format" schema:"req,enum=qcow2|raw"`
		// Backing is the template's vetted backing chain, nearest
		// first: every clone reads it, read-only.
		Backing []BackingFile `json:"backing,omitempty" doc:"the template's backing chain as vetted before anything booted, nearest first; every clone reads it read-only"`
	} `json:"image" schema:"req"`
	Accel          string `json:"accel" schema:"req,enum=kvm|tcg"`
	AccelReason    string `json:"accel_reason" schema:"req,nonempty" doc:"why this accelerator: the flag, or what auto found"`
	Firmware       string `json:"firmware" schema:"req,enum=bios|uefi|kernel" doc:"kernel: direct kernel boot (--kernel)"`
	FirmwareReason string `json:"firmware_reason" schema:"req,nonempty"`
	// FirmwareUUID is per-clone or shared: whether the clones got a
	// firmware UUID each or one between them (CloneResult.FirmwareUUID).
	FirmwareUUID string `json:"firmware_uuid,omitempty" schema:"enum=per-clone|shared" doc:"whether the clones got a firmware UUID each or one between them"`
	MemoryMiB    int    `json:"memory_mib" schema:"req,min=1" doc:"each clone's memory"`
	CPUs         int    `json:"cpus" schema:"req,min=1" doc:"each clone's vCPUs"`
	// Proven is the verdict: every clone came up healthy and no identity
	// item is shared.
	Proven bool          `json:"proven" schema:"req" doc:"every clone came up healthy and no identity item is shared; exit code 0"`
	Clones []CloneResult `json:"clones" schema:"req,minitems=1"`
	// Copies are --copy's platform copies of clone-1, none without it.
	Copies     []CopyResult        `json:"copies,omitempty" doc:"--copy: copies of clone-1 as each platform makes them, booted from its disk after it powered off"`
	Template   TemplateIdentity    `json:"template" schema:"req" doc:"the template as read offline (root only), and sealprep's template record when it has one"`
	Items      []ItemResult        `json:"items" schema:"req" doc:"one entry per identity item, in report order"`
	Collisions []guestid.Collision `json:"collisions" schema:"req" doc:"identity values two or more members (clones, and the template as \"template\") share"`
	Failures   []Failure           `json:"failures" schema:"req" doc:"every reason the template is not proven: a clone that failed (clone), or a shared item (item)"`
	Notes      []string            `json:"notes,omitempty"`
	// BootBudgetMS is --boot-budget, 0 without it.
	BootBudgetMS int64 `json:"boot_budget_ms,omitempty"`
	// Kept is --keep's directory, when the clones' files were kept.
	Kept       string    `json:"kept,omitempty" doc:"--keep's directory"`
	StartedAt  time.Time `json:"started_at" schema:"req"`
	DurationMS int64     `json:"duration_ms" schema:"req,min=0"`
	// PeakRSSKiB is the prove process's own peak resident memory
	// (VmHWM), apart from the QEMU processes.
	PeakRSSKiB int64 `json:"peak_rss_kib" schema:"req,min=0" doc:"the prove process's own peak resident memory (VmHWM), without QEMU"`
}

// BackingFile is one file of the template's backing chain.
type BackingFile struct {
	File   string `json:"file" schema:"req,nonempty" doc:"the backing file's absolute path"`
	Format string `json:"format" schema:"req,enum=qcow2|raw" doc:"its format, stated by the layer above and confirmed by its own header"`
	// Named is the name the layer above wrote in its header.
	Named string `json:"named" schema:"req,nonempty" doc:"the name the layer above wrote in its header"`
}

// Exit codes.
const (
	ExitProven  = 0 // every clone healthy, nothing shared
	ExitFailed  = 1 // a clone failed or identity is shared
	ExitRefused = 3 // usage error or refusal: nothing was booted
)

// ExitCode is the report's exit code.
func ExitCode(r Report) int {
	if r.Proven {
		return ExitProven
	}
	return ExitFailed
}

// TemplateReader reads the template's identity offline (sealprep passes
// one that attaches the image read-only as root); nil leaves it unread.
type TemplateReader func(ctx context.Context, file string) TemplateIdentity

// Run proves cfg.Image. An error is a *Refusal (nothing booted) or a
// failure to set up; a report with Proven false is a template that
// failed.
func Run(ctx context.Context, cfg Config, readTemplate TemplateReader) (Report, error) {
	cfg = cfg.withDefaults()
	start := time.Now()
	if err := cfg.Validate(); err != nil {
		return Report{}, &Refusal{err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	rep := Report{SchemaVersion: 1, Tool: "sealprep", Command: "prove", Version: cfg.Version, StartedAt: start.UTC(),
		MemoryMiB: cfg.MemoryMiB, CPUs: cfg.CPUs, FirmwareUUID: cfg.FirmwareUUID, Clones: []CloneResult{}, Failures: []Failure{}, Collisions: []guestid.Collision{}}
	// plan hands back the chain it opened even when it then refuses.
	boot, err := plan(ctx, &cfg, &rep)
	if err != nil {
		boot.Chain.Close()
		return Report{}, err
	}
	defer boot.Chain.Close()
	j, err := NewJail(boot.Accel, cfg.KVMDevice)
	if err != nil {
		return Report{}, &Refusal{err.Error()}
	}
	if readTemplate != nil {
		rep.Template = readTemplate(ctx, cfg.Image)
	} else {
		rep.Template = TemplateIdentity{NotRead: "the template's own identity is read only as root"}
	}
	dir, cleanup, err := workDir(cfg.Keep)
	if err != nil {
		return Report{}, err
	}
	defer cleanup()
	if cfg.Keep != "" {
		rep.Kept = dir
	}
	if err := StageBoot(dir, &boot, j); err != nil {
		return Report{}, err
	}
	var tagb [3]byte
	rand.Read(tagb[:])
	tag := hex.EncodeToString(tagb[:])
	rep.Clones = runClones(ctx, cfg, boot, dir, j, tag)
	if len(cfg.Copies) > 0 {
		rep.Copies = runCopies(ctx, cfg, boot, dir, j, rep.Clones[0], tag)
	}
	cfg.Progress.Done()
	var cols []guestid.Collision
	rep.Items, cols = Compare(rep.Clones, rep.Template)
	if cols != nil {
		rep.Collisions = cols
	}
	rep.BootBudgetMS = ms(cfg.BootBudget)
	rep.Failures = append(failures(rep.Clones, rep.Collisions, rep.Template), budgetFailures(rep.Clones, cfg.BootBudget)...)
	rep.Failures = append(rep.Failures, copyFailures(rep.Copies)...)
	if cfg.FirmwareUUID == UUIDShared {
		sharedUUIDCause(rep.Failures)
	}
	rep.Proven = len(rep.Failures) == 0
	rep.DurationMS = ms(time.Since(start))
	rep.PeakRSSKiB = PeakRSS()
	return rep, nil
}

// plan checks the template and the tools and decides the firmware and
// accelerator, all before anything boots.
func plan(ctx context.Context, cfg *Config, rep *Report) (Boot, error) {
	abs, err := filepath.Abs(cfg.Image)
	if err != nil {
		return Boot{}, err
	}
	cfg.Image = abs
	rep.Image.File = abs
	if st, err := os.Stat(abs); errors.Is(err, os.ErrNotExist) {
		return Boot{}, refuse("--image %s: no such file", cfg.Image)
	} else if err != nil || !st.Mode().IsRegular() {
		return Boot{}, refuse("--image %s: not a regular file", cfg.Image)
	}
	for _, t := range []struct{ bin, pkg string }{{cfg.QEMU, "qemu-system-x86"}, {cfg.QEMUImg, "qemu-utils"}} {
		if _, err := exec.LookPath(t.bin); err != nil {
			return Boot{}, refuse("%s is missing (Debian package %s)", t.bin, t.pkg)
		}
	}
	chain, err := image.OpenChain(ctx, cfg.QEMUImg, abs, image.Policy{AllowBacking: cfg.AllowBacking})
	if errors.Is(err, image.ErrInUse) {
		return Boot{}, refuse("the template is in use: a running VM or another tool holds its lock; power it off first (clones of a template that is being written prove nothing)")
	}
	var ir *image.Refusal
	if errors.As(err, &ir) {
		return Boot{}, &Refusal{ir.Reason}
	}
	if err != nil {
		return Boot{}, refuse("--image %s: %v", cfg.Image, err)
	}
	info := chain.Top()
	rep.Image.Format = info.Format
	for _, l := range chain.Layers[1:] {
		rep.Image.Backing = append(rep.Image.Backing, BackingFile{File: l.Path, Format: l.Format, Named: l.Named})
	}
	// From here the chain's files belong to b: Run closes them.
	b := Boot{MemoryMiB: cfg.MemoryMiB, CPUs: cfg.CPUs, Kernel: cfg.Kernel, Initrd: cfg.Initrd, Append: cfg.Append,
		Chain: chain}
	if err := chooseBoot(ctx, cfg, chain, &b, rep); err != nil {
		return b, err
	}
	ac, err := ChooseAccel(cfg.Accel, cfg.KVMDevice, cfg.CPUInfo)
	if err != nil {
		return b, &Refusal{err.Error()}
	}
	b.Accel, rep.Accel, rep.AccelReason = ac.Accel, ac.Accel, ac.Reason
	return b, nil
}

// maxBootFile bounds a kernel, initrd or OVMF code file prove copies.
const maxBootFile = 1 << 30

// StageBoot makes the run's directory QEMU's user's own and copies the
// kernel, initrd and OVMF code into it, pointing b at the copies: QEMU
// runs as that user and must open nothing of root's. It checks that the
// user can reach the directory at all.
func StageBoot(dir string, b *Boot, j Jail) error {
	if err := j.Own(dir, 0o700); err != nil {
		return err
	}
	if err := j.Reachable(dir); err != nil {
		return &Refusal{err.Error()}
	}
	for _, f := range []struct {
		p    *string
		name string
	}{{&b.Kernel, "vmlinuz"}, {&b.Initrd, "initrd"}, {&b.OVMF.Code, "OVMF_CODE.fd"}} {
		if *f.p == "" {
			continue
		}
		dst := filepath.Join(dir, f.name)
		if err := j.StageFile(*f.p, dst, maxBootFile); err != nil {
			return fmt.Errorf("copy %s for QEMU: %w", *f.p, err)
		}
		*f.p = dst
	}
	return nil
}

// chooseBoot picks the firmware: direct kernel boot when --kernel is
// given, else from the disk's partition table.
func chooseBoot(ctx context.Context, cfg *Config, chain *image.Chain, b *Boot, rep *Report) error {
	if cfg.Kernel != "" {
		for _, f := range []string{cfg.Kernel, cfg.Initrd} {
			if f != "" && !regular(f) {
				return refuse("%s: no such file", f)
			}
		}
		b.Firmware, rep.Firmware, rep.FirmwareReason = FirmwareKernel, FirmwareKernel, "--kernel"
		return nil
	}
	head, err := image.ReadHead(ctx, cfg.QEMUImg, chain, headSectors)
	if err != nil {
		return err
	}
	fc, err := ChooseFirmware(head, cfg.Firmware)
	if err != nil {
		return &Refusal{err.Error()}
	}
	if fc.Firmware == FirmwareUEFI {
		if b.OVMF, err = FindOVMF(cfg.OVMFDir); err != nil {
			return &Refusal{err.Error()}
		}
	}
	b.Firmware, rep.Firmware, rep.FirmwareReason = fc.Firmware, fc.Firmware, fc.Reason
	return nil
}

// headSectors is what the firmware choice reads: the MBR, the GPT header
// and a standard GPT entry array (34 sectors), with room to spare.
const headSectors = 64

// workDir is the clones' parent directory: --keep's (created, and kept)
// or a new temporary one (removed by cleanup).
func workDir(keep string) (string, func(), error) {
	if keep != "" {
		// 0711: QEMU's user must pass through to its run's directory.
		if err := os.MkdirAll(keep, 0o711); err != nil {
			return "", nil, refuse("--keep %s: %v", keep, err)
		}
		d, err := os.MkdirTemp(keep, "prove-")
		return d, func() {}, err
	}
	d, err := os.MkdirTemp("", "sealprep-prove-")
	if err != nil {
		return "", nil, err
	}
	return d, func() { os.RemoveAll(d) }, nil
}

// runClones boots every clone in parallel and waits for all of them.
func runClones(ctx context.Context, cfg Config, boot Boot, dir string, j Jail, tag string) []CloneResult {
	out := make([]CloneResult, cfg.Clones)
	var wg sync.WaitGroup
	shared := ""
	for i := range cfg.Clones {
		c, err := NewClone(i, filepath.Join(dir, fmt.Sprintf("clone-%d", i+1)))
		if err != nil {
			out[i] = CloneResult{Name: fmt.Sprintf("clone-%d", i+1), Boot: BootFailed, Problem: err.Error()}.safe()
			continue
		}
		if cfg.FirmwareUUID == UUIDShared {
			if shared == "" {
				shared = c.UUID
			}
			c.UUID = shared
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The copies' source powers off, so that its disk is whole.
			r := &cloneRun{cfg: cfg, clone: c, boot: boot, jail: j, powerOff: i == 0 && len(cfg.Copies) > 0}
			out[i] = r.run(ctx, tag).safe()
		}()
	}
	wg.Wait()
	return out
}

// sharedUUIDCause rewrites the machine-id failure of clones that were
// given one firmware UUID (--firmware-uuid shared): systemd filled their
// empty machine-ids from it, so sealing cannot help; a UUID per VM does.
func sharedUUIDCause(fs []Failure) {
	for i, f := range fs {
		if f.Item == guestid.ItemMachineID && f.Step == "" {
			fs[i].Message += ": the clones share one firmware UUID (--firmware-uuid shared), and systemd fills an empty machine-id from it"
			fs[i].Fix = "give each VM its own firmware UUID (KubeVirt spec.template.spec.domain.firmware.uuid, Proxmox smbios1's uuid, a new VM rather than Harvester's Clone or Restore New); sealing the template cannot help, since the machine-id comes from the UUID"
		}
	}
}

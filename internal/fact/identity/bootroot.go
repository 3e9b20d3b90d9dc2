package identity

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
	"github.com/guestcheck/guestcheck/internal/fact/mounts"
	"github.com/guestcheck/guestcheck/internal/parse/fstab"
)

// RootMode is whether a guest's root file system is read-only when
// systemd (PID 1) starts, which is when it sets up /etc/machine-id,
// before systemd-remount-fs applies fstab: on a read-only root it can
// neither create a missing file nor boot without one.
type RootMode struct {
	// Writable is the answer; Known says whether a boot configuration
	// file decided. Without one, Writable is false (the kernel mounts the
	// root read-only unless its command line says rw) but the command line
	// is out of sight: a separate /boot, a unified kernel image, the
	// hypervisor's -append.
	Writable, Known bool
	// Source is the file (and line) that decided; "" when none did.
	Source string
	// Why is the evidence in a phrase, for findings and plans.
	Why string
}

// MissingMachineIDFatal reports whether a missing /etc/machine-id stops
// the boot: whenever the root is not known to be writable when systemd
// starts. An image without a kernel command line in sight gets the
// kernel's default, read-only; distributions boot with ro anyway.
func (m RootMode) MissingMachineIDFatal() bool { return !m.Writable }

// Cmdline is one kernel command line found in a boot configuration file.
type Cmdline struct {
	Source string // guest path, with the line number for multi-entry files
	Args   string
}

// Boot configuration files that carry kernel command lines, from the
// catalogue's machine-id-cmdline item: kernel-install's command line
// first, then the BLS entry directories (XBOOTLDR /boot, the ESP at /efi
// and /boot/efi), GRUB's generated configurations (Debian, then Red
// Hat), and the files those are generated from.
var (
	cmdlineItem       = catalogue.Lookup(catalogue.MachineIDCmdline)
	KernelCmdlinePath = cmdlineItem.Files()[0]
	// BLSEntriesDirs hold Boot Loader Specification entries.
	BLSEntriesDirs = cmdlineItem.DirPaths(catalogue.StackBoot)[1:]
	// GrubCfgPaths are GRUB's generated configurations.
	GrubCfgPaths = cmdlineItem.Files()[1:3]
	// GrubDefaultPath and GrubDefaultDir hold GRUB_CMDLINE_LINUX, which
	// grub-mkconfig writes into grub.cfg.
	GrubDefaultPath = cmdlineItem.Files()[3]
	GrubDefaultDir  = cmdlineItem.DirPaths(catalogue.StackBoot)[0]
	// GrubenvPaths hold kernelopts= (Red Hat's BLS entries expand it).
	GrubenvPaths = cmdlineItem.Files()[4:]
)

// ReadRootMode decides from a guest's files whether its root is
// read-only when systemd starts. The rule, after the tools that mount it:
//   - /etc/fstab's entry for "/" with ro keeps the root read-only for good;
//     within its options the last of ro and rw wins, and the last entry for
//     "/" wins, as libmount and systemd-remount-fs apply them ("defaults"
//     sets no flag);
//   - each kernel command line (the whole of /etc/kernel/cmdline as
//     kernel-install reads it; every BLS entry's options lines joined, as
//     the Boot Loader Specification concatenates them; each linux line of
//     grub.cfg) mounts the root read-only unless the last of ro and rw on
//     it is rw, as the kernel and systemd's parsers read it;
//   - the image may boot any entry, so the root counts as writable only
//     when at least one command line is found and every one ends in rw.
func ReadRootMode(r fs.Reader) RootMode {
	if b, err := r.ReadFile(mounts.FstabPath); err == nil {
		if line, ro := FstabRootRO(b); ro {
			src := fmt.Sprintf("%s:%d", mounts.FstabPath, line)
			return RootMode{Known: true, Source: src, Why: src + " mounts / read-only"}
		}
	}
	return RootModeOf(ReadCmdlines(r))
}

// maxKernelCmdline bounds the read of the running kernel's command line:
// the kernel's own limit (COMMAND_LINE_SIZE) is at most a few KiB.
const maxKernelCmdline = 64 << 10

// RunningCmdlinePath is where the running kernel shows the command line it
// was booted with.
const RunningCmdlinePath = "/proc/cmdline"

// ReadRunningCmdline is the one reader of the running kernel's command
// line (RunningCmdlinePath), trimmed, for every check and operation that
// asks what the kernel was booted with.
func ReadRunningCmdline(r fs.Reader) (string, error) {
	b, err := r.ReadFileLimit(RunningCmdlinePath, maxKernelCmdline)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// ReadCmdlines returns every kernel command line in a guest's boot
// configuration, in the order ReadRootMode consults them.
func ReadCmdlines(r fs.Reader) []Cmdline {
	var lines []Cmdline
	if b, err := r.ReadFile(KernelCmdlinePath); err == nil {
		lines = append(lines, Cmdline{Source: KernelCmdlinePath, Args: string(b)})
	}
	for _, dir := range BLSEntriesDirs {
		ents, err := r.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if e.Kind == fs.KindDir || !strings.HasSuffix(e.Name, ".conf") {
				continue
			}
			src := path.Join(dir, e.Name)
			if b, err := r.ReadFile(src); err == nil {
				lines = append(lines, ParseBLSEntry(src, b)...)
			}
		}
	}
	for _, src := range GrubCfgPaths {
		if b, err := r.ReadFile(src); err == nil {
			lines = append(lines, ParseGrubCfg(src, b)...)
		}
	}
	return lines
}

// RootModeOf applies the command-line half of ReadRootMode's rule to
// lines. Pure.
func RootModeOf(lines []Cmdline) RootMode {
	if len(lines) == 0 {
		return RootMode{Why: "no kernel command line in the image (" + KernelCmdlinePath + ", " + BLSEntriesDirs[0] +
			", grub.cfg), and the kernel mounts the root read-only unless told rw"}
	}
	for _, l := range lines {
		switch CmdlineRoot(l.Args) {
		case "rw":
			continue
		case "ro":
			return RootMode{Known: true, Source: l.Source,
				Why: "the kernel command line in " + l.Source + " mounts the root read-only (ro)"}
		default:
			return RootMode{Known: true, Source: l.Source,
				Why: "the kernel command line in " + l.Source + " says neither ro nor rw, and the kernel then mounts the root read-only"}
		}
	}
	return RootMode{Writable: true, Known: true, Source: lines[0].Source,
		Why: "every kernel command line in the image ends in rw (" + lines[0].Source + ")"}
}

// CmdlineRoot is what one kernel command line says about how the root is
// first mounted: "ro" or "rw" as the last of the two words wins, as the
// kernel and systemd read it; "" when it says neither.
func CmdlineRoot(line string) string {
	last := ""
	for _, w := range strings.Fields(line) {
		if w == "ro" || w == "rw" {
			last = w
		}
	}
	return last
}

// ParseGrubCfg returns the arguments of every "linux", "linuxefi" and
// "linux16" line of a grub.cfg (the kernel path dropped), numbered.
func ParseGrubCfg(src string, b []byte) []Cmdline {
	var out []Cmdline
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "linux", "linuxefi", "linux16":
			out = append(out, Cmdline{Source: fmt.Sprintf("%s:%d", src, n), Args: strings.Join(f[2:], " ")})
		}
	}
	return out
}

// ParseBLSEntry returns the command line of a Boot Loader Specification
// entry: its "options" lines joined with a blank, in order, as the
// specification and systemd-boot combine them; nothing when it has none.
func ParseBLSEntry(src string, b []byte) []Cmdline {
	var opts []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		k, v, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		if k == "options" {
			opts = append(opts, strings.TrimSpace(v))
		}
	}
	if len(opts) == 0 {
		return nil
	}
	return []Cmdline{{Source: src, Args: strings.Join(opts, " ")}}
}

// FstabRootRO reports whether an fstab mounts "/" read-only, and the line
// of the entry that decides: the last of ro and rw among its options wins
// ("defaults" sets no flag in libmount), and the last entry for "/" wins.
func FstabRootRO(b []byte) (line int, ro bool) {
	ents, _ := fstab.Parse(b)
	for _, e := range ents {
		if e.MountPoint == "" || path.Clean(e.MountPoint) != "/" {
			continue
		}
		line, ro = e.Line, false
		for _, o := range e.Options {
			switch o {
			case "ro":
				ro = true
			case "rw":
				ro = false
			}
		}
	}
	return line, ro
}

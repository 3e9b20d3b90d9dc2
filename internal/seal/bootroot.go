package seal

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fs"
	"github.com/guestcheck/guestcheck/internal/guestfile/fstab"
)

// Machine-ID contents, classified the way systemd reads /etc/machine-id
// (id128_read_fd with the plain format, systemd 252): what decides
// whether a clone keeps the template's ID.
type machineIDContent int

const (
	// midEmpty: systemd generates a new ID; not a first boot.
	midEmpty machineIDContent = iota + 1
	// midUninitialized: "uninitialized", with or without a newline;
	// systemd generates a new ID and treats the boot as the first (247+).
	midUninitialized
	// midValid: 32 hex digits, optionally followed by one newline: systemd
	// keeps it, so every clone shares it.
	midValid
	// midInvalid: anything else. systemd ignores it and generates a new
	// ID, which it writes over the file.
	midInvalid
)

// classifyMachineID judges the content of a machine-id file. It follows
// systemd's reader: at most 38 bytes are looked at, the length picks the
// format, and hex digits may be upper or lower case. (systemd 252 also
// takes the all-zero ID; later versions refuse it. It is treated as an ID
// here, so sealprep empties it either way.)
func classifyMachineID(b []byte) machineIDContent {
	if len(b) > 38 {
		return midInvalid
	}
	switch len(b) {
	case 0:
		return midEmpty
	case 13, 14:
		if string(b) == "uninitialized\n"[:len(b)] {
			return midUninitialized
		}
		return midInvalid
	case 33:
		if b[32] != '\n' {
			return midInvalid
		}
		b = b[:32]
		fallthrough
	case 32:
		for _, c := range b {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return midInvalid
			}
		}
		return midValid
	}
	return midInvalid
}

// cmdlineRoot is what one kernel command line says about how the root is
// first mounted: "ro" or "rw" as the last of the two words wins, as the
// kernel and the initrds read it; "" when it says neither.
func cmdlineRoot(line string) string {
	last := ""
	for _, w := range strings.Fields(line) {
		if w == "ro" || w == "rw" {
			last = w
		}
	}
	return last
}

// bootCmdline is one kernel command line found in the image and where.
type bootCmdline struct {
	Source string // guest path, with the line number for multi-entry files
	Args   string
}

// parseGrubCfg returns the arguments of every "linux", "linuxefi" and
// "linux16" line of a grub.cfg (the kernel path dropped), numbered.
func parseGrubCfg(src string, b []byte) []bootCmdline {
	var out []bootCmdline
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "linux", "linuxefi", "linux16":
			out = append(out, bootCmdline{Source: fmt.Sprintf("%s:%d", src, n), Args: strings.Join(f[2:], " ")})
		}
	}
	return out
}

// parseBLSEntry returns the "options" lines of a Boot Loader
// Specification entry (/boot/loader/entries/*.conf), joined as the boot
// loader joins them.
func parseBLSEntry(src string, b []byte) []bootCmdline {
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
	return []bootCmdline{{Source: src, Args: strings.Join(opts, " ")}}
}

// fstabRootRO reports whether an fstab mounts "/" read-only: the last of
// ro and rw among its options wins ("defaults" sets no flag in libmount),
// and the last line for "/" wins.
func fstabRootRO(b []byte) bool {
	ents, _ := fstab.Parse(b)
	ro := false
	for _, e := range ents {
		if e.MountPoint == "" || path.Clean(e.MountPoint) != "/" {
			continue
		}
		ro = false
		for _, o := range e.Options {
			switch o {
			case "ro":
				ro = true
			case "rw":
				ro = false
			}
		}
	}
	return ro
}

// rootAtBoot is how the image's root is mounted when systemd starts.
type rootAtBoot struct {
	ReadOnly bool
	Why      string // the evidence, for notes and reasons
}

// rootAtBoot decides whether the image's root is read-only when systemd
// (PID 1) starts, which is when it sets up /etc/machine-id, before
// systemd-remount-fs applies fstab. The kernel mounts the root read-only
// unless its command line says "rw", and initrds follow the same words.
// So the root counts as writable only when at least one kernel command
// line is found in the image (/etc/kernel/cmdline, the options of
// /boot/loader/entries/*.conf, the linux lines of /boot/grub/grub.cfg and
// /boot/grub2/grub.cfg), every one of them ends in "rw", and /etc/fstab
// does not mount "/" read-only. Anything else counts as read-only.
func (p *Planner) rootAtBoot() rootAtBoot {
	var lines []bootCmdline
	if b, ok, _ := p.readFile("/etc/kernel/cmdline"); ok {
		lines = append(lines, bootCmdline{Source: "/etc/kernel/cmdline", Args: string(b)})
	}
	if ents, err := p.Root.ReadDir("/boot/loader/entries"); err == nil {
		for _, e := range ents {
			if e.Kind != fs.KindRegular || !strings.HasSuffix(e.Name, ".conf") {
				continue
			}
			src := "/boot/loader/entries/" + e.Name
			if b, ok, _ := p.readFile(src); ok {
				lines = append(lines, parseBLSEntry(src, b)...)
			}
		}
	}
	for _, src := range []string{"/boot/grub/grub.cfg", "/boot/grub2/grub.cfg"} {
		if b, ok, _ := p.readFile(src); ok {
			lines = append(lines, parseGrubCfg(src, b)...)
		}
	}
	if b, ok, _ := p.readFile("/etc/fstab"); ok && fstabRootRO(b) {
		return rootAtBoot{ReadOnly: true, Why: "/etc/fstab mounts / read-only"}
	}
	if len(lines) == 0 {
		return rootAtBoot{ReadOnly: true, Why: "no kernel command line in the image (/etc/kernel/cmdline, /boot/loader/entries, grub.cfg), and the kernel mounts the root read-only unless told rw"}
	}
	for _, l := range lines {
		switch cmdlineRoot(l.Args) {
		case "rw":
			continue
		case "ro":
			return rootAtBoot{ReadOnly: true, Why: "the kernel command line in " + l.Source + " mounts the root read-only (ro)"}
		default:
			return rootAtBoot{ReadOnly: true, Why: "the kernel command line in " + l.Source + " says neither ro nor rw, and the kernel then mounts the root read-only"}
		}
	}
	return rootAtBoot{Why: fmt.Sprintf("every kernel command line in the image ends in rw (%s)", lines[0].Source)}
}

package identity

import (
	"errors"
	iofs "io/fs"
	"path"
	"slices"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
)

// The machine-ID leak paths: places that hand systemd a machine ID at
// boot, so that an emptied /etc/machine-id is rewritten with the
// template's on every boot of every clone.

// MachineIDCredentialPaths are the system.machine_id credential in each
// store systemd looks credentials up in by name (systemd.exec(5),
// LoadCredential=), except /run, which a reboot empties: the catalogue's
// machine-id-credential item.
var MachineIDCredentialPaths = catalogue.Lookup(catalogue.MachineIDCredential).Files()

// MachineIDCredential is the credential systemd sets the machine ID from.
const MachineIDCredential = "system.machine_id"

// machineIDParams are the command-line words that hand systemd a machine
// ID: the parameter itself, and a system.machine_id credential set from
// the command line (systemd.system-credentials(7)).
var machineIDParams = []string{
	"systemd.machine_id=",
	"systemd.set_credential=system.machine_id:",
	"systemd.set_credential_binary=system.machine_id:",
}

// StripMachineIDParams removes each machine-ID word from s, with one
// separating blank, and says how many it removed. A word starts at the
// start, after a blank or after a quote (GRUB_CMDLINE_LINUX="..."), and
// ends at a blank or a quote that is not its own (a value may be
// double-quoted: systemd.machine_id="..."). Pure, for the fuzzer.
func StripMachineIDParams(s string) (string, int) {
	n := 0
	for i := 0; i < len(s); {
		if i > 0 && !isWordStart(s[i-1]) {
			i++
			continue
		}
		pfx := ""
		for _, m := range machineIDParams {
			if strings.HasPrefix(s[i:], m) {
				pfx = m
				break
			}
		}
		if pfx == "" {
			i++
			continue
		}
		end := i + len(pfx)
		if end < len(s) && s[end] == '"' {
			if q := strings.IndexByte(s[end+1:], '"'); q >= 0 {
				end += q + 2
			} else {
				end = len(s)
			}
		}
		for end < len(s) && !isBlank(s[end]) && s[end] != '"' && s[end] != '\'' && s[end] != '\n' {
			end++
		}
		start := i
		switch {
		case start > 0 && isBlank(s[start-1]):
			start-- // " word" goes with its blank
		case end < len(s) && isBlank(s[end]):
			end++ // "word " at the start, or after a quote
		}
		s = s[:start] + s[end:]
		n++
		i = start
	}
	return s, n
}

func isBlank(c byte) bool     { return c == ' ' || c == '\t' }
func isWordStart(c byte) bool { return isBlank(c) || c == '"' || c == '\'' || c == '\n' || c == '=' }

// ReadMachineIDLeaks lists where the image hands systemd a machine ID at
// boot: a system.machine_id credential in a credential store, and each
// kernel command line (ReadCmdlines: the ones the image boots with) that
// carries systemd.machine_id= or sets the credential. sealprep's
// machine-id-credential and machine-id-cmdline operations remove them,
// and the sources they are generated from.
func ReadMachineIDLeaks(r fs.Reader) []string {
	var out []string
	for _, p := range MachineIDCredentialPaths {
		if _, err := r.Lstat(p); err == nil {
			out = append(out, p+" (a "+MachineIDCredential+" credential)")
		}
	}
	files, _ := CmdlineFiles(r.ReadDir)
	for _, f := range files {
		b, err := r.ReadFile(f.Path)
		if err != nil {
			continue
		}
		for _, l := range strings.SplitAfter(string(b), "\n") {
			if _, n := StripMachineIDParams(l); n > 0 && f.Line(l) {
				out = append(out, f.Path+" (systemd.machine_id= on the kernel command line)")
				break
			}
		}
	}
	return out
}

// CmdlineFile is a file that carries a kernel command line, or one a
// command line is generated from, and which of its lines do.
type CmdlineFile struct {
	Path string
	// Line reports whether a line holds a command line.
	Line func(string) bool
	// FixedSize: the file is a block rewritten in place (grubenv is 1024
	// bytes that GRUB edits without changing the size).
	FixedSize bool
}

// CmdlineFiles lists every file of the catalogue's machine-id-cmdline
// item, directories expanded through readDir: /etc/kernel/cmdline, the
// GRUB defaults and their drop-ins (GRUB_CMDLINE_LINUX lines), grub.cfg
// (linux lines), grubenv (kernelopts=) and each BLS entry on /boot and
// the ESP (options lines). sealprep's machine-id-cmdline edits exactly
// these, and ReadMachineIDLeaks reads exactly these. A directory that
// readDir cannot list is an error for the caller to judge; missing is not.
func CmdlineFiles(readDir func(string) ([]fs.Entry, error)) ([]CmdlineFile, error) {
	out := []CmdlineFile{
		{Path: KernelCmdlinePath, Line: everyLine},
		{Path: GrubDefaultPath, Line: grubDefaultLine},
	}
	for _, g := range GrubCfgPaths {
		out = append(out, CmdlineFile{Path: g, Line: firstWordIs("linux", "linuxefi", "linux16")})
	}
	for _, g := range GrubenvPaths {
		out = append(out, CmdlineFile{Path: g, Line: grubenvLine, FixedSize: true})
	}
	for _, pl := range cmdlineItem.Dirs() {
		ents, err := readDir(pl.Path)
		if err != nil && !errors.Is(err, iofs.ErrNotExist) {
			return out, err
		}
		line := firstWordIs("options")
		if pl.Path == GrubDefaultDir {
			line = grubDefaultLine
		}
		for _, e := range ents {
			if ok, _ := path.Match(pl.Match, e.Name); ok && e.Kind != fs.KindDir {
				out = append(out, CmdlineFile{Path: path.Join(pl.Path, e.Name), Line: line})
			}
		}
	}
	return out, nil
}

func everyLine(string) bool { return true }

func firstWordIs(words ...string) func(string) bool {
	return func(l string) bool {
		f := strings.Fields(l)
		return len(f) > 0 && slices.Contains(words, f[0])
	}
}

func grubDefaultLine(l string) bool {
	l = strings.TrimSpace(l)
	l = strings.TrimPrefix(l, "export ")
	return strings.HasPrefix(l, "GRUB_CMDLINE_LINUX=") || strings.HasPrefix(l, "GRUB_CMDLINE_LINUX_DEFAULT=")
}

func grubenvLine(l string) bool { return strings.HasPrefix(l, "kernelopts=") }

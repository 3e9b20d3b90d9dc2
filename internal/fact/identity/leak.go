package identity

import (
	"path"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

// The machine-ID leak paths: places that hand systemd a machine ID at
// boot, so that an emptied /etc/machine-id is rewritten with the
// template's on every boot of every clone.

// CredstoreDirs are where systemd looks up credentials by name
// (systemd.exec(5), LoadCredential=), except /run, which a reboot empties.
var CredstoreDirs = []string{
	"/etc/credstore", "/etc/credstore.encrypted",
	"/usr/local/lib/credstore", "/usr/local/lib/credstore.encrypted",
	"/usr/lib/credstore", "/usr/lib/credstore.encrypted",
}

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
	for _, d := range CredstoreDirs {
		p := path.Join(d, MachineIDCredential)
		if _, err := r.Lstat(p); err == nil {
			out = append(out, p+" (a "+MachineIDCredential+" credential)")
		}
	}
	for _, l := range ReadCmdlines(r) {
		if _, n := StripMachineIDParams(l.Args); n > 0 {
			out = append(out, l.Source+" (systemd.machine_id= on the kernel command line)")
		}
	}
	return out
}

package seal

import (
	"bytes"
	"context"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/identity"
)

// The machine-id leak paths: places that hand systemd a machine ID at
// boot, so that an emptied /etc/machine-id is rewritten with the
// template's (or, with "firmware", the SMBIOS product UUID that KubeVirt
// derives from the VM name) on every boot of every clone.

var opMachineIDCmdline = Operation{
	ID:      "machine-id-cmdline",
	Default: true,
	Summary: "drop systemd.machine_id= (and a system.machine_id credential) from /etc/kernel/cmdline, boot loader entries, GRUB defaults, grub.cfg and grubenv",
	Kept:    keptOne("a machine ID on the kernel command line"),
	Doc: Doc{
		What: "drops `systemd.machine_id=…`, `systemd.set_credential=system.machine_id:…` and " +
			"`systemd.set_credential_binary=system.machine_id:…` (one word each, with one separating " +
			"blank; every other byte is kept) from `/etc/kernel/cmdline`; the `options` lines of Boot " +
			"Loader Specification entries in `/boot/loader/entries`, `/efi/loader/entries` and " +
			"`/boot/efi/loader/entries`; `GRUB_CMDLINE_LINUX=` and `GRUB_CMDLINE_LINUX_DEFAULT=` in " +
			"`/etc/default/grub` and `/etc/default/grub.d/*.cfg`; the `linux`/`linuxefi`/`linux16` " +
			"lines of `/boot/grub/grub.cfg` and `/boot/grub2/grub.cfg`; `kernelopts=` in `grubenv` " +
			"(padded back to its 1024 bytes). See [Machine-ID leak paths](#machine-id-leak-paths)",
		Why: "systemd writes the ID from the command line into `/etc/machine-id` on every boot: every " +
			"clone shares it",
	},
	Plan: planMachineIDCmdline,
}

const cmdlineReason = "systemd.machine_id= on the kernel command line makes systemd use that ID on every boot: every clone would share it"

func planMachineIDCmdline(ctx context.Context, p *Planner) ([]Action, error) {
	// The files guestcheck's leak check reads: the command lines the
	// image boots with and the GRUB defaults and environment they are
	// generated from.
	files, err := identity.CmdlineFiles(p.readDir)
	if err != nil {
		return nil, err
	}
	var out []Action
	found := false
	for _, f := range files {
		f := f
		acts, err := p.rewritePath(f.Path, cmdlineReason, func(b []byte) []byte {
			nw, n := stripMachineIDLines(b, f.Line)
			if n == 0 {
				return b
			}
			if f.FixedSize && len(nw) < len(b) {
				nw = append(nw, bytes.Repeat([]byte("#"), len(b)-len(nw))...)
			}
			return nw
		})
		if err != nil {
			return nil, err
		}
		found = found || len(acts) > 0
		out = append(out, acts...)
	}
	if found {
		for _, dir := range []string{"/boot/EFI/Linux", "/efi/EFI/Linux", "/boot/efi/EFI/Linux"} {
			if ents, _ := p.readDir(dir); len(ents) > 0 {
				p.Note(dir, "unified kernel images here embed the command line they were built with, which sealprep does not edit: rebuild them (kernel-install add) after this seal if they were built with systemd.machine_id=")
			}
		}
	}
	// On a live system, the running kernel's command line says whether the
	// next boot would get the ID from somewhere sealprep did not edit (a
	// UKI, the hypervisor's -append, firmware variables).
	if p.Opts.Live && !found {
		if args, err := identity.ReadRunningCmdline(p.Root); err == nil {
			if _, n := identity.StripMachineIDParams(args); n > 0 {
				p.Note(identity.RunningCmdlinePath, "this system was booted with systemd.machine_id= (or a system.machine_id credential) on its kernel command line, and no file sealprep edits carries it (now): if it came from a unified kernel image, the hypervisor's kernel arguments or firmware, every clone booted that way shares the ID; remove it there")
			}
		}
	}
	return out, nil
}

// stripMachineIDLines applies identity.StripMachineIDParams to the lines of b that
// want selects, keeping every other byte.
func stripMachineIDLines(b []byte, want func(string) bool) ([]byte, int) {
	lines := strings.SplitAfter(string(b), "\n")
	total := 0
	for i, l := range lines {
		if l == "" || !want(l) {
			continue
		}
		nw, n := identity.StripMachineIDParams(l)
		if n > 0 {
			lines[i], total = nw, total+n
		}
	}
	if total == 0 {
		return b, 0
	}
	return []byte(strings.Join(lines, "")), total
}

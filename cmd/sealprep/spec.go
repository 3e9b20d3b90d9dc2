package main

import (
	"github.com/guestcheck/guestcheck/internal/host/vmm"
	"github.com/guestcheck/guestcheck/internal/seal"
	"github.com/guestcheck/guestcheck/internal/shared/cli"
)

// allowBacking is the one override of the image header checks: it names
// the exact backing file it allows, never a class of them.
var allowBacking = cli.Option{Long: "allow-backing", Arg: "PATH", Repeat: true, Complete: cli.CompleteFile,
	Help: "With --image: let the image's backing chain use this exact file outside the image's directory (read-only, without symlinks); repeat for each file. Without it such a backing file is refused."}

// helpOption is --help, which every command has.
var helpOption = cli.Option{Long: "help", Short: 'h', Help: "Show this help."}

// targetOptions are the options of plan, apply and verify, in the words
// of each (what it does with the root, whether it changes anything, what
// --force means to it): only apply changes anything.
func targetOptions(verb, changes, force string, ops, format cli.Option) []cli.Option {
	return []cli.Option{
		allowBacking,
		{Long: "root", Arg: "DIR", Help: "Guest root: / (default, the running system), a mounted image or an extracted tree. " + changes, Complete: cli.CompleteDir},
		{Long: "image", Arg: "FILE", Help: "A raw or qcow2 disk image: boot the sealing appliance (a throwaway QEMU VM with a kernel of this host's /boot) to find and mount its root (and /boot, the EFI system partition and /var from its fstab) and " + verb + " it there; this host's kernel never mounts the image's filesystems.", Complete: cli.CompleteFile},
		{Long: "trust-image-filesystems", Help: "With --image: mount the image's filesystems on this host's kernel instead of in the appliance (needs root). Only for an image you built yourself on this host: a crafted filesystem can exploit the kernel that mounts it."},
		{Long: "appliance-kernel", Arg: "FILE", Help: "With --image: the appliance's kernel, a vmlinuz-VERSION whose modules are in /lib/modules/VERSION (default: the newest /boot/vmlinuz-* with its modules).", Complete: cli.CompleteFile},
		{Long: "accel", Arg: "ACCEL", Help: "With --image: the appliance's accelerator: auto (default: KVM when /dev/kvm creates VMs and the CPU has hardware virtualization, else TCG), kvm or tcg.", Complete: cli.CompleteWords, Words: func() []string { return []string{vmm.AccelAuto, vmm.AccelKVM, vmm.AccelTCG} }},
		ops, format,
		{Long: "machine-id-mode", Arg: "MODE", Help: "What /etc/machine-id is left as: empty (default; every systemd generates a new ID at boot) or uninitialized (also runs systemd's first-boot units).", Complete: cli.CompleteWords, Words: func() []string { return []string{string(seal.MachineIDEmpty), string(seal.MachineIDUninitialized)} }},
		{Long: "autorelabel", Help: "On an SELinux image, also create /.autorelabel (operation selinux-autorelabel)."},
		{Long: "force", Help: force},
	}
}

// with joins option lists and adds --help.
func with(o ...[]cli.Option) []cli.Option {
	var out []cli.Option
	for _, l := range o {
		out = append(out, l...)
	}
	return append(out, helpOption)
}

// command is sealprep's whole command line, written once: the parser,
// --help, sealprep(8) and the completions come from it.
func command(all []seal.Operation) *cli.Command {
	ids := func() []string {
		var out []string
		for _, op := range all {
			out = append(out, op.ID)
		}
		return out
	}
	opIDs := func() []string { return append([]string{"defaults", "all"}, ids()...) }
	format := cli.Option{Long: "format", Arg: "FMT", Help: "Report format: text (default) or json.", Complete: cli.CompleteWords, Words: func() []string { return []string{"text", "json"} }}
	ops := cli.Option{Long: "ops", Arg: "SPEC", Help: "The operations: defaults (default), or all (every operation, the opt-in ones too); -ID drops one and +ID adds one (-tmp,+resolv-conf: the defaults with those changes), or an explicit list such as machine-id,ssh-host-keys (see sealprep list).", Complete: cli.CompleteWords, Words: opIDs, ListWords: true, SignedWords: ids}
	target := func(verb, changes, force string) []cli.Option {
		return targetOptions(verb, changes, force, ops, format)
	}
	const applyForce = "Go ahead past the refusals that allow it (each is then listed as forced)."
	applyOnly := []cli.Option{
		{Long: "yes", Short: 'y', Help: "Apply without asking; required without a terminal."},
		{Long: "poweroff", Help: "Power the running system off right after a successful apply, before anything rewrites identity."},
		{Long: "fstrim", Help: "Then discard the free blocks of the root's filesystems, as fstrim(8) does, so that the template stays small."},
	}
	c := (&cli.Command{
		Name:        "sealprep",
		Summary:     "turn a configured VM, a mounted root or an image file into a template",
		ManSection:  8,
		Synopsis:    []string{"COMMAND [OPTIONS]"},
		Description: `Prepare this VM, a mounted image root or an image file to become a template: clear the per-instance identity (machine-id, SSH host keys, cloud-init state, leases, logs and the rest, as sealprep list shows) so that every clone boots as a new machine. sealprep plans as data, applies through one executor and verifies; it never changes anything outside its root, never follows a symlink out of it and never changes an inode that a hard link shares with a file outside.`,
		Options: []cli.Option{
			{Long: "version", Help: "Print the version, commit, build date, Go version and architecture, and exit; with --format json, as JSON."},
			format, helpOption,
		},
		Commands: []*cli.Command{
			{Name: "list", Summary: "list every operation: ID, default or opt-in, what it removes", Synopsis: []string{"[--ops SPEC] [--format FMT]"}, Options: with([]cli.Option{ops, format}),
				Description: `List every operation, the defaults first, then the opt-in ones, each in the order apply runs them: its ID, whether it is a default or opt-in, and what it removes. With --ops, mark the ones a spec selects, to check a spec before plan or apply use it. Reads nothing of this machine.`,
				Sections:    []cli.Section{{Title: "Exit codes", Body: `0 listed; 3 a usage error, such as an operation in --ops that sealprep does not have.`}},
				Examples: []cli.Example{
					{Command: "sealprep list"},
					{Command: "sealprep list --ops -ssh-host-keys,+resolv-conf", Comment: "Which operations this spec selects."},
					{Command: "sealprep list --ops all --format json"},
				}},
			{Name: "plan", Summary: "show every action (path, what will happen, why); changes nothing", Synopsis: []string{"[OPTIONS]"},
				Options:     with(target("plan", "Nothing is changed.", "Plan past the refusals that allow it, as apply --force would (each is then listed as forced).")),
				Description: `Show every action apply would take, grouped by operation: the path, what would happen to it and why; what each operation leaves alone, and why; and every refusal that would stop apply, with its fix. Changes nothing, inside the root or outside it.`,
				Sections:    []cli.Section{{Title: "Exit codes", Body: `0 planned; 1 an operation could not read what it needs (each listed); 3 a usage error, or a refusal that would stop apply (each listed, with its fix). Nothing is changed in any case.`}},
				Examples: []cli.Example{
					{Command: "sealprep plan", Comment: "What apply would remove on this VM."},
					{Command: "sealprep plan --root /mnt/image --ops all", Comment: "Every operation, the opt-in ones too, on a mounted image."},
					{Command: "sealprep plan --image template.qcow2 --format json"},
				}},
			{Name: "apply", Summary: "perform the plan; asks on a terminal unless --yes, and refuses without one", Synopsis: []string{"[OPTIONS] [--yes] [--poweroff] [--fstrim]"},
				Options:     with(target("seal", "Nothing outside it is changed.", applyForce), applyOnly),
				Description: `Plan, then perform every action through one executor, then plan again to verify: the report lists what was done and any identity still left. On a terminal apply shows the plan and asks first; without one it needs --yes. A refusal stops it before anything is changed. It writes the template record (/var/lib/sealprep/template.json) that verify and guestcheck read.`,
				Sections:    []cli.Section{{Title: "Exit codes", Body: `0 applied and sealed (on the running system: applied, and with --poweroff it powers off); 1 an action failed or identity is left (each listed); 3 a usage error, a refusal or a declined confirmation (nothing was changed).`}},
				Examples: []cli.Example{
					{Command: "sealprep apply --yes --poweroff", Comment: "The last step inside the build VM."},
					{Command: "sealprep apply --yes --root /mnt/image --ops -ssh-host-keys", Comment: "A mounted image, keeping its host keys."},
					{Command: "sealprep apply --yes --image template.qcow2 --fstrim", Comment: "An image file, its free blocks discarded afterwards."},
				}},
			{Name: "verify", Summary: "re-plan the operations and machine-id mode apply recorded (or --ops, --machine-id-mode) and report the identity still present", Synopsis: []string{"[OPTIONS]"},
				Options:     with(target("verify", "Nothing is changed.", "Judge the root as apply --force would leave it: the refusals that allow it are listed as forced instead of making the root not sealed; what they concern still counts.")),
				Description: `Check that a root is sealed: plan again the operations and machine-id mode that apply recorded in the template record (or those --ops and --machine-id-mode give) and report every identity item still present. What the record says the seal keeps by choice (default operations left out, refusals --force passed) is a warning, not identity left. Changes nothing.`,
				Sections:    []cli.Section{{Title: "Exit codes", Body: `0 sealed (warnings for what is kept by choice); 1 not sealed: identity is left, or a refusal apply would meet, or a file could not be read (each listed); 3 a usage error. Nothing is changed in any case.`}},
				Examples: []cli.Example{
					{Command: "sealprep verify --root /mnt/image", Comment: "As apply recorded it."},
					{Command: "sealprep verify --root /mnt/image --ops defaults", Comment: "The default operations, whatever apply used."},
					{Command: "sealprep verify --image template.qcow2 --format json"},
				}},
			proveCommand(),
			{Name: "help", Summary: "show the help of sealprep or of one of its commands", Synopsis: []string{"[COMMAND]"}, Args: "COMMAND", Options: []cli.Option{helpOption}},
			{Name: "completion", Summary: "print the shell completion script for bash, zsh or fish", Synopsis: []string{"SHELL"}, Args: "SHELL", Options: []cli.Option{helpOption}},
		},
		Sections: []cli.Section{
			{Title: "Exit codes", Body: `0 planned, applied and sealed, or verified sealed; 1 an action failed or identity is left (each listed); 3 a usage error or a refusal (nothing was changed).

prove: 0 proven (every clone came up healthy and no identity item is shared); 1 a clone failed or an item is shared (each listed, with the fix); 3 a usage error or a refusal, such as a template in use (nothing was booted).

Deleted data stays on the disk until overwritten: this is not a secure erase.`},
			{Title: "Files", Body: `/var/lib/sealprep/template.json is the template record apply leaves in the root: when, by which version, with which operations and machine-id mode. verify reads it; guestcheck reads it to judge a template as a template.`},
		},
		Examples: []cli.Example{
			{Command: "sealprep plan", Comment: "What apply would remove here."},
			{Command: "sealprep apply --yes --poweroff", Comment: "The last step inside the build VM."},
			{Command: "sealprep apply --yes --root /mnt/image", Comment: "Offline, on a mounted image."},
			{Command: "sealprep verify --root /mnt/image --format json"},
			{Command: "sealprep apply --yes --image template.qcow2", Comment: "Offline, no mount needed."},
			{Command: "sealprep prove --image template.qcow2 --junit prove.xml", Comment: "Boot two throwaway clones and prove them healthy and distinct."},
		},
	}).Link()
	c.Sub("help").ArgWords = c.SubNames
	c.Sub("completion").ArgWords = func() []string { return cli.Shells }
	return c
}

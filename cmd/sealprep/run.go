package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/guestcheck/guestcheck/internal/buildinfo"
	"github.com/guestcheck/guestcheck/internal/fs"
	"github.com/guestcheck/guestcheck/internal/seal"
)

const usageText = `Usage: sealprep COMMAND [flags]

Prepare this VM, or a mounted image root, to become a template: clear the
per-instance identity (machine-id, SSH host keys, cloud-init state, leases,
logs, ...) so that every clone boots as a new machine.

Commands:
  list      every operation: ID, default or opt-in, what it does
  plan      every action (path, what will happen, why); changes nothing
  apply     perform the plan; asks on a terminal unless --yes
  verify    re-plan and report the identity still present

Flags:
  --root DIR              guest root: / (default, the running system) or a
                          mounted image or extracted tree
  --image FILE            a raw or qcow2 disk image: attach it, find and
                          mount its root (and /boot, ESP, /var from its
                          fstab), seal, unmount and detach; needs root
  --ops SPEC              defaults (default); -id drops, +id adds, or an
                          explicit list: --ops machine-id,ssh-host-keys
  --format FMT            text (default) or json
  --machine-id-mode MODE  empty (default) or uninitialized
  --yes                   apply without asking (required without a terminal)
  --poweroff              apply: power the live system off right after a
                          successful apply, before anything rewrites identity
  --autorelabel           on an SELinux image, also create /.autorelabel
                          (operation selinux-autorelabel)
  --fstrim                apply: then discard the free blocks of the root's
                          filesystems (FITRIM), so the template stays small
  --force                 override the refusals that allow it
  --version               print the version and exit
  -h, --help              show this help

Exit codes: 0 planned, applied and sealed, or verified sealed; 1 an action
failed or identity is left (each listed); 3 usage error or refusal.
Deleted data stays on the disk until overwritten: this is not a secure erase.

Examples:
  sealprep plan
  sealprep apply --yes --poweroff                 # last step in the guest
  sealprep apply --yes --root /mnt/image          # offline, on a mounted image
  sealprep verify --root /mnt/image --format json
  sealprep apply --yes --image template.qcow2     # offline, no mount needed
`

// env is what run needs from the outside world; tests build their own so
// that nothing stops units, powers off or reads the host.
type env struct {
	all        []seal.Operation
	live       seal.Live
	powerOff   func(ctx context.Context) error
	hostRead   func(string) ([]byte, error)
	isTerminal func(io.Reader) bool
	booted     func() bool
	ctx        context.Context
	// termWidth is the width of the terminal w is, or 0 when w is not a
	// terminal that can rewrite a line: progress then goes out as lines.
	termWidth func(w io.Writer) int
	// imageStateDir is where --image sessions live ("" for the default,
	// /run/sealprep/image).
	imageStateDir string
}

type options struct {
	cmd, root, ops, format, mode string
	yes, poweroff, force         bool
	// image is --image FILE: attach, mount, seal, detach.
	image string
	// fstrim discards free blocks after apply.
	fstrim bool
	// autorelabel adds selinux-autorelabel to the operations.
	autorelabel bool
}

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

var commands = map[string]bool{"list": true, "plan": true, "apply": true, "verify": true}

func parseArgs(args []string) (*options, error) {
	o := &options{}
	if len(args) == 0 {
		return nil, usageError{"missing command (list, plan, apply or verify)"}
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		return nil, flag.ErrHelp
	case "--version", "-version", "version":
		o.cmd = "version"
		return o, nil
	}
	if !commands[args[0]] {
		return nil, usageError{fmt.Sprintf("unknown command %q (want list, plan, apply or verify)", args[0])}
	}
	o.cmd = args[0]
	fl := flag.NewFlagSet("sealprep", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	fl.StringVar(&o.root, "root", "/", "")
	fl.StringVar(&o.ops, "ops", "defaults", "")
	fl.StringVar(&o.format, "format", "text", "")
	fl.StringVar(&o.mode, "machine-id-mode", string(seal.MachineIDEmpty), "")
	fl.BoolVar(&o.yes, "yes", false, "")
	fl.BoolVar(&o.poweroff, "poweroff", false, "")
	fl.BoolVar(&o.force, "force", false, "")
	fl.StringVar(&o.image, "image", "", "")
	fl.BoolVar(&o.fstrim, "fstrim", false, "")
	fl.BoolVar(&o.autorelabel, "autorelabel", false, "")
	version := fl.Bool("version", false, "")
	if err := fl.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usageError{err.Error()}
	}
	if *version {
		o.cmd = "version"
		return o, nil
	}
	if fl.NArg() > 0 {
		return nil, usageError{fmt.Sprintf("unexpected argument %q", fl.Arg(0))}
	}
	if o.format != "text" && o.format != "json" {
		return nil, usageError{fmt.Sprintf("--format %q: want text or json", o.format)}
	}
	if o.mode != string(seal.MachineIDEmpty) && o.mode != string(seal.MachineIDUninitialized) {
		return nil, usageError{fmt.Sprintf("--machine-id-mode %q: want empty or uninitialized", o.mode)}
	}
	if o.poweroff && o.cmd != "apply" {
		return nil, usageError{"--poweroff only goes with apply"}
	}
	if o.autorelabel {
		o.ops += ",+selinux-autorelabel"
	}
	if o.fstrim && o.cmd != "apply" {
		return nil, usageError{"--fstrim only goes with apply"}
	}
	if o.image != "" {
		rootSet := false
		fl.Visit(func(f *flag.Flag) { rootSet = rootSet || f.Name == "root" })
		switch {
		case rootSet:
			return nil, usageError{"--image and --root exclude each other: --image mounts the image's root itself"}
		case o.poweroff:
			return nil, usageError{"--poweroff is for the running system, not --image"}
		}
	}
	return o, nil
}

// run is the whole command behind main, with its I/O and the outside world
// passed in so tests can drive it.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, e env) int {
	o, err := parseArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usageText)
		return seal.ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "sealprep: %v (see --help)\n", err)
		return seal.ExitUsage
	}
	if o.cmd == "version" {
		fmt.Fprintf(stdout, "sealprep %s\n", buildinfo.Version)
		return seal.ExitOK
	}
	ops, err := seal.Select(e.all, o.ops)
	if err != nil {
		fmt.Fprintf(stderr, "sealprep: %v\n", err)
		return seal.ExitUsage
	}
	if o.cmd == "list" {
		l := seal.NewListReport(e.all, ops)
		if o.format == "json" {
			err = seal.WriteJSON(stdout, l)
		} else {
			err = seal.WriteList(stdout, l)
		}
		if err != nil {
			fmt.Fprintf(stderr, "sealprep: write: %v\n", err)
			return seal.ExitProblem
		}
		return seal.ExitOK
	}

	if o.image != "" {
		return runImage(o, ops, stdin, stdout, stderr, e)
	}
	root, err := fs.OpenConfined(o.root)
	if err != nil {
		fmt.Fprintf(stderr, "sealprep: --root: %v\n", err)
		return seal.ExitUsage
	}
	defer root.Close()
	rep, code := sealRoot(o, ops, root, nil, stdin, stderr, e)
	if code >= 0 {
		return code
	}
	return finish(o, e, rep, stdout, stderr)
}

// sealRoot plans, applies or verifies root and returns the report, or an
// exit code (>= 0) when it stopped before making one.
func sealRoot(o *options, ops []seal.Operation, root *fs.Confined, img *seal.ImageInfo, stdin io.Reader, stderr io.Writer, e env) (seal.Report, int) {
	ctx := e.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	req := seal.Request{
		Command:    o.cmd,
		Ops:        ops,
		Opts:       seal.Options{MachineIDMode: seal.MachineIDMode(o.mode), Force: o.force, PowerOff: o.poweroff, Version: buildinfo.Version},
		HostBooted: e.booted,
		HostRead:   e.hostRead,
		Image:      img,
		Confirm:    confirm(o, e, stdin, stderr),
		Interrupt: func(ctx context.Context) (context.Context, context.CancelFunc) {
			return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		},
		Live:         e.live,
		Progress:     progress(stderr, e),
		RelabelFiles: inodesInUse,
	}
	if o.fstrim {
		req.Trim = func() []seal.TrimResult { return trim(root, img) }
	}
	rep, err := seal.Run(ctx, root, req)
	if err != nil {
		fmt.Fprintf(stderr, "sealprep: %v\n", err)
		return seal.Report{}, seal.ExitUsage
	}
	return rep, -1
}

// finish renders the report and, after a sealed apply with --poweroff,
// powers off.
func finish(o *options, e env, rep seal.Report, stdout, stderr io.Writer) int {
	if err := render(stdout, o.format, rep); err != nil {
		fmt.Fprintf(stderr, "sealprep: write report: %v\n", err)
		return seal.ExitProblem
	}
	code := seal.ExitCode(rep)
	ctx := e.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	if o.cmd == "apply" && o.poweroff && code == seal.ExitOK {
		fmt.Fprintln(stderr, "sealprep: sealed; powering off now")
		if err := e.powerOff(ctx); err != nil {
			fmt.Fprintf(stderr, "sealprep: power off: %v\n", err)
			return seal.ExitProblem
		}
	}
	return code
}

// confirm is apply's question on the terminal: the plan, then "y" or
// "yes" to go on. Without a terminal apply needs --yes; with --yes there
// is no question.
func confirm(o *options, e env, stdin io.Reader, stderr io.Writer) func(seal.Report) error {
	if o.yes {
		return nil
	}
	return func(plan seal.Report) error {
		if e.isTerminal == nil || !e.isTerminal(stdin) {
			return errors.New("standard input is not a terminal: pass --yes to apply without asking")
		}
		var buf bytes.Buffer
		seal.WriteText(&buf, plan)
		stderr.Write(buf.Bytes())
		fmt.Fprintf(stderr, "\nApply these %d actions to %s? [y/N] ", len(plan.Actions), plan.Root)
		line, _ := bufio.NewReader(stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			return errors.New("not confirmed")
		}
		return nil
	}
}

// progress is a self-rewriting line on a terminal and, anywhere else (a
// Packer or CI log, a pipe, a file), a line per operation and per failure.
func progress(stderr io.Writer, e env) seal.Progress {
	if e.termWidth != nil {
		if w := e.termWidth(stderr); w > 0 {
			return seal.NewTermProgress(stderr, w)
		}
	}
	return seal.NewLineProgress(stderr)
}

func render(w io.Writer, format string, r seal.Report) error {
	if format == "json" {
		return seal.WriteJSON(w, r)
	}
	return seal.WriteText(w, r)
}

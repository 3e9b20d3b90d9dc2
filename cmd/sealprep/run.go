package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/host/prove"
	"github.com/guestcheck/guestcheck/internal/host/vmm"
	"github.com/guestcheck/guestcheck/internal/seal"
	"github.com/guestcheck/guestcheck/internal/shared/buildinfo"
	"github.com/guestcheck/guestcheck/internal/shared/cli"
	"github.com/guestcheck/guestcheck/internal/shared/suggest"
)

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
	// proveSetup, when set, adjusts prove's configuration (tests point it
	// at a fake QEMU) and chooses how the template's identity is read.
	proveSetup func(*prove.Config) prove.TemplateReader
	// confirmPlan, when set, is apply's question instead of the
	// terminal's: the appliance asks the host's user through its port.
	confirmPlan func(seal.Report) error
}

type options struct {
	// arg is help's COMMAND or completion's SHELL.
	arg                          string
	cmd, root, ops, format, mode string
	yes, poweroff, force         bool
	// opsGiven and modeGiven say that --ops (or --autorelabel) and
	// --machine-id-mode were on the command line: verify then checks
	// those instead of what the template record says apply used.
	opsGiven, modeGiven bool
	// image is --image FILE: seal it through the appliance, or with
	// trustFS (--trust-image-filesystems) on this host's kernel.
	image   string
	trustFS bool
	// applianceKernel and accel are --appliance-kernel and --accel.
	applianceKernel, accel string
	// allowBacking are --allow-backing's exact paths.
	allowBacking []string
	// fstrim discards free blocks after apply.
	fstrim bool
	// autorelabel adds selinux-autorelabel to the operations.
	autorelabel bool
	// prove holds prove's options, which prove.go reads.
	prove *cli.Values
}

// errHelp asks for the help text of the command parseArgs names in
// options.cmd ("" for sealprep's own).
var errHelp = errors.New("help requested")

// parseArgs parses the command line against its one description
// (spec.go).
func parseArgs(cmd *cli.Command, args []string) (*options, error) {
	if len(args) == 0 {
		return nil, cli.Usagef("a command is needed: list, plan, apply, verify or prove (see sealprep --help)")
	}
	name := args[0]
	if strings.HasPrefix(name, "-") {
		v, err := cmd.Parse(args)
		if err != nil {
			return nil, err
		}
		o := &options{format: v.String("format", "text")}
		switch {
		case v.Bool("help"):
			return o, errHelp
		case v.Bool("version"):
			o.cmd = "version"
			return o, cli.OneOf("--format", "format", o.format, []string{"text", "json"})
		}
		return nil, cli.Usagef("a command is needed: list, plan, apply, verify or prove (see sealprep --help)")
	}
	sub := cmd.Sub(name)
	if sub == nil {
		msg := fmt.Sprintf("%q: unknown command", name)
		if s := suggest.Suggest(name, cmd.SubNames()); s != "" {
			msg += "; did you mean " + s + "?"
		}
		return nil, cli.Usagef("%s (one of %s)", msg, strings.Join(cmd.SubNames(), ", "))
	}
	v, err := sub.Parse(args[1:])
	if err != nil {
		return nil, err
	}
	o := &options{cmd: name}
	if v.Bool("help") {
		return o, errHelp
	}
	if name == "help" || name == "completion" {
		if len(v.Args) > 1 || (name == "completion" && len(v.Args) != 1) {
			return nil, cli.Usagef("takes one %s (see sealprep %s --help)", sub.Args, name)
		}
		if len(v.Args) == 1 {
			o.arg = v.Args[0]
		}
		return o, nil
	}
	if len(v.Args) > 0 {
		return nil, cli.Usagef("%q: unexpected argument (see sealprep %s --help)", v.Args[0], name)
	}
	if name == "prove" {
		o.prove = v
		return o, nil
	}
	return o, o.fill(v)
}

// fill reads and validates the options of list, plan, apply and verify.
func (o *options) fill(v *cli.Values) error {
	o.root, o.ops, o.format = v.String("root", "/"), v.String("ops", "defaults"), v.String("format", "text")
	o.mode = v.String("machine-id-mode", string(seal.MachineIDEmpty))
	o.yes, o.poweroff, o.force = v.Bool("yes"), v.Bool("poweroff"), v.Bool("force")
	o.image, o.fstrim, o.autorelabel = v.String("image", ""), v.Bool("fstrim"), v.Bool("autorelabel")
	o.allowBacking = v.All("allow-backing")
	o.trustFS, o.applianceKernel, o.accel = v.Bool("trust-image-filesystems"), v.String("appliance-kernel", ""), v.String("accel", vmm.AccelAuto)
	if err := cli.OneOf("--accel", "accelerator", o.accel, []string{vmm.AccelAuto, vmm.AccelKVM, vmm.AccelTCG}); err != nil {
		return err
	}
	o.opsGiven, o.modeGiven = v.Has("ops") || o.autorelabel, v.Has("machine-id-mode")
	if err := cli.OneOf("--format", "format", o.format, []string{"text", "json"}); err != nil {
		return err
	}
	if err := cli.OneOf("--machine-id-mode", "mode", o.mode, []string{string(seal.MachineIDEmpty), string(seal.MachineIDUninitialized)}); err != nil {
		return err
	}
	if o.autorelabel {
		o.ops += ",+selinux-autorelabel"
	}
	if o.image != "" {
		switch {
		case v.Has("root"):
			return cli.Usagef("--image and --root exclude each other: --image mounts the image's root itself")
		case o.poweroff:
			return cli.Usagef("--poweroff is for the running system, not --image")
		}
	}
	if err := absPaths("--allow-backing", o.allowBacking); err != nil {
		return err
	}
	for _, f := range []string{"trust-image-filesystems", "appliance-kernel", "accel"} {
		if v.Has(f) && o.image == "" {
			return cli.Usagef("--%s goes with --image", f)
		}
	}
	if o.trustFS && (v.Has("appliance-kernel") || v.Has("accel")) {
		return cli.Usagef("--trust-image-filesystems mounts on this host: it boots no appliance, so --appliance-kernel and --accel do not apply")
	}
	if len(o.allowBacking) > 0 && o.image == "" {
		return cli.Usagef("--allow-backing goes with --image: it allows a backing file of that image")
	}
	return nil
}

// run is the whole command behind main, with its I/O and the outside world
// passed in so tests can drive it.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, e env) int {
	cmd := command(e.all)
	o, err := parseArgs(cmd, args)
	if errors.Is(err, errHelp) {
		if sub := cmd.Sub(o.cmd); sub != nil {
			sub.WriteHelp(stdout)
		} else {
			cmd.WriteHelp(stdout)
		}
		return seal.ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "sealprep: %v\n", err)
		return seal.ExitUsage
	}
	switch o.cmd {
	case "version":
		in := buildinfo.Read("sealprep")
		if o.format == "json" {
			in.WriteJSON(stdout)
		} else {
			in.WriteText(stdout)
		}
		return seal.ExitOK
	case "help":
		return runHelp(cmd, o.arg, stdout, stderr)
	case "completion":
		if err := cmd.WriteCompletion(stdout, o.arg); err != nil {
			fmt.Fprintf(stderr, "sealprep completion: %v\n", err)
			return seal.ExitUsage
		}
		return seal.ExitOK
	case "prove":
		return runProve(o.prove, stdout, stderr, e)
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

	if o.cmd == seal.CommandApply && !o.yes && !askable(e, stdin) {
		// Said first, before the plan and before an image is attached,
		// and again among the report's refusals.
		fmt.Fprintf(stderr, "sealprep: add --yes to apply without asking (%s)\n", notTerminal)
	}
	if o.image != "" {
		return runImage(o, ops, stdin, stdout, stderr, e)
	}
	root, err := fs.OpenConfined(o.root)
	if err != nil {
		fmt.Fprintf(stderr, "sealprep: --root %s: %s\n", o.root, fs.RootProblem(err))
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
		OpsGiven:   o.opsGiven,
		ModeGiven:  o.modeGiven,
		All:        e.all,
		Opts:       seal.Options{MachineIDMode: seal.MachineIDMode(o.mode), Force: o.force, PowerOff: o.poweroff, Version: buildinfo.Version},
		HostBooted: e.booted,
		HostRead:   e.hostRead,
		Image:      img,
		Confirm:    confirm(o, e, stdin, stderr),
		Refusals:   unconfirmable(o, e, stdin),
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

// notTerminal is why apply cannot ask.
const notTerminal = "standard input is not a terminal"

// askable reports whether apply can ask its question on stdin.
func askable(e env, stdin io.Reader) bool { return e.isTerminal != nil && e.isTerminal(stdin) }

// unconfirmable is the refusal of an apply without --yes that has no
// terminal to ask on: listed with every other refusal, so that one run
// names all there is to fix.
func unconfirmable(o *options, e env, stdin io.Reader) []seal.Refusal {
	if o.cmd != seal.CommandApply || o.yes || askable(e, stdin) {
		return nil
	}
	return []seal.Refusal{{Op: seal.OpConfirm, Message: notTerminal, Fix: "add --yes to apply without asking"}}
}

// confirm is apply's question on the terminal: the plan, then "y" or
// "yes" to go on. Without a terminal there is no question (unconfirmable
// refuses); with --yes there is none either.
func confirm(o *options, e env, stdin io.Reader, stderr io.Writer) func(seal.Report) error {
	if o.yes || !askable(e, stdin) {
		return nil
	}
	if e.confirmPlan != nil {
		return e.confirmPlan
	}
	return func(plan seal.Report) error {
		var buf bytes.Buffer
		seal.WriteText(&buf, plan)
		stderr.Write(buf.Bytes())
		target := plan.Root
		if plan.Image != nil {
			target = "the image " + plan.Image.File // not the directory it is mounted on
		}
		what := "these actions"
		if len(plan.Actions) == 1 {
			what = "this action"
		}
		fmt.Fprintf(stderr, "\nApply %s (%d) to %s? [y/N] ", what, len(plan.Actions), target)
		line, _ := bufio.NewReader(stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			return errors.New("not confirmed: the answer was not y or yes")
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

// runHelp is `sealprep help [COMMAND]`.
func runHelp(cmd *cli.Command, name string, stdout, stderr io.Writer) int {
	if name == "" {
		cmd.WriteHelp(stdout)
		return seal.ExitOK
	}
	sub := cmd.Sub(name)
	if sub == nil {
		msg := fmt.Sprintf("%q: no such command", name)
		if s := suggest.Suggest(name, cmd.SubNames()); s != "" {
			msg += "; did you mean " + s + "?"
		}
		fmt.Fprintf(stderr, "sealprep help: %s (commands: %s)\n", msg, strings.Join(cmd.SubNames(), ", "))
		return seal.ExitUsage
	}
	sub.WriteHelp(stdout)
	return seal.ExitOK
}

// absPaths holds an option that names exact files to absolute paths: an
// allowance must say which file it allows, wherever sealprep runs from.
func absPaths(flag string, paths []string) error {
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			return cli.Usagef("%s %s: give the absolute path of the file it allows", flag, p)
		}
	}
	return nil
}

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	freezepkg "github.com/guestcheck/guestcheck/internal/fact/freeze"

	cloudinit "github.com/guestcheck/guestcheck/internal/checks/cloud-init"
	fsfreeze "github.com/guestcheck/guestcheck/internal/checks/fs-freeze"
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/shared/buildinfo"
	"github.com/guestcheck/guestcheck/internal/shared/cli"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/suggest"
	"github.com/guestcheck/guestcheck/internal/shared/tty"
)

// options are the parsed command line.
type options struct {
	only, skip, root, configPath              string
	format                                    report.Format
	freezeTest, exitCodes, serviceName        string
	outputs                                   []outputSpec
	timeout, wait                             time.Duration
	list, exitZero, verbose, version, summary bool
	configSet                                 bool
	color                                     string
}

// The --exit-codes schemes.
const (
	exitCodesGuestcheck = "guestcheck"
	exitCodesNagios     = "nagios"
)

// usageError is a command-line or configuration mistake: exit code 3.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// errHelp asks for the help text, with the options parsed so far, so
// that --exit-codes nagios --help can exit 3.
var errHelp = errors.New("help requested")

// parseFlags parses the command line against its one description
// (spec.go). On --help it returns errHelp with the options parsed so far.
func parseFlags(cmd *cli.Command, args []string) (*options, error) {
	v, err := cmd.Parse(args)
	if err != nil {
		return nil, err
	}
	if len(v.Args) > 0 {
		// guestcheck itself takes no arguments: a word is a command
		// misspelt, answered as `guestcheck help WORD` answers it.
		return nil, usageError{noSuchCommand(cmd, v.Args[0], "guestcheck ")}
	}
	o := &options{
		only: v.String("only", ""), skip: v.String("skip", ""), list: v.Bool("list"),
		root: v.String("root", "/"), exitCodes: v.String("exit-codes", exitCodesGuestcheck),
		serviceName: v.String("service-name", report.DefaultServiceName), summary: v.Bool("summary"),
		configPath: v.String("config", config.DefaultPath), configSet: v.Has("config"),
		exitZero: v.Bool("exit-zero"), freezeTest: v.String("freeze-test", ""),
		verbose: v.Bool("verbose"), version: v.Bool("version"), color: v.String("color", "auto"),
	}
	if v.Bool("help") {
		return o, errHelp
	}
	if err := o.finish(v); err != nil {
		return nil, err
	}
	return o, nil
}

// finish validates what parseFlags read, each value up front with a
// suggestion where one is close.
func (o *options) finish(v *cli.Values) error {
	var err error
	if o.timeout, err = v.Duration("timeout"); err != nil {
		return err
	}
	if o.wait, err = v.Duration("wait"); err != nil {
		return err
	}
	format := v.String("format", string(report.FormatText))
	if err := cli.OneOf("--format", "format", format, formatNames()); err != nil {
		return err
	}
	o.format = report.Format(format)
	if err := cli.OneOf("--color", "choice", o.color, colorChoices); err != nil {
		return err
	}
	if err := cli.OneOf("--exit-codes", "scheme", o.exitCodes, []string{exitCodesGuestcheck, exitCodesNagios}); err != nil {
		return err
	}
	if o.exitCodes == exitCodesNagios && o.exitZero {
		return usageError{"--exit-zero and --exit-codes nagios contradict each other: choose one"}
	}
	if err := report.CheckServiceName(o.serviceName); err != nil {
		return usageError{"--service-name: " + err.Error()}
	}
	if err := o.checkPaths(v); err != nil {
		return err
	}
	return o.finishOutputs(v)
}

// finishOutputs reads every --output: its format from an FMT: prefix,
// else from a known extension, else --format's; "-" is standard output.
// Two --output to one file, a .json name under an explicit --format
// text, and --summary beside --output - are refused: each would leave a
// report other than the one asked for.
func (o *options) finishOutputs(v *cli.Values) error {
	explicit := v.Has("format")
	formatUsed := false // by an --output that names no format of its own
	stdout := -1        // index in v.All("output") of an --output -
	var raws []string   // each of o.outputs as typed
	for i, raw := range v.All("output") {
		spec, err := parseOutput(raw)
		if err != nil {
			return usageError{"--output " + raw + ": " + err.Error()}
		}
		if spec.format == "" {
			byDefault, err := outputFormat(raw, &spec, o.format, explicit, formatNames())
			if err != nil {
				return usageError{err.Error()}
			}
			formatUsed = formatUsed || byDefault
		}
		if spec.path == stdoutPath {
			if stdout >= 0 {
				return usageError{"--output - given twice; standard output takes one report"}
			}
			stdout = i
			continue
		}
		if err := distinctOutput(o.outputs, raws, spec, raw); err != nil {
			return usageError{err.Error()}
		}
		o.outputs = append(o.outputs, spec)
		raws = append(raws, raw)
	}
	if stdout >= 0 {
		return o.outputStdout(v.All("output")[stdout], explicit)
	}
	if o.summary && explicit && o.format != report.FormatText && !formatUsed {
		// --summary's line is always text, so such a --format would shape
		// nothing at all; silently printing text instead misleads.
		return usageError{fmt.Sprintf("--summary prints one line of text, so --format %s shapes nothing here: drop --format, or add --output %s:FILE for the %s report", o.format, o.format, o.format)}
	}
	return nil
}

// outputStdout applies "--output [FMT:]-": standard output gets the
// report in FMT, as --format FMT would print it.
func (o *options) outputStdout(raw string, explicit bool) error {
	spec, _ := parseOutput(raw)
	switch {
	case o.summary:
		return usageError{"--output " + raw + ": --summary already prints its line on standard output; drop one of them"}
	case spec.format != "" && explicit && spec.format != o.format:
		return usageError{fmt.Sprintf("--output %s and --format %s both say what standard output gets; give one", raw, o.format)}
	case spec.format != "":
		o.format = spec.format
	}
	return nil
}

// outputFormat fills in the format of spec, an --output typed as raw
// with no FMT: prefix: the one its extension names when the command
// writes that format (formats), else def. An extension that contradicts
// an explicit --format is an error: one of the two is a mistake.
// byDefault is true when def was taken.
func outputFormat(raw string, spec *outputSpec, def report.Format, explicit bool, formats []string) (byDefault bool, err error) {
	ext, known := extensionFormat(spec.path)
	known = known && slices.Contains(formats, string(ext))
	switch {
	case known && explicit && ext != def:
		return false, fmt.Errorf("--output %s: a %s file holds %s, but --format is %s; write %s:%s to keep %s in it, or drop --format", raw, filepath.Ext(spec.path), ext, def, def, spec.path, def)
	case known:
		spec.format = ext
		return false, nil
	}
	spec.format = def
	return true, nil
}

// distinctOutput refuses spec (typed as raw) when one of the earlier
// --output files, typed as raws, is the same file: the second report
// would silently replace the first.
func distinctOutput(earlier []outputSpec, raws []string, spec outputSpec, raw string) error {
	for j, prev := range earlier {
		if sameFile(prev.path, spec.path) {
			return fmt.Errorf("--output %s and --output %s are the same file; give each report its own file", raws[j], raw)
		}
	}
	return nil
}

// stdoutPath is the --output file name that means standard output.
const stdoutPath = "-"

// extensions maps a file name's extension to the format an operator
// means by it, for an --output with no FMT: prefix.
var extensions = map[string]report.Format{
	".txt":   report.FormatText,
	".json":  report.FormatJSON,
	".jsonl": report.FormatJSONL,
	".prom":  report.FormatPrometheus,
	".xml":   report.FormatJUnit,
	".tap":   report.FormatTAP,
}

// extensionFormat is the format p's extension names, if it names one.
func extensionFormat(p string) (report.Format, bool) {
	f, ok := extensions[strings.ToLower(filepath.Ext(p))]
	return f, ok
}

// sameFile reports whether two --output names are one file: the same
// path once made absolute, or an existing file reached by two names.
func sameFile(a, b string) bool {
	aa, errA := filepath.Abs(a)
	ab, errB := filepath.Abs(b)
	if errA == nil && errB == nil && aa == ab {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// checkPaths refuses, before anything runs, a --root or --freeze-test
// that can never be right: an empty --root (it would be the working
// directory), a --freeze-test that is not an absolute path, and "/",
// which the freeze test always refuses.
func (o *options) checkPaths(v *cli.Values) error {
	if v.Has("root") && o.root == "" {
		return usageError{"--root needs a directory: the image's mounted root filesystem, such as /mnt/image"}
	}
	if !v.Has("freeze-test") {
		return nil
	}
	mp := o.freezeTest
	switch {
	case mp == "":
		return usageError{"--freeze-test needs the mount point of the filesystem to freeze and thaw, such as /data"}
	case !filepath.IsAbs(mp):
		return usageError{fmt.Sprintf("--freeze-test %s: give the absolute mount point of the filesystem to freeze and thaw, such as /data", mp)}
	case filepath.Clean(mp) == "/":
		return usageError{fmt.Sprintf("--freeze-test %s: never the root filesystem, which holds guestcheck; give the mount point of another filesystem, such as /data", mp)}
	}
	return nil
}

// freezeTestProblem words a refused --freeze-test for the usage line.
func freezeTestProblem(mp string, err error) string {
	why := err.Error()
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		why = "no such directory"
	case errors.Is(err, freezepkg.ErrRefused):
		_, why, _ = strings.Cut(why, mp+": ")
	}
	return fmt.Sprintf("--freeze-test %s: %s; give the mount point of a data filesystem (findmnt -rno TARGET lists the mounts)", mp, why)
}

// run is the whole command behind main, with its I/O and check registry
// passed in so tests can drive it.
func run(args []string, stdout, stderr io.Writer, all []runner.Check) int {
	cmd := command(all)
	if len(args) > 0 {
		if code, ok := runSubcommand(cmd, args[0], args[1:], stdout, stderr, all); ok {
			return code
		}
	}
	o, err := parseFlags(cmd, args)
	if errors.Is(err, errHelp) {
		cmd.WriteHelp(stdout)
		return o.infoExit()
	}
	if err != nil {
		fmt.Fprintf(stderr, "guestcheck: %v\n", err)
		return report.ExitUsage
	}
	if o.version {
		if err := writeVersion(stdout, "guestcheck", o.format); err != nil {
			return o.usageFailure(stdout, stderr, err.Error())
		}
		return o.infoExit()
	}
	if o.list {
		if err := listChecks(stdout, all, o.format); err != nil {
			return o.usageFailure(stdout, stderr, err.Error())
		}
		return o.infoExit()
	}
	rep, code := o.runChecks(stdout, stderr, all)
	if code >= 0 {
		return code
	}
	return o.emit(rep, stdout, stderr)
}

// runChecks loads the config, selects the checks, wires their Env and
// runs them. It returns the report, or an exit code (>= 0) after a
// configuration mistake, when nothing ran.
func (o *options) runChecks(stdout, stderr io.Writer, all []runner.Check) (report.Report, int) {
	cfg, err := runner.LoadConfig(all, o.configPath, o.configSet)
	if err != nil {
		return report.Report{}, o.usageFailure(stdout, stderr, err.Error())
	}
	selected, err := runner.Select(all, cfg, o.only, o.skip)
	if err != nil {
		return report.Report{}, o.usageFailure(stdout, stderr, err.Error())
	}
	var freeze *runner.FreezeTest
	if o.freezeTest != "" {
		var protect []string
		for _, out := range o.outputs {
			protect = append(protect, out.path) // never freeze where a report goes
		}
		if freeze, err = fsfreeze.FreezeTestFor(selected, o.freezeTest, protect); err != nil {
			return report.Report{}, o.usageFailure(stdout, stderr, err.Error())
		}
	}
	root, err := fs.Open(o.root)
	if err != nil {
		return report.Report{}, o.usageFailure(stdout, stderr, "--root "+o.root+": "+fs.RootProblem(err))
	}
	defer root.Close()
	if freeze != nil && root.IsHost() {
		// Refused before anything runs, as a bad --root is: a report
		// would only say that snapshots go unproven.
		if err := freezepkg.Refusal(freeze.Mountpoint, freeze.Protect); err != nil {
			return report.Report{}, o.usageFailure(stdout, stderr, freezeTestProblem(freeze.Mountpoint, err))
		}
	}

	timeout := cfg.Timeout
	if o.timeout > 0 {
		timeout = o.timeout
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), timeout+o.wait)
	defer cancel()

	sd := systemd.New(root.IsHost())
	defer sd.Close()
	env := &runner.Env{
		Root:     root,
		Live:     root.IsHost(),
		Systemd:  sd,
		Resolver: &net.Resolver{PreferGo: true},
		Config:   cfg,
		Now:      time.Now,
		IsRoot:   os.Geteuid() == 0,

		InterfaceAddrs: net.InterfaceAddrs,
		FreezeTest:     freeze,
	}
	if o.wait > 0 {
		if notice := cloudinit.WaitBeforeChecks(ctx, env, o.wait); notice != "" {
			fmt.Fprintf(stderr, "guestcheck: %s\n", notice)
		}
	}
	identity := startIdentity(func() guestid.Identity { return readIdentity(root, env.Live) }, cfg.CheckTimeout)
	results := runner.Run(ctx, selected, env, runner.RunOptions{Timeout: cfg.CheckTimeoutFor})
	return report.New(results, report.Meta{
		Tool: "guestcheck", Version: buildinfo.Version, Root: root.Dir(),
		Host: runner.ReadHost(root), StartedAt: start, Duration: time.Since(start),
		Identity: identity(),
	}), -1
}

// emit writes the report to stdout and to every --output file and returns
// the exit code. The code is computed once, from the report, in the
// scheme --exit-codes chose; no renderer has a say.
func (o *options) emit(rep report.Report, stdout, stderr io.Writer) int {
	code := report.ExitCode(rep)
	if o.exitCodes == exitCodesNagios {
		code = report.NagiosExitCode(rep)
	}
	var out []byte
	var err error
	if o.summary {
		out = []byte(report.SummaryLine(rep) + "\n")
	} else if out, err = render(rep, o.format, o.renderOptions(colorFor(o.color, stdout))); err != nil {
		fmt.Fprintf(stderr, "guestcheck: render report: %v\n", err)
		return o.ownFailure(code)
	}
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintf(stderr, "guestcheck: write report: %v\n", err)
	}
	lost := false
	for _, spec := range o.outputs {
		// Files never get colour codes, whatever stdout is.
		b, err := render(rep, spec.format, o.renderOptions(false))
		if err == nil {
			err = fs.WriteReport(spec.path, b)
		}
		if err != nil {
			fmt.Fprintf(stderr, "guestcheck: --output %s: report not written: %v\n", spec.path, err)
			lost = true
		}
	}
	if lost {
		// --exit-zero keeps findings from failing cloud-init's runcmd; it
		// never hides a report that was lost.
		return o.ownFailure(code)
	}
	if o.exitZero && (code == report.ExitProblem || code == report.ExitWarn) {
		return report.ExitOK
	}
	return code
}

// usageFailure reports a configuration mistake found after the flags were
// parsed and returns exit code 3 (UNKNOWN for Nagios too). The message goes
// to stderr; with --format nagios also to stdout as an UNKNOWN status line,
// because Nagios shows only stdout.
func (o *options) usageFailure(stdout, stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "guestcheck: %s\n", msg)
	if o.format == report.FormatNagios && !o.summary {
		io.WriteString(stdout, report.NagiosUnknownLine(o.serviceName, msg))
	}
	return report.ExitUsage
}

// infoExit is the exit code of --help, --version and --list: 0, or
// UNKNOWN under --exit-codes nagios, as the plugin guidelines ask.
func (o *options) infoExit() int {
	if o != nil && o.exitCodes == exitCodesNagios {
		return report.NagiosUnknown
	}
	return report.ExitOK
}

// ownFailure is the exit code after guestcheck itself failed (a report it
// could not render or write) on top of a run whose code was code: 1 in
// guestcheck's scheme; UNKNOWN in the Nagios one, unless the run was
// already CRITICAL, which says more.
func (o *options) ownFailure(code int) int {
	if o.exitCodes != exitCodesNagios {
		return report.ExitProblem
	}
	if code == report.NagiosCritical {
		return code
	}
	return report.NagiosUnknown
}

// renderOptions are the renderers' options from the command line; colour
// only where the caller says the output is a terminal.
func (o *options) renderOptions(color bool) report.Options {
	return report.Options{
		Text:   report.TextOptions{Verbose: o.verbose, Color: color},
		Nagios: report.NagiosOptions{ServiceName: o.serviceName, Verbose: o.verbose},
	}
}

// outputSpec is one --output: a file and the format to write it in.
type outputSpec struct {
	format report.Format
	path   string
}

// parseOutput reads "[FMT:]FILE", FMT one of report.Formats; without a
// prefix the format is --format's, filled in after all flags are parsed.
// A word before a colon that is no format is refused rather than taken
// for a file name: "jsn:/run/r.json" is a typo, and a file whose name
// has a colon is written "./name:x".
func parseOutput(v string) (outputSpec, error) {
	if pre, p, ok := strings.Cut(v, ":"); ok && isWord(pre) {
		if !slices.Contains(formatNames(), pre) {
			msg := fmt.Sprintf("unknown format %q", pre)
			if s := suggest.Suggest(pre, formatNames()); s != "" {
				msg += "; did you mean " + s + "?"
			}
			return outputSpec{}, fmt.Errorf("%s (one of %s; a file name with a colon is written ./%s)", msg, strings.Join(formatNames(), ", "), v)
		}
		if p == "" {
			return outputSpec{}, fmt.Errorf("no file name after %q", pre+":")
		}
		if p == stdoutPath {
			return outputSpec{format: report.Format(pre), path: p}, nil
		}
		return outputSpec{format: report.Format(pre), path: p}, outputPath(p)
	}
	switch v {
	case "":
		return outputSpec{}, errors.New("no file name")
	case stdoutPath:
		return outputSpec{path: v}, nil
	}
	return outputSpec{path: v}, outputPath(v)
}

// outputPath refuses an --output that names a directory (a trailing
// slash, or one that exists): the report is a file in it.
func outputPath(p string) error {
	if strings.HasSuffix(p, "/") {
		return errors.New("a directory; give a file name")
	}
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return errors.New("a directory; give a file name")
	}
	return nil
}

// isWord reports whether s could be a format name: letters and digits.
func isWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// render writes the report in one format.
func render(r report.Report, format report.Format, o report.Options) ([]byte, error) {
	var buf bytes.Buffer
	err := report.Render(&buf, r, format, o)
	return buf.Bytes(), err
}

// useColor is true only for a terminal, and never with NO_COLOR set or TERM=dumb.
func useColor(w io.Writer) bool {
	if _, ok := os.LookupEnv("NO_COLOR"); ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	return tty.Is(w)
}

package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/buildinfo"
	"github.com/guestcheck/guestcheck/internal/check"
	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/cloudinit"
	"github.com/guestcheck/guestcheck/internal/config"
	"github.com/guestcheck/guestcheck/internal/fs"
	"github.com/guestcheck/guestcheck/internal/report"
	"github.com/guestcheck/guestcheck/internal/systemd"
	"github.com/guestcheck/guestcheck/internal/tty"
)

const usageText = `Usage: guestcheck [flags]
       guestcheck probe [--config FILE]  (exec probe; see probe --help)

Verify that this VM was delivered correctly. guestcheck only reads; each
finding says what is wrong, why it matters and how to fix it.

Flags:
  --only IDS         run only these checks (comma-separated IDs, see --list)
  --skip IDS         do not run these checks
  --list             list the checks (ID, title, what each verifies) and exit
  --root DIR         read guest files under DIR (a mounted image); checks that
                     need the running kernel, netlink or systemd report skip
  --format FMT       text (default), json, prometheus (node_exporter textfile),
                     nagios (plugin output), junit (XML for CI), tap (TAP 13)
                     or jsonl (one JSON object per finding)
  --output [FMT:]FILE
                     also write the report to FILE, atomically (temp file in
                     the same directory, then rename), in FMT (default
                     --format); repeatable, so one run can leave a JSON, a
                     text and a .prom report
  --exit-codes SCHEME
                     guestcheck (default): the exit codes below; nagios: 0 OK,
                     1 WARNING, 2 CRITICAL, 3 UNKNOWN, as monitoring plugins
                     return them (independent of --format)
  --service-name NAME
                     nagios format: the status line's first word (default
                     ` + report.DefaultServiceName + `)
  --summary          print only the one-line summary on stdout (for units and
                     consoles; the full reports go to --output files)
  --config FILE      configuration file; default
                     ` + config.DefaultPath + `, which may be absent
  --timeout DUR      bound the whole run (default from config, else 60s)
  --wait DUR         first wait up to DUR for cloud-init to finish; never waits
                     when guestcheck itself runs inside cloud-init
  --exit-zero        exit 0 even on warnings or failures (for cloud-init runcmd)
  --freeze-test MNT  also freeze and thaw the filesystem mounted at MNT for
                     real (root only; never /, guestcheck's own filesystem
                     or --output's); a watchdog process always thaws it
  -v, --verbose      text and nagios formats: also show passing findings (text:
                     with their evidence)
  --version          print the version and exit
  -h, --help         show this help

Exit codes: 0 nothing worse than pass or skip; 2 warnings and no failure;
1 any fail or error, or a report that --output could not write; 3 usage or
configuration error. --exit-zero turns 1 and 2 from findings into 0, never a
lost report. With --exit-codes nagios instead: 2 any fail; 3 any error, or
nothing but skips, or a usage error or unwritable --output; 1 warnings; 0 OK
(--help, --version and --list exit 3 too, as the plugin guidelines ask).
Colour is used only on a terminal and never when NO_COLOR is set.

Examples:
  guestcheck                                  # console check, text report
  guestcheck --only cloud-init,hostname --format json
  guestcheck --exit-zero --format json --output /run/guestcheck/report.json
  guestcheck --summary --output json:/run/r.json --output text:/run/r.txt
  guestcheck --root /mnt/image --skip cloud-init
  guestcheck --exit-zero --summary \
    --output prometheus:/var/lib/prometheus/node-exporter/guestcheck.prom
  guestcheck --format nagios --exit-codes nagios     # from NRPE or Icinga
  guestcheck --format junit > guestcheck.xml         # CI, Packer
`

// options are the parsed command line.
type options struct {
	only, skip, root, configPath              string
	format                                    report.Format
	freezeTest, exitCodes, serviceName        string
	outputs                                   []outputSpec
	timeout, wait                             time.Duration
	list, exitZero, verbose, version, summary bool
	configSet                                 bool
}

// The --exit-codes schemes.
const (
	exitCodesGuestcheck = "guestcheck"
	exitCodesNagios     = "nagios"
)

// usageError is a command-line or configuration mistake: exit code 3.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// parseFlags parses the command line. On -h it returns flag.ErrHelp with
// the options parsed so far, so --exit-codes nagios --help can exit 3.
func parseFlags(args []string) (*options, error) {
	o := &options{}
	var format string
	fl := flag.NewFlagSet("guestcheck", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	fl.StringVar(&o.only, "only", "", "")
	fl.StringVar(&o.skip, "skip", "", "")
	fl.BoolVar(&o.list, "list", false, "")
	fl.StringVar(&o.root, "root", "/", "")
	fl.StringVar(&format, "format", string(report.FormatText), "")
	fl.StringVar(&o.exitCodes, "exit-codes", exitCodesGuestcheck, "")
	fl.StringVar(&o.serviceName, "service-name", report.DefaultServiceName, "")
	fl.Func("output", "", func(v string) error {
		spec, err := parseOutput(v)
		o.outputs = append(o.outputs, spec)
		return err
	})
	fl.BoolVar(&o.summary, "summary", false, "")
	fl.StringVar(&o.configPath, "config", config.DefaultPath, "")
	fl.DurationVar(&o.timeout, "timeout", 0, "")
	fl.DurationVar(&o.wait, "wait", 0, "")
	fl.BoolVar(&o.exitZero, "exit-zero", false, "")
	fl.StringVar(&o.freezeTest, "freeze-test", "", "")
	fl.BoolVar(&o.verbose, "verbose", false, "")
	fl.BoolVar(&o.verbose, "v", false, "")
	fl.BoolVar(&o.version, "version", false, "")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return nil, usageError{err.Error()}
	}
	if fl.NArg() > 0 {
		return nil, usageError{fmt.Sprintf("unexpected argument %q", fl.Arg(0))}
	}
	fl.Visit(func(f *flag.Flag) {
		if f.Name == "config" {
			o.configSet = true
		}
	})
	f, err := report.ParseFormat(format)
	if err != nil {
		return nil, usageError{fmt.Sprintf("--format %q: want one of %s", format, report.FormatNames())}
	}
	o.format = f
	switch o.exitCodes {
	case exitCodesGuestcheck:
	case exitCodesNagios:
		if o.exitZero {
			return nil, usageError{"--exit-zero and --exit-codes nagios contradict each other: choose one"}
		}
	default:
		return nil, usageError{fmt.Sprintf("--exit-codes %q: want guestcheck or nagios", o.exitCodes)}
	}
	if err := report.CheckServiceName(o.serviceName); err != nil {
		return nil, usageError{"--service-name: " + err.Error()}
	}
	for i := range o.outputs {
		if o.outputs[i].format == "" {
			o.outputs[i].format = o.format
		}
	}
	if o.timeout < 0 || o.wait < 0 {
		return nil, usageError{"--timeout and --wait must not be negative"}
	}
	return o, nil
}

// run is the whole command behind main, with its I/O and check registry
// passed in so tests can drive it.
func run(args []string, stdout, stderr io.Writer, all []check.Check) int {
	if len(args) > 0 && args[0] == "probe" {
		return runProbe(args[1:], stdout, stderr, all)
	}
	o, err := parseFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usageText)
		return o.infoExit()
	}
	if err != nil {
		fmt.Fprintf(stderr, "guestcheck: %v (see --help)\n", err)
		return report.ExitUsage
	}
	if o.version {
		fmt.Fprintf(stdout, "guestcheck %s\n", buildinfo.Version)
		return o.infoExit()
	}
	if o.list {
		listChecks(stdout, all)
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
func (o *options) runChecks(stdout, stderr io.Writer, all []check.Check) (report.Report, int) {
	cfg, err := config.Load(o.configPath, o.configSet)
	if err != nil {
		return report.Report{}, o.usageFailure(stdout, stderr, err.Error())
	}
	selected, err := check.Select(all, cfg, o.only, o.skip)
	if err != nil {
		return report.Report{}, o.usageFailure(stdout, stderr, err.Error()+" (see --list)")
	}
	var freeze *check.FreezeTest
	if o.freezeTest != "" {
		var protect []string
		for _, out := range o.outputs {
			protect = append(protect, out.path) // never freeze where a report goes
		}
		if freeze, err = checks.FreezeTestFor(selected, o.freezeTest, protect); err != nil {
			return report.Report{}, o.usageFailure(stdout, stderr, err.Error())
		}
	}
	root, err := fs.Open(o.root)
	if err != nil {
		return report.Report{}, o.usageFailure(stdout, stderr, "--root: "+err.Error())
	}
	defer root.Close()

	timeout := cfg.Timeout
	if o.timeout > 0 {
		timeout = o.timeout
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), timeout+o.wait)
	defer cancel()

	sd := systemd.New(root.IsHost())
	defer sd.Close()
	env := &check.Env{
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
	results := check.Run(ctx, selected, env, check.RunOptions{Timeout: cfg.CheckTimeoutFor})
	return report.New(results, report.Meta{
		Tool: "guestcheck", Version: buildinfo.Version, Root: root.Dir(),
		Host: check.ReadHost(root), StartedAt: start, Duration: time.Since(start),
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
	} else if out, err = render(rep, o.format, o.renderOptions(useColor(stdout))); err != nil {
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
func parseOutput(v string) (outputSpec, error) {
	for _, f := range report.Formats {
		if p, ok := strings.CutPrefix(v, string(f)+":"); ok {
			v = p
			if v == "" {
				return outputSpec{}, fmt.Errorf("empty file name after %q", string(f)+":")
			}
			return outputSpec{format: f, path: v}, nil
		}
	}
	if v == "" {
		return outputSpec{}, errors.New("empty file name")
	}
	return outputSpec{path: v}, nil
}

// render writes the report in one format.
func render(r report.Report, format report.Format, o report.Options) ([]byte, error) {
	var buf bytes.Buffer
	err := report.Render(&buf, r, format, o)
	return buf.Bytes(), err
}

func listChecks(w io.Writer, all []check.Check) {
	idw := 0
	for _, c := range all {
		idw = max(idw, len(c.ID))
	}
	for _, c := range all {
		fmt.Fprintf(w, "%-*s  %s\n%-*s  %s\n", idw, c.ID, c.Title, idw, "", c.Description)
	}
}

// useColor is true only for a terminal, and never with NO_COLOR set or TERM=dumb.
func useColor(w io.Writer) bool {
	if _, ok := os.LookupEnv("NO_COLOR"); ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	return tty.Is(w)
}

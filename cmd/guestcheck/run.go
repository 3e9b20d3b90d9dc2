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
	"slices"
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
  --format FMT       text (default) or json
  --output [FMT:]FILE
                     also write the report to FILE, atomically, in FMT (json
                     or text; default --format); repeatable, so one run can
                     leave both a JSON and a text report
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
  -v, --verbose      text format: also show passing findings and evidence
  --version          print the version and exit
  -h, --help         show this help

Exit codes: 0 nothing worse than pass or skip; 2 warnings and no failure;
1 any fail or error; 3 usage or configuration error. --exit-zero turns 1 and
2 into 0. Colour is used only on a terminal and never when NO_COLOR is set.

Examples:
  guestcheck                                  # console check, text report
  guestcheck --only cloud-init,hostname --format json
  guestcheck --exit-zero --format json --output /run/guestcheck/report.json
  guestcheck --summary --output json:/run/r.json --output text:/run/r.txt
  guestcheck --root /mnt/image --skip cloud-init
`

// options are the parsed command line.
type options struct {
	only, skip, root, format, configPath      string
	freezeTest                                string
	outputs                                   []outputSpec
	timeout, wait                             time.Duration
	list, exitZero, verbose, version, summary bool
	configSet                                 bool
}

// usageError is a command-line or configuration mistake: exit code 3.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func parseFlags(args []string) (*options, error) {
	o := &options{}
	fl := flag.NewFlagSet("guestcheck", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	fl.StringVar(&o.only, "only", "", "")
	fl.StringVar(&o.skip, "skip", "", "")
	fl.BoolVar(&o.list, "list", false, "")
	fl.StringVar(&o.root, "root", "/", "")
	fl.StringVar(&o.format, "format", "text", "")
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
			return nil, err
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
	if o.format != "text" && o.format != "json" {
		return nil, usageError{fmt.Sprintf("--format %q: want text or json", o.format)}
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
		return report.ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "guestcheck: %v (see --help)\n", err)
		return report.ExitUsage
	}
	if o.version {
		fmt.Fprintf(stdout, "guestcheck %s\n", buildinfo.Version)
		return report.ExitOK
	}
	if o.list {
		listChecks(stdout, all)
		return report.ExitOK
	}
	cfg, err := config.Load(o.configPath, o.configSet)
	if err != nil {
		fmt.Fprintf(stderr, "guestcheck: %v\n", err)
		return report.ExitUsage
	}
	selected, err := selectChecks(all, cfg, o.only, o.skip)
	if err != nil {
		fmt.Fprintf(stderr, "guestcheck: %v (see --list)\n", err)
		return report.ExitUsage
	}
	if o.freezeTest != "" {
		if !slices.ContainsFunc(selected, func(c check.Check) bool { return c.ID == checks.FSFreeze.ID }) {
			fmt.Fprintln(stderr, "guestcheck: --freeze-test needs the fs-freeze check, which --only, --skip or the config left out")
			return report.ExitUsage
		}
		req := fs.FreezeRequest{Mountpoint: o.freezeTest}
		for _, out := range o.outputs {
			req.Protect = append(req.Protect, out.path) // never freeze where a report goes
		}
		selected = checks.WithFreezeTest(selected, req)
	}
	root, err := fs.Open(o.root)
	if err != nil {
		fmt.Fprintf(stderr, "guestcheck: --root: %v\n", err)
		return report.ExitUsage
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
	}
	if o.wait > 0 {
		waitForCloudInit(ctx, env, o.wait, stderr)
	}
	results := check.Run(ctx, selected, env, check.RunOptions{Timeout: cfg.CheckTimeoutFor})
	rep := report.New(results, report.Meta{
		Tool: "guestcheck", Version: buildinfo.Version, Root: root.Dir(),
		Host: hostInfo(root), StartedAt: start, Duration: time.Since(start),
	})

	code := report.ExitCode(rep)
	var out []byte
	if o.summary {
		out = []byte(report.SummaryLine(rep) + "\n")
	} else if out, err = render(rep, o.format, report.TextOptions{Verbose: o.verbose, Color: useColor(stdout)}); err != nil {
		fmt.Fprintf(stderr, "guestcheck: render report: %v\n", err)
		return report.ExitProblem
	}
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintf(stderr, "guestcheck: write report: %v\n", err)
	}
	for _, spec := range o.outputs {
		// Files never get colour codes, whatever stdout is.
		b, err := render(rep, spec.format, report.TextOptions{Verbose: o.verbose})
		if err == nil {
			err = fs.WriteFileAtomic(spec.path, b, 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "guestcheck: --output: %v\n", err)
			code = report.ExitProblem
		}
	}
	if o.exitZero && (code == report.ExitProblem || code == report.ExitWarn) {
		return report.ExitOK
	}
	return code
}

// outputSpec is one --output: a file and the format to write it in.
type outputSpec struct{ format, path string }

// parseOutput reads "[json:|text:]FILE"; without a prefix the format is
// --format's, filled in after all flags are parsed.
func parseOutput(v string) (outputSpec, error) {
	for _, f := range []string{"json", "text"} {
		if p, ok := strings.CutPrefix(v, f+":"); ok {
			v = p
			if v == "" {
				return outputSpec{}, fmt.Errorf("empty file name after %q", f+":")
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
func render(r report.Report, format string, o report.TextOptions) ([]byte, error) {
	var buf bytes.Buffer
	var err error
	if format == "json" {
		err = report.WriteJSON(&buf, r)
	} else {
		err = report.WriteText(&buf, r, o)
	}
	return buf.Bytes(), err
}

// selectChecks applies the config's enabled switches, then --only and
// --skip. Unknown IDs are usage errors, so a typo never silently skips.
func selectChecks(all []check.Check, cfg *config.Config, only, skip string) ([]check.Check, error) {
	known := map[string]bool{}
	for _, c := range all {
		known[c.ID] = true
	}
	for id := range cfg.Checks {
		if !known[id] {
			return nil, usageError{fmt.Sprintf("config: checks.%s: unknown check ID", id)}
		}
	}
	parse := func(flagName, s string) (map[string]bool, error) {
		set := map[string]bool{}
		for _, id := range strings.Split(s, ",") {
			id = strings.TrimSpace(id)
			if id == "" {
				continue
			}
			if !known[id] {
				return nil, usageError{fmt.Sprintf("--%s: unknown check ID %q", flagName, id)}
			}
			set[id] = true
		}
		return set, nil
	}
	onlySet, err := parse("only", only)
	if err != nil {
		return nil, err
	}
	skipSet, err := parse("skip", skip)
	if err != nil {
		return nil, err
	}
	var out []check.Check
	for _, c := range all {
		switch {
		case skipSet[c.ID]:
		case len(onlySet) > 0:
			if onlySet[c.ID] {
				out = append(out, c)
			}
		case cfg.CheckEnabled(c.ID):
			out = append(out, c)
		}
	}
	return out, nil
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

// hostInfo names the machine for the report header: the kernel's view on
// the live system, /etc/hostname under an image root.
func hostInfo(root *fs.Root) report.Host {
	read := func(p string) string {
		b, err := root.ReadFile(p)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	if root.IsHost() {
		return report.Host{Hostname: read("/proc/sys/kernel/hostname"), BootID: read("/proc/sys/kernel/random/boot_id")}
	}
	h := read("/etc/hostname")
	if i := strings.IndexByte(h, '\n'); i >= 0 {
		h = h[:i]
	}
	return report.Host{Hostname: h}
}

// useColor is true only for a terminal, and never with NO_COLOR set or TERM=dumb.
func useColor(w io.Writer) bool {
	if _, ok := os.LookupEnv("NO_COLOR"); ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	return tty.Is(w)
}

// waitForCloudInit waits up to d for cloud-init to finish before the checks
// run. It never waits from inside cloud-init (it would wait for itself) and
// only on the running system; either way the checks run afterwards.
func waitForCloudInit(ctx context.Context, env *check.Env, d time.Duration, stderr io.Writer) {
	if !env.Live {
		fmt.Fprintf(stderr, "guestcheck: --wait ignored: %s\n", env.NotLiveReason())
		return
	}
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	st, timedOut, err := cloudinit.Wait(wctx, env.Root, 0)
	switch {
	case errors.Is(err, cloudinit.ErrInsideCloudInit):
		fmt.Fprintf(stderr, "guestcheck: not waiting: %v\n", err)
	case timedOut && st != nil:
		fmt.Fprintf(stderr, "guestcheck: cloud-init is still %q after --wait %s; checking now\n", st.ExtendedStatus(), d)
	case timedOut:
		fmt.Fprintf(stderr, "guestcheck: cloud-init state unknown after --wait %s (%v); checking now\n", d, err)
	}
}

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/host/drill"
	"github.com/guestcheck/guestcheck/internal/host/fleet"
	"github.com/guestcheck/guestcheck/internal/host/fleet/kubevirt"
	"github.com/guestcheck/guestcheck/internal/shared/clean"
	"github.com/guestcheck/guestcheck/internal/shared/cli"
	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/tty"
)

// Defaults of the fleet command line.
const (
	defaultFleetTimeout  = 10 * time.Minute
	defaultFleetInterval = 5 * time.Minute
)

// fleetOptions are `guestcheck fleet`'s parsed command line.
type fleetOptions struct {
	libvirt  string
	sockets  []fleet.Socket
	proxmox  bool
	kubevirt *kubevirt.Source
	names    []string
	survey   fleet.Options
	format   string
	outputs  []outputSpec
	timeout  time.Duration
	listen   string
	interval time.Duration
	// drillResults is --freeze-drill-results: the drill's JSON result
	// whose series --listen serves beside the survey's.
	drillResults string
	// merge are the survey files of --merge; the merge's options are
	// mergeOpts.
	merge     []string
	mergeOpts fleet.MergeOptions
}

// parseFleet reads the command line; help is true for --help.
func parseFleet(cmd *cli.Command, args []string) (o *fleetOptions, help bool, err error) {
	v, err := cmd.Parse(args)
	if err != nil {
		return nil, false, err
	}
	if v.Bool("help") {
		return nil, true, nil
	}
	if len(v.Args) > 0 && !v.Has("merge") {
		return nil, false, cli.Usagef("%q: unexpected argument (name VMs with --name, sockets with --agent-socket, survey files with --merge)", v.Args[0])
	}
	o = &fleetOptions{proxmox: v.Bool("proxmox"), names: v.All("name"), format: v.String("format", fleet.FormatText),
		listen: v.String("listen", ""), libvirt: v.String("libvirt", "")}
	if err := o.parseMerge(v); err != nil {
		return nil, false, err
	}
	o.survey.HostName = v.String("host-name", "")
	if v.Has("libvirt") {
		if err := fleet.CheckLibvirtURI(o.libvirt); err != nil {
			return nil, false, cli.Usagef("%v", err)
		}
	}
	o.survey.GuestcheckPath = v.String("guestcheck-path", fleet.DefaultGuestcheckPath)
	for _, raw := range v.All("agent-socket") {
		s, err := fleet.ParseSocket(raw)
		if err != nil {
			return nil, false, cli.Usagef("--agent-socket %s: %v", raw, err)
		}
		for _, prev := range o.sockets {
			if prev.Name == s.Name {
				return nil, false, cli.Usagef("--agent-socket %s: the name %s is already that of %s; give each socket a name of its own (NAME=PATH)", raw, s.Name, prev.Path)
			}
		}
		o.sockets = append(o.sockets, s)
	}
	if v.Bool("kubevirt") {
		o.kubevirt = &kubevirt.Source{Kubeconfig: v.String("kubeconfig", ""), Context: v.String("context", ""), Namespace: v.String("namespace", "")}
	} else {
		for _, k := range []string{"kubeconfig", "context", "namespace"} {
			if v.Has(k) {
				return nil, false, cli.Usagef("--%s needs --kubevirt: it says which cluster's VMs to survey", k)
			}
		}
	}
	for _, p := range o.names {
		if err := fleet.CheckPattern(p); err != nil {
			return nil, false, cli.Usagef("--name %v", err)
		}
	}
	return o, false, o.finish(v)
}

// finish validates the values that need more than a string.
func (o *fleetOptions) finish(v *cli.Values) error {
	if err := cli.OneOf("--format", "format", o.format, fleet.Formats); err != nil {
		return err
	}
	if !strings.HasPrefix(o.survey.GuestcheckPath, "/") {
		return cli.Usagef("--guestcheck-path %q: must be an absolute path in the guest (guest-exec runs no shell and searches no PATH)", o.survey.GuestcheckPath)
	}
	for _, k := range []string{"only", "skip"} {
		if v.Has(k) {
			o.survey.Args = append(o.survey.Args, "--"+k, v.String(k, ""))
		}
	}
	var err error
	if o.survey.Concurrency, err = positive(v, "concurrency", fleet.DefaultConcurrency); err != nil {
		return err
	}
	durs := []struct {
		name string
		dst  *time.Duration
		def  time.Duration
	}{{"vm-timeout", &o.survey.VMTimeout, fleet.DefaultVMTimeout}, {"timeout", &o.timeout, defaultFleetTimeout}, {"interval", &o.interval, defaultFleetInterval}}
	for _, d := range durs {
		if *d.dst, err = v.Duration(d.name); err != nil {
			return err
		}
		if !v.Has(d.name) {
			*d.dst = d.def
		} else if *d.dst == 0 {
			return cli.Usagef("--%s 0: must be longer than zero", d.name)
		}
	}
	if v.Has("listen") {
		// Refused here, as a usage error, rather than by net.Listen
		// after the sources were read.
		if _, port, err := net.SplitHostPort(o.listen); err != nil || port == "" {
			return cli.Usagef("--listen %q: not HOST:PORT (such as 127.0.0.1:9847, or :9847 for every address)", o.listen)
		}
	}
	if v.Has("interval") && o.listen == "" {
		return cli.Usagef("--interval needs --listen: without it guestcheck fleet surveys once and exits")
	}
	if err := o.parseDrillResults(v); err != nil {
		return err
	}
	var raws []string // each of o.outputs as typed
	for _, raw := range v.All("output") {
		spec, err := parseHostOutput(raw, fleet.Formats)
		if err != nil {
			return cli.Usagef("--output %s: %v", raw, err)
		}
		if spec.path == stdoutPath {
			// The survey goes to standard output already, in --format.
			return cli.Usagef("--output %s: the survey is printed on standard output already; choose its format with --format", raw)
		}
		if spec.format == "" {
			if _, err := outputFormat(raw, &spec, report.Format(o.format), v.Has("format"), fleet.Formats); err != nil {
				return cli.Usagef("%v", err)
			}
		}
		if err := distinctOutput(o.outputs, raws, spec, raw); err != nil {
			return cli.Usagef("%v", err)
		}
		o.outputs = append(o.outputs, spec)
		raws = append(raws, raw)
	}
	return nil
}

// parseDrillResults reads --freeze-drill-results, which only --listen
// serves: a textfile user points node_exporter at the drill's own
// textfile instead, and two files with the drill's series would be
// duplicate series to node_exporter.
func (o *fleetOptions) parseDrillResults(v *cli.Values) error {
	if !v.Has("freeze-drill-results") {
		return nil
	}
	o.drillResults = v.String("freeze-drill-results", "")
	switch {
	case o.listen == "":
		return cli.Usagef("--freeze-drill-results needs --listen; without it, let node_exporter read the drill's own textfile (guestcheck freeze-drill --output prometheus:FILE)")
	case o.drillResults == "":
		return cli.Usagef("--freeze-drill-results: no file name (the drill's --output json:FILE)")
	}
	return nil
}

// surveyOnly are the options that shape a survey of this host, which a
// merge does not make.
var surveyOnly = []string{"libvirt", "agent-socket", "proxmox", "guestcheck-path", "only", "skip", "concurrency", "vm-timeout", "timeout", "listen", "interval"}

// parseMerge reads --merge FILE [FILE...] and --shared-network.
func (o *fleetOptions) parseMerge(v *cli.Values) error {
	if !v.Has("merge") {
		if v.Has("shared-network") {
			return cli.Usagef("--shared-network needs --merge: one host's networks are all its own")
		}
		return nil
	}
	for _, k := range surveyOnly {
		if v.Has(k) {
			return cli.Usagef("--%s surveys this host, and --merge compares surveys made already: survey each host on its own, then merge", k)
		}
	}
	o.merge = append(v.All("merge"), v.Args...)
	for _, f := range o.merge {
		if f == "" {
			return cli.Usagef("--merge: an empty file name")
		}
	}
	o.mergeOpts = fleet.MergeOptions{SharedNetworks: v.All("shared-network"), Names: o.names, HostName: v.String("host-name", "")}
	return nil
}

// positive parses a whole number option above zero.
func positive(v *cli.Values, name string, def int) (int, error) {
	if !v.Has(name) {
		return def, nil
	}
	s := v.String(name, "")
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 1024 {
		return 0, cli.Usagef("--%s %q: must be a whole number from 1 to 1024", name, s)
	}
	return n, nil
}

// parseHostOutput reads "[FMT:]FILE" with a host-side command's formats
// (fleet's, freeze-drill's); without a prefix the format is left for
// outputFormat to decide.
func parseHostOutput(raw string, formats []string) (outputSpec, error) {
	if pre, p, ok := strings.Cut(raw, ":"); ok && isWord(pre) {
		if err := cli.OneOf("format", "format", pre, formats); err != nil {
			return outputSpec{}, err
		}
		if p == "" {
			return outputSpec{}, fmt.Errorf("no file name after %q", pre+":")
		}
		if p == stdoutPath {
			return outputSpec{format: report.Format(pre), path: p}, nil
		}
		return outputSpec{format: report.Format(pre), path: p}, outputPath(p)
	}
	switch raw {
	case "":
		return outputSpec{}, errors.New("no file name")
	case stdoutPath:
		return outputSpec{path: raw}, nil
	}
	return outputSpec{path: raw}, outputPath(raw)
}

// sources are the sources the command line names, or with none the
// host's own: qemu:///system and Proxmox's socket directory, when they
// exist.
func (o *fleetOptions) sources() []fleet.Source {
	var out []fleet.Source
	if o.libvirt != "" {
		out = append(out, fleet.NewLibvirtSource(o.libvirt))
	}
	if len(o.sockets) > 0 {
		out = append(out, fleet.SocketSource(o.sockets))
	}
	if o.proxmox {
		out = append(out, fleet.ProxmoxSource{})
	}
	if o.kubevirt != nil {
		out = append(out, *o.kubevirt)
	}
	if len(out) > 0 {
		return out
	}
	if fleet.LibvirtSystemAvailable() {
		out = append(out, fleet.NewLibvirtSource(fleet.LibvirtSystemURI))
	}
	if fleet.HaveProxmox() {
		out = append(out, fleet.ProxmoxSource{})
	}
	return out
}

// runFleet is `guestcheck fleet`.
func runFleet(cmd *cli.Command, args []string, stdout, stderr io.Writer, _ []runner.Check) int {
	o, help, err := parseFleet(cmd, args)
	if help {
		cmd.WriteHelp(stdout)
		return report.ExitOK
	}
	if err != nil {
		return usage(stderr, cmd, err)
	}
	if len(o.merge) > 0 {
		return o.runMerge(stdout, stderr)
	}
	sources := o.sources()
	if len(sources) == 0 {
		return usage(stderr, cmd, cli.Usagef("no VMs to survey: name a libvirt URI with --libvirt, guest agent sockets with --agent-socket or a KubeVirt cluster with --kubevirt (no %s socket and no Proxmox directory %s here)", fleet.LibvirtSystemURI, fleet.ProxmoxDir))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.listen != "" {
		return o.serve(ctx, sources, stderr)
	}
	r := o.surveyOnce(ctx, sources, stderr)
	// Straight to stdout: a survey of many VMs is not held twice.
	if err := fleet.Render(stdout, r, o.format); err != nil {
		fmt.Fprintf(stderr, "guestcheck fleet: write report: %v\n", err)
		return report.ExitProblem
	}
	if !o.writeOutputs(r, stderr) {
		return report.ExitProblem
	}
	return fleet.ExitCode(r)
}

// runMerge is --merge: the surveys of many hosts compared as one
// fleet, rendered as a survey is.
func (o *fleetOptions) runMerge(stdout, stderr io.Writer) int {
	r, err := fleet.Merge(o.merge, o.mergeOpts)
	if err != nil {
		// One line per file at fault.
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(stderr, "guestcheck fleet: --merge %s\n", line)
		}
		return report.ExitProblem
	}
	if err := fleet.Render(stdout, r, o.format); err != nil {
		fmt.Fprintf(stderr, "guestcheck fleet: write report: %v\n", err)
		return report.ExitProblem
	}
	if !o.writeOutputs(r, stderr) {
		return report.ExitProblem
	}
	return fleet.ExitCode(r)
}

// surveyOnce lists the targets and surveys them within --timeout,
// showing progress on a terminal.
func (o *fleetOptions) surveyOnce(ctx context.Context, sources []fleet.Source, stderr io.Writer) fleet.Result {
	so := o.survey
	so.Start = time.Now()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	targets, errs := fleet.Targets(ctx, sources, o.names)
	if tty.Is(stderr) {
		so.Progress = func(done, total int, vm fleet.VM) {
			fmt.Fprintf(stderr, "\r\033[Ksurveyed %d/%d VMs, last %s: %s", done, total, clean.Text(vm.Name), vm.Status)
			if done == total {
				io.WriteString(stderr, "\r\033[K")
			}
		}
	}
	return fleet.Survey(ctx, targets, errs, so)
}

func renderFleet(r fleet.Result, format string) ([]byte, error) {
	var b bytes.Buffer
	err := fleet.Render(&b, r, format)
	return b.Bytes(), err
}

// writeOutputs writes every --output atomically; false if one was lost.
func (o *fleetOptions) writeOutputs(r fleet.Result, stderr io.Writer) bool {
	ok := true
	for _, spec := range o.outputs {
		b, err := renderFleet(r, string(spec.format))
		if err == nil {
			err = fs.WriteReport(spec.path, b)
		}
		if err != nil {
			fmt.Fprintf(stderr, "guestcheck fleet: --output %s: report not written: %v\n", spec.path, err)
			ok = false
		}
	}
	return ok
}

// serve is --listen: survey every --interval and serve the last survey
// on /metrics until SIGINT or SIGTERM.
func (o *fleetOptions) serve(ctx context.Context, sources []fleet.Source, stderr io.Writer) int {
	l, err := net.Listen("tcp", o.listen)
	if err != nil {
		fmt.Fprintf(stderr, "guestcheck fleet: --listen %s: %v\n", o.listen, cause(err))
		return report.ExitProblem
	}
	srv := &fleet.Server{Interval: o.interval,
		Survey: func(ctx context.Context) fleet.Result { return o.surveyOnce(ctx, sources, io.Discard) },
		Done:   func(r fleet.Result) { o.writeOutputs(r, stderr) }}
	also := ""
	if o.drillResults != "" {
		// Read at each scrape (when the file changed), not at each
		// survey: the drill's timer and the survey loop are unrelated,
		// and a drill's result should not wait up to --interval.
		rf := &drill.ResultsFile{Path: o.drillResults, Log: func(line string) {
			fmt.Fprintf(stderr, "guestcheck fleet: --freeze-drill-results %s\n", line)
		}}
		srv.Append = rf.WritePrometheus
		also = ", with the last freeze drill's series from " + o.drillResults
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second}
	fmt.Fprintf(stderr, "guestcheck fleet: serving /metrics on %s, surveying every %s%s\n", l.Addr(), o.interval, also)
	go srv.Run(ctx)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "guestcheck fleet: --listen %s: %v\n", o.listen, err)
		return report.ExitProblem
	}
	return report.ExitOK
}

// cause is a network error without Go's operation wrapping.
func cause(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err
	}
	return err
}

// fleetFormats are the fleet's formats, for completion.
func fleetFormats() []string { return slices.Clone(fleet.Formats) }

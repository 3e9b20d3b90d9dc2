package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/check"
	"github.com/guestcheck/guestcheck/internal/config"
	"github.com/guestcheck/guestcheck/internal/fs"
	"github.com/guestcheck/guestcheck/internal/probe"
)

var probeUsageText = `Usage: guestcheck probe [--config FILE] [--timeout DUR]

Answer a platform's exec readiness or liveness probe (KubeVirt's
readinessProbe.exec, which runs through qemu-guest-agent's guest-exec):
run the checks listed under probe.checks in the config (default
` + strings.Join(config.DefaultProbeChecks, ",") + `) on the running system, with no network
probe, no D-Bus call and no wait, and print one line on stdout:

  guestcheck probe: READY 4 checks (cloud-init,hostname,fstab,disk-size) in 9 ms
  guestcheck probe: NOT READY failing: fstab (fstab: fail: ...)

Exit 0 when ready and 1 when not, also on a usage or configuration error
(any non-zero exit fails a probe; the line on stdout says why). A fail or
an error is not ready, and so is cloud-init still running or not started
yet; a warning is ready unless probe.warn_not_ready is set. The probe
ends within probe.timeout (default ` + config.DefaultProbeTimeout.String() + `), counted from its start.

Flags:
  --config FILE   configuration file; default ` + config.DefaultPath + `
  --timeout DUR   bound the probe (overrides probe.timeout)
  -h, --help      show this help

In a KubeVirt VirtualMachine (docs/probe.md):
  readinessProbe:
    exec: {command: ["/usr/bin/guestcheck", "probe"]}
`

// refuseDialer is the probe's Dialer: a probe makes no network probes, so
// any attempt is refused instead of leaving the machine.
type refuseDialer struct{}

func (refuseDialer) DialContext(context.Context, string, string) (net.Conn, error) {
	return nil, errors.New("guestcheck probe makes no network probes")
}

// runProbe is `guestcheck probe`. Everything it says goes to stdout, on one
// line, because KubeVirt keeps only stdout; stderr carries only usage errors.
func runProbe(args []string, stdout, stderr io.Writer, all []check.Check) int {
	start := time.Now()
	say := func(ready bool, msg string) int {
		verdict, code := "READY", 0
		if !ready {
			verdict, code = "NOT READY", 1
		}
		fmt.Fprintln(stdout, probe.Line("guestcheck probe: "+verdict+" "+msg))
		return code
	}
	fl := flag.NewFlagSet("guestcheck probe", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	configPath := fl.String("config", config.DefaultPath, "")
	timeout := fl.Duration("timeout", 0, "")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, probeUsageText)
			return 0
		}
		fmt.Fprintf(stderr, "guestcheck probe: %v (see guestcheck probe --help)\n", err)
		return say(false, "usage error: "+err.Error())
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "guestcheck probe: unexpected argument %q (see guestcheck probe --help)\n", fl.Arg(0))
		return say(false, fmt.Sprintf("usage error: unexpected argument %q", fl.Arg(0)))
	}
	if *timeout < 0 {
		return say(false, "usage error: --timeout must not be negative")
	}
	explicit := false
	fl.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "config" })
	cfg, err := config.Load(*configPath, explicit)
	if err != nil {
		return say(false, "config error: "+err.Error())
	}
	if *timeout > 0 {
		cfg.Probe.Timeout = *timeout
	}
	selected, err := probe.Select(all, &cfg.Probe)
	if err != nil {
		return say(false, "config error: "+err.Error())
	}
	root, err := fs.Open("/")
	if err != nil {
		return say(false, "cannot open /: "+err.Error())
	}
	defer root.Close()

	// The deadline counts from process start, so that start-up and config
	// parsing are inside it too.
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(cfg.Probe.Timeout))
	defer cancel()
	// No systemd client (a D-Bus connection costs more than the whole
	// probe under emulation: unit states are the boot run's), no resolver
	// and no dialer: the checks judge files and /proc only.
	env := &check.Env{
		Root:   root,
		Live:   true,
		Config: cfg,
		Now:    time.Now,
		IsRoot: os.Geteuid() == 0,
		Dialer: refuseDialer{},
	}
	results := check.Run(ctx, selected, env, check.RunOptions{Timeout: cfg.ProbeTimeoutFor})
	return say(probe.Verdict(results, cfg.Probe.WarnNotReady, time.Since(start)))
}

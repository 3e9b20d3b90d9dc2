package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/shared/cli"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/runner/probe"
)

// refuseDialer is the probe's Dialer: a probe makes no network probes, so
// any attempt is refused instead of leaving the machine.
type refuseDialer struct{}

func (refuseDialer) DialContext(context.Context, string, string) (net.Conn, error) {
	return nil, errors.New("guestcheck probe makes no network probes")
}

// runProbe is `guestcheck probe`. Everything it says goes to stdout, on one
// line, because KubeVirt keeps only stdout; stderr carries only usage errors.
func runProbe(cmd *cli.Command, args []string, stdout, stderr io.Writer, all []runner.Check) int {
	start := time.Now()
	say := func(ready bool, msg string) int {
		verdict, code := "READY", 0
		if !ready {
			verdict, code = "NOT READY", 1
		}
		fmt.Fprintln(stdout, probe.Line("guestcheck probe: "+verdict+" "+msg))
		return code
	}
	v, err := cmd.Parse(args)
	if err == nil && v.Bool("help") {
		cmd.WriteHelp(stdout)
		return 0
	}
	var timeout time.Duration
	if err == nil && len(v.Args) > 0 {
		err = cli.Usagef("%q: unexpected argument (see guestcheck probe --help)", v.Args[0])
	}
	if err == nil {
		timeout, err = v.Duration("timeout")
	}
	if err != nil {
		fmt.Fprintf(stderr, "guestcheck probe: %v\n", err)
		return say(false, "usage error: "+err.Error())
	}
	configPath, explicit := v.String("config", config.DefaultPath), v.Has("config")
	cfg, err := runner.LoadConfig(all, configPath, explicit)
	if err != nil {
		return say(false, "config error: "+err.Error())
	}
	if timeout > 0 {
		cfg.Probe.Timeout = timeout
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
	env := &runner.Env{
		Root:   root,
		Live:   true,
		Config: cfg,
		Now:    time.Now,
		IsRoot: os.Geteuid() == 0,
		Dialer: refuseDialer{},
	}
	results := runner.Run(ctx, selected, env, runner.RunOptions{Timeout: cfg.ProbeTimeoutFor})
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		limit := cfg.Probe.Timeout.String() + " (raise --timeout or probe.timeout)"
		if timeout > 0 {
			limit = timeout.String() + " (--timeout)"
		}
		if msg, ok := probe.TimedOut(results, cfg.Probe.WarnNotReady, limit); ok {
			return say(false, msg)
		}
	}
	return say(probe.Verdict(results, cfg.Probe.WarnNotReady, time.Since(start)))
}

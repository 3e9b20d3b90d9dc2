package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/host/drill"
	"github.com/guestcheck/guestcheck/internal/host/fleet"
	"github.com/guestcheck/guestcheck/internal/shared/cli"
	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/shared/tty"
)

// drillOptions are `guestcheck freeze-drill`'s parsed command line.
type drillOptions struct {
	sockets []fleet.Socket
	libvirt string
	proxmox bool
	names   []string
	opts    drill.Options
	format  string
	outputs []outputSpec
}

// parseDrill reads the command line; help is true for --help.
func parseDrill(cmd *cli.Command, args []string) (o *drillOptions, help bool, err error) {
	v, err := cmd.Parse(args)
	if err != nil {
		return nil, false, err
	}
	if v.Bool("help") {
		return nil, true, nil
	}
	if len(v.Args) > 0 {
		return nil, false, cli.Usagef("%q: unexpected argument (name VMs with --agent-socket, or --name with --libvirt or --proxmox)", v.Args[0])
	}
	o = &drillOptions{libvirt: v.String("libvirt", ""), proxmox: v.Bool("proxmox"), names: v.All("name"), format: v.String("format", drill.FormatText)}
	o.opts.GuestcheckPath = v.String("guestcheck-path", fleet.DefaultGuestcheckPath)
	o.opts.HookLog = v.String("hook-log", drill.DefaultHookLog)
	o.opts.HostName = v.String("host-name", "")
	if err := o.parseSources(v); err != nil {
		return nil, false, err
	}
	for _, p := range []struct{ opt, path string }{{"guestcheck-path", o.opts.GuestcheckPath}, {"hook-log", o.opts.HookLog}} {
		if !strings.HasPrefix(p.path, "/") {
			return nil, false, cli.Usagef("--%s %q: must be an absolute path in the guest", p.opt, p.path)
		}
	}
	if err := cli.OneOf("--format", "format", o.format, drill.Formats); err != nil {
		return nil, false, err
	}
	for _, d := range []struct {
		name string
		dst  *time.Duration
		def  time.Duration
	}{{"deadline", &o.opts.Deadline, drill.DefaultDeadline}, {"vm-timeout", &o.opts.VMTimeout, drill.DefaultVMTimeout}} {
		if *d.dst, err = v.Duration(d.name); err != nil {
			return nil, false, err
		}
		if !v.Has(d.name) {
			*d.dst = d.def
		} else if *d.dst <= 0 {
			return nil, false, cli.Usagef("--%s %s: must be longer than zero", d.name, v.String(d.name, ""))
		}
	}
	if o.opts.VMTimeout < o.opts.Deadline {
		return nil, false, cli.Usagef("--vm-timeout %s is shorter than --deadline %s: the drill could not see a freeze reach the deadline", o.opts.VMTimeout, o.opts.Deadline)
	}
	var raws []string
	for _, raw := range v.All("output") {
		spec, err := parseHostOutput(raw, drill.Formats)
		if err != nil {
			return nil, false, cli.Usagef("--output %s: %v", raw, err)
		}
		if spec.path == stdoutPath {
			// The result goes to standard output already, in --format.
			return nil, false, cli.Usagef("--output %s: the result is printed on standard output already; choose its format with --format", raw)
		}
		if spec.format == "" {
			if _, err := outputFormat(raw, &spec, report.Format(o.format), v.Has("format"), drill.Formats); err != nil {
				return nil, false, cli.Usagef("%v", err)
			}
		}
		if err := distinctOutput(o.outputs, raws, spec, raw); err != nil {
			return nil, false, cli.Usagef("%v", err)
		}
		o.outputs = append(o.outputs, spec)
		raws = append(raws, raw)
	}
	return o, false, nil
}

// parseSources reads the VMs named: sockets, or exact names with
// --libvirt or --proxmox. Nothing is drilled that is not named.
func (o *drillOptions) parseSources(v *cli.Values) error {
	for _, raw := range v.All("agent-socket") {
		s, err := fleet.ParseSocket(raw)
		if err != nil {
			return cli.Usagef("--agent-socket %s: %v", raw, err)
		}
		for _, prev := range o.sockets {
			if prev.Name == s.Name {
				return cli.Usagef("--agent-socket %s: the name %s is already that of %s; give each socket a name of its own (NAME=PATH)", raw, s.Name, prev.Path)
			}
		}
		o.sockets = append(o.sockets, s)
	}
	if v.Has("libvirt") {
		if err := fleet.CheckLibvirtURI(o.libvirt); err != nil {
			return cli.Usagef("%v", err)
		}
	}
	for _, n := range o.names {
		if n == "" || strings.ContainsAny(n, "*?[") {
			return cli.Usagef("--name %q: give a VM's exact name; the drill freezes no VM by pattern", n)
		}
	}
	switch {
	case (o.libvirt != "" || o.proxmox) && len(o.names) == 0:
		return cli.Usagef("--%s needs --name: the drill freezes only the VMs named one by one", map[bool]string{true: "libvirt", false: "proxmox"}[o.libvirt != ""])
	case len(o.names) > 0 && o.libvirt == "" && !o.proxmox:
		return cli.Usagef("--name needs --libvirt or --proxmox: it names a VM of theirs (an --agent-socket names its own VM)")
	case len(o.sockets) == 0 && o.libvirt == "" && !o.proxmox:
		return cli.Usagef("no VM to drill: name guest agent sockets with --agent-socket, or VMs with --name and --libvirt or --proxmox")
	}
	return nil
}

// targets lists the VMs named, in the order named, and a source error
// for each name no VM has.
func (o *drillOptions) targets(ctx context.Context) ([]drill.Target, []fleet.SourceError) {
	var out []drill.Target
	var errs []fleet.SourceError
	socks, _ := fleet.SocketSource(o.sockets).Targets(ctx)
	for i, t := range socks {
		out = append(out, drill.Target{Target: t, Reach: drill.Reach{Socket: o.sockets[i].Path}})
	}
	var src fleet.Source
	var reach func(name string) drill.Reach
	switch {
	case o.libvirt != "":
		src = fleet.NewLibvirtSource(o.libvirt)
		reach = func(n string) drill.Reach { return drill.Reach{Libvirt: o.libvirt, Domain: n} }
	case o.proxmox:
		src = fleet.ProxmoxSource{}
		reach = func(n string) drill.Reach { return drill.Reach{Socket: filepath.Join(fleet.ProxmoxDir, n+".qga")} }
	default:
		return out, errs
	}
	ts, err := src.Targets(ctx)
	if err != nil {
		return out, append(errs, fleet.SourceError{Source: map[bool]string{true: "libvirt", false: "proxmox"}[o.libvirt != ""], Error: err.Error()})
	}
	for _, n := range o.names {
		found := false
		for _, t := range ts {
			if t.Name == n {
				out, found = append(out, drill.Target{Target: t, Reach: reach(n)}), true
				break
			}
		}
		if !found {
			errs = append(errs, fleet.SourceError{Source: n, Error: "no running VM of that name: not drilled"})
		}
	}
	return out, errs
}

// runDrill is `guestcheck freeze-drill`.
func runDrill(cmd *cli.Command, args []string, stdout, stderr io.Writer) int {
	o, help, err := parseDrill(cmd, args)
	if help {
		cmd.WriteHelp(stdout)
		return report.ExitOK
	}
	if err != nil {
		return usage(stderr, cmd, err)
	}
	// SIGINT and SIGTERM end the drill's context: the freeze in progress
	// is thawed, by the drill or its guard, before it exits.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	targets, errs := o.targets(ctx)
	if tty.Is(stderr) {
		o.opts.Progress = func(vm string) { fmt.Fprintf(stderr, "\r\033[Kdrilling %s", vm) }
	}
	r := drill.Run(ctx, targets, errs, o.opts)
	if tty.Is(stderr) {
		io.WriteString(stderr, "\r\033[K")
	}
	if err := drill.Render(stdout, r, o.format); err != nil {
		fmt.Fprintf(stderr, "guestcheck freeze-drill: write report: %v\n", err)
		return report.ExitProblem
	}
	for _, spec := range o.outputs {
		var b strings.Builder
		err := drill.Render(&b, r, string(spec.format))
		if err == nil {
			err = fs.WriteReport(spec.path, []byte(b.String()))
		}
		if err != nil {
			fmt.Fprintf(stderr, "guestcheck freeze-drill: --output %s: report not written: %v\n", spec.path, err)
			return report.ExitProblem
		}
	}
	return drill.ExitCode(r)
}

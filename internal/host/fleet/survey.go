package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/qga"
	"github.com/guestcheck/guestcheck/internal/shared/buildinfo"
)

// Defaults of Options.
const (
	DefaultGuestcheckPath = "/usr/bin/guestcheck"
	DefaultConcurrency    = 8
	DefaultVMTimeout      = 90 * time.Second
	// DefaultMaxOutput bounds guestcheck's output per VM; a report is a
	// few tens of KiB.
	DefaultMaxOutput = 8 << 20
	// connectTimeout bounds reaching the agent (dial, sync, ping): a
	// live agent answers in milliseconds, and one that is not running
	// must not cost the whole --vm-timeout.
	connectTimeout = 10 * time.Second
	// grace is how long past its deadline a VM's survey may take before
	// it is abandoned, in case a source's Dial ignores its context.
	grace = 2 * time.Second
)

// Options bound and shape a survey.
type Options struct {
	// GuestcheckPath is guestcheck's path in the guests.
	GuestcheckPath string
	// Args are extra arguments for guestcheck in the guest (--only IDS,
	// --skip IDS), after --format json --exit-zero.
	Args []string
	// Concurrency is how many VMs are surveyed at once.
	Concurrency int
	// VMTimeout bounds each VM, from the dial to the decoded report.
	VMTimeout time.Duration
	// MaxOutput bounds guestcheck's output (each stream) per VM.
	MaxOutput int
	// Progress, when set, is called after each VM, one call at a time.
	Progress func(done, total int, vm VM)
	// HostName names this host in the result (--host-name); empty: its
	// hostname. A merge of many hosts' surveys tells them apart by it.
	HostName string
	// Start is when the survey began, before its sources were listed
	// (Targets), so that its duration counts the listing too: a source
	// that failed after 30 seconds took 30 seconds. Zero: when Survey is
	// called.
	Start time.Time
}

func (o Options) withDefaults() Options {
	if o.GuestcheckPath == "" {
		o.GuestcheckPath = DefaultGuestcheckPath
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.VMTimeout <= 0 {
		o.VMTimeout = DefaultVMTimeout
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	return o
}

// Targets lists the targets of every source, keeping those whose name
// matches one of patterns (none: all). A source that fails is reported
// and the others still count. A VM whose name an earlier one already has
// (a libvirt domain also named by --agent-socket) is not surveyed but
// reported as a source error: the fleet's findings, metrics and
// outputs name VMs, and two under one name would be one.
func Targets(ctx context.Context, sources []Source, patterns []string) ([]Target, []SourceError) {
	var out []Target
	var errs []SourceError
	seen := map[string]string{}
	for _, s := range sources {
		ts, err := listBounded(ctx, s)
		if err != nil {
			// Long enough for a cluster's server, its kubeconfig and
			// the request that failed.
			errs = append(errs, SourceError{Source: sourceName(s), Error: OneLine(err.Error(), 500)})
			continue
		}
		for _, t := range Filter(ts, patterns) {
			if first, dup := seen[t.Name]; dup {
				errs = append(errs, SourceError{Source: sourceName(s), Error: OneLine(fmt.Sprintf(
					"VM %q not surveyed: a VM of %s has that name too (each VM needs a name of its own; --agent-socket NAME=PATH names a socket)", t.Name, first), 300)})
				continue
			}
			seen[t.Name] = sourceName(s)
			out = append(out, t)
		}
	}
	return out, errs
}

// listTimeout bounds the listing of one source's VMs, every page and
// request of it: a source that never finishes (an API server that
// answers every page with a new continue token) must not take the whole
// survey's --timeout from the sources after it, nor, under --listen,
// every survey after it.
var listTimeout = 2 * time.Minute

// listBounded is s.Targets within listTimeout (and ctx), abandoned a
// little after its deadline should s ignore its context; the error then
// says that time ran out, and whose time it was.
func listBounded(ctx context.Context, s Source) ([]Target, error) {
	lctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	type listed struct {
		ts  []Target
		err error
	}
	ch := make(chan listed, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- listed{err: fmt.Errorf("internal error listing its VMs: %v", p)}
			}
		}()
		ts, err := s.Targets(lctx)
		ch <- listed{ts, err}
	}()
	limit := time.NewTimer(listTimeout + grace)
	defer limit.Stop()
	var l listed
	select {
	case l = <-ch:
	case <-limit.C:
		l.err = errors.New("no answer")
	case <-ctx.Done():
		select {
		case l = <-ch:
		case <-time.After(grace):
			l.err = errors.New("no answer")
		}
	}
	if l.err == nil || !ended(lctx) {
		return l.ts, l.err
	}
	if ended(ctx) {
		return nil, fmt.Errorf("%s while its VMs were listed: %w", surveyEnded(ctx), l.err)
	}
	return nil, fmt.Errorf("its VMs were not listed within %s: %w", listTimeout, l.err)
}

// ended is whether ctx is done or its deadline has passed: a connection
// whose deadline is ctx's may time out a moment before ctx's own timer
// fires.
func ended(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && !time.Now().Before(dl)
}

// sourceName names a source in a report.
func sourceName(s Source) string {
	switch s.(type) {
	case SocketSource:
		return "socket"
	case ProxmoxSource:
		return "proxmox"
	}
	if n, ok := s.(interface{ Name() string }); ok {
		return n.Name()
	}
	return fmt.Sprintf("%T", s)
}

// Survey surveys the targets, Concurrency at a time, each within
// VMTimeout, all within ctx. It always returns, with every target in the
// result: one that could not be surveyed is Unknown with its reason.
func Survey(ctx context.Context, targets []Target, srcErrs []SourceError, o Options) Result {
	o = o.withDefaults()
	start := o.Start
	if start.IsZero() {
		start = time.Now()
	}
	host := o.HostName
	if host == "" {
		host, _ = os.Hostname()
	}
	res := Result{SchemaVersion: SchemaVersion, Tool: "guestcheck fleet", Version: buildinfo.Version,
		Host: host, StartedAt: start.UTC(), SourceErrors: srcErrs, VMs: make([]VM, len(targets))}
	sem := make(chan struct{}, o.Concurrency)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for i, t := range targets {
		acquired := false
		select {
		case sem <- struct{}{}:
			acquired = true
		case <-ctx.Done():
			// The survey's deadline came before this VM's turn.
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var vm VM
			if acquired && ctx.Err() == nil {
				vm = surveyBounded(ctx, t, o)
			} else {
				vm = unknown(t, surveyEnded(ctx)+" before this VM's turn")
			}
			if acquired {
				<-sem
			}
			mu.Lock()
			res.VMs[i] = vm
			done++
			if o.Progress != nil {
				o.Progress(done, len(targets), vm)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.DurationMS = time.Since(start).Milliseconds()
	res.finish()
	return res
}

func unknown(t Target, why string) VM {
	return VM{Name: t.Name, Source: t.Source, Host: t.Host, Status: Unknown, Reason: why, Networks: t.Networks}
}

// APIOnly is the reason of a VM judged on its source's API alone.
const APIOnly = "not surveyed in the guest: identity from the API only"

// known is a VM its source's API describes and that is not surveyed in
// the guest: skipped, unless it shares identity with another VM.
func known(t Target) VM {
	k := t.Known
	id := k.Identity
	fw := k.Firmware
	vm := VM{Name: t.Name, Source: t.Source, Host: t.Host, Status: Skip, Networks: t.Networks,
		Reason: joinNonEmpty("; ", OneLine(k.State, 200), APIOnly), AgentVersion: OneLine(k.AgentVersion, 40),
		APIIdentity: &id, Firmware: &fw, AgentDisabled: k.AgentDisabled}
	return vm
}

// surveyBounded runs surveyVM and abandons it a little after its
// deadline, so that a source whose Dial ignores its context cannot hang
// the survey.
func surveyBounded(ctx context.Context, t Target, o Options) VM {
	ch := make(chan VM, 1)
	start := time.Now()
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- unknown(t, OneLine(fmt.Sprintf("internal error surveying this VM: %v", p), 300))
			}
		}()
		ch <- surveyVM(ctx, t, o)
	}()
	limit := time.NewTimer(o.VMTimeout + grace)
	defer limit.Stop()
	var vm VM
	select {
	case vm = <-ch:
	case <-limit.C:
		vm = unknown(t, fmt.Sprintf("timed out after %s (--vm-timeout), reaching the guest agent", o.VMTimeout))
	}
	vm.DurationMS = time.Since(start).Milliseconds()
	return vm
}

// surveyVM is one VM, read-only: guest-ping, guest-info, then guestcheck
// through guest-exec, and its report decoded.
func surveyVM(parent context.Context, t Target, o Options) VM {
	if t.Known != nil && t.Dial == nil && t.Unreachable == "" {
		return known(t)
	}
	if t.Unreachable != "" {
		return unknown(t, t.Unreachable)
	}
	if t.Dial == nil {
		return unknown(t, "no way to reach its guest agent")
	}
	ctx, cancel := context.WithTimeout(parent, o.VMTimeout)
	defer cancel()
	s := &step{parent: parent, ctx: ctx, vmTimeout: o.VMTimeout, path: o.GuestcheckPath}
	a, info, why := connect(ctx, t, s)
	if why != "" {
		return unknown(t, why)
	}
	defer a.Close()
	vm := unknown(t, "")
	vm.AgentVersion = OneLine(info.Version, 40)
	if why := execAllowed(info); why != "" {
		vm.Reason = why
		return vm
	}
	s.name = "guest-exec"
	out, err := qga.Run(ctx, a, o.GuestcheckPath, guestArgs(o), o.MaxOutput)
	if err != nil {
		vm.Reason = s.reason(err)
		return vm
	}
	rep, why := interpret(out, o)
	// Only the decoded report is kept: out, the raw output, dies here.
	if why != "" {
		vm.Reason = why
		return vm
	}
	vm.Report, vm.Status, vm.Reason = rep, Status(rep.Status), worstCheck(rep)
	return vm
}

// connect dials the agent and pings it, within connectTimeout, then
// asks guest-info.
func connect(ctx context.Context, t Target, s *step) (Agent, qga.Info, string) {
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	s.ctx, s.name = cctx, "connect"
	a, err := t.Dial(cctx)
	if err != nil {
		return nil, qga.Info{}, s.reason(err)
	}
	s.name = "guest-ping"
	if err := a.Exec(cctx, "guest-ping", nil, nil); err != nil {
		a.Close()
		return nil, qga.Info{}, s.reason(err)
	}
	s.ctx, s.name = ctx, "guest-info"
	var info qga.Info
	if err := a.Exec(ctx, "guest-info", nil, &info); err != nil {
		a.Close()
		return nil, qga.Info{}, s.reason(err)
	}
	return a, info, ""
}

// guestArgs is guestcheck's command line in the guest. Its own --timeout
// is kept under the VM's, so that a slow check ends in a report rather
// than in a cut-off run.
func guestArgs(o Options) []string {
	gt := max(o.VMTimeout*3/4, time.Second).Round(time.Second)
	args := []string{"--format", "json", "--exit-zero", "--timeout", gt.String()}
	return append(args, o.Args...)
}

// execAllowed says why guest-info rules guest-exec out, or "".
func execAllowed(info qga.Info) string {
	for _, cmd := range []string{"guest-exec", "guest-exec-status"} {
		found := false
		for _, c := range info.SupportedCommands {
			if c.Name != cmd {
				continue
			}
			found = true
			if !c.Enabled {
				return cmd + " is disabled in the guest agent (its RPC filter, --allow-rpcs or --block-rpcs; RHEL 9.4 and later block it by default): allow guest-exec and guest-exec-status in qemu-ga's configuration"
			}
		}
		if !found {
			return "the guest agent has no " + cmd + " (qemu-ga " + OneLine(info.Version, 40) + " is too old or built without it)"
		}
	}
	return ""
}

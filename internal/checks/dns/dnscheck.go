package dnscheck

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/netstate"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Finding codes of the dns check, in groups. Each group is a section
// of the Codes in docs/checks/dns.md; TestCodeGroupsDocumented in
// internal/checks holds the two in step.

// Finding codes: the resolver configuration.
const (
)

// Finding codes: the nameservers' answers.
const (
)

// DNSCodes lists every code the dns check emits, a line per group.
func DNSCodes() []string {
	return []string{
		CodeDNSConfigOK, CodeDNSNoNameserver, CodeDNSTooMany, CodeDNSConfigInvalid, CodeDNSConfigUnreadable, CodeDNSConfigRuntime, CodeDNSStubNoUpstream,
		CodeDNSServersOK, CodeDNSServersSomeDead, CodeDNSServersDead, CodeDNSNameNotFound, CodeDNSNameInvalid, CodeDNSProbeSkipped,
	}
}

// Probe defaults, used when the configuration leaves them unset.
const (
	DefaultDNSTimeout = 2 * time.Second
	DefaultDNSRetries = 1
)

// RunDNS is the dns check: it judges the resolver configuration under
// env.Root and, on the running system, probes every nameserver in
// parallel.
func RunDNS(ctx context.Context, env *runner.Env) []runner.Finding {
	st := netstate.Resolver(env.Facts, env.Root)
	fs := JudgeResolverStack(st, env.Live, env.IsRoot)
	servers := st.Servers()
	if len(servers) == 0 {
		return fs
	}
	if !env.Live {
		return append(fs, runner.Skipf(CodeDNSProbeSkipped, "nameserver probes skipped: "+env.NotLiveReason(), nil))
	}
	names, from := ProbeNames(env.Root, env.Live, env.Config)
	// A name that cannot be put in a query would make every server look
	// dead; report it as the configuration mistake it is instead.
	var valid []string
	for _, n := range names {
		if err := ValidName(n); err != nil {
			fs = append(fs, runner.Errorf(CodeDNSNameInvalid, fmt.Sprintf("%s entry %q is not a valid DNS name", from, n),
				map[string]string{"error": err.Error()}, "Fix the name in dns.names (labels of at most 63 characters, 253 in all)"))
			continue
		}
		valid = append(valid, n)
	}
	if len(valid) == 0 && len(names) > 0 {
		return fs // every configured name was invalid, and each is reported
	}
	if names = valid; len(names) == 0 {
		return append(fs, runner.Skipf(CodeDNSProbeSkipped,
			"nameserver probes skipped: the machine has no FQDN and dns.names is empty",
			map[string]string{"hint": "set dns.names in the configuration to a name every nameserver must resolve"}))
	}
	p := Prober{Dialer: env.Dialer, Timeout: DefaultDNSTimeout, Retries: DefaultDNSRetries}
	if env.Config != nil {
		if env.Config.DNS.Timeout > 0 {
			p.Timeout = env.Config.DNS.Timeout
		}
		if env.Config.DNS.Retries != nil {
			p.Retries = *env.Config.DNS.Retries
		}
	}
	results := p.Probe(ctx, servers, names)
	return append(fs, JudgeProbes(results, names, from, p)...)
}

// JudgeResolverStack judges the resolver configuration files. live says
// whether the files describe the running system; under an image root,
// files that only exist at run time (/run) are expected to be missing.
// isRoot words the fix of an unreadable file.
func JudgeResolverStack(st netstate.ResolverStack, live, isRoot bool) []runner.Finding {
	var fs []runner.Finding
	main := st.Main
	stack := st.Describe()
	d := func(kv ...string) map[string]string {
		m := map[string]string{"resolver_stack": stack}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	files := []*netstate.ResolverFile{&st.Main}
	if st.Upstream != nil {
		files = append(files, st.Upstream)
	}
	for _, f := range files {
		if len(f.Problems) > 0 {
			msg := f.Problems[0].String()
			if n := len(f.Problems); n > 1 {
				msg += fmt.Sprintf(" (+%d more)", n-1)
			}
			fs = append(fs, runner.New(runner.Warn, CodeDNSConfigInvalid, msg,
				d("file", f.Path, "problems", problem.Join(f.Problems)),
				"Fix or remove the reported lines; the C library silently skips them"))
		}
	}
	switch {
	case main.Err != nil:
		return append(fs, runner.Errorf(CodeDNSConfigUnreadable, "cannot read "+main.Path,
			d("error", main.Err.Error()), runner.ReadFix(isRoot, main.Path, main.Err)))
	case main.Missing && !live && strings.Contains(main.Link, "run/"):
		return append(fs, runner.Skipf(CodeDNSConfigRuntime,
			main.Path+" points into /run, which is only populated on the running system", d("link", main.Link)))
	case main.Missing:
		why := main.Path + " is missing"
		if main.Link != "" {
			why = main.Path + " is a dangling symlink to " + main.Link
		}
		return append(fs, runner.New(runner.Fail, CodeDNSNoNameserver, why,
			d("effect", "the C library falls back to 127.0.0.1, where usually nothing answers"),
			runner.Fix(live, "Restore /etc/resolv.conf (or the service that writes it, such as systemd-resolved) and give the guest nameservers in its network config",
				"Restore /etc/resolv.conf in the image (a file, or a link to what writes it at boot, such as systemd-resolved's stub-resolv.conf) and give the guest nameservers in its network config")))
	case len(main.Conf.Nameservers) == 0:
		return append(fs, runner.New(runner.Fail, CodeDNSNoNameserver, main.Path+" lists no nameserver",
			d("effect", "the C library falls back to 127.0.0.1, where usually nothing answers"),
			"Give the guest nameservers: netplan or cloud-init network-config `nameservers: {addresses: [...]}`, or the DHCP server's DNS option"))
	}
	if n := len(main.Conf.Nameservers); n > netstate.GlibcMaxNameservers {
		var ignored []string
		for _, ns := range main.Conf.Nameservers[netstate.GlibcMaxNameservers:] {
			ignored = append(ignored, fmt.Sprintf("%s (line %d)", ns.Addr, ns.Line))
		}
		fs = append(fs, runner.New(runner.Warn, CodeDNSTooMany,
			fmt.Sprintf("%s lists %d nameservers; the C library uses only the first %d", main.Path, n, netstate.GlibcMaxNameservers),
			d("ignored", strings.Join(ignored, ", ")),
			"Keep at most three nameservers in the network config, or let systemd-resolved (which uses all of them) manage the list"))
	}
	if st.Stub && live && (st.Upstream.Missing || st.Upstream.Err != nil || len(st.Upstream.Conf.Nameservers) == 0) {
		why := st.Upstream.Path + " is missing: systemd-resolved is probably not running"
		if !st.Upstream.Missing {
			why = "systemd-resolved has no upstream nameserver"
		}
		fs = append(fs, runner.New(runner.Warn, CodeDNSStubNoUpstream, why, d(),
			"Give systemd-resolved upstream servers (netplan `nameservers`, DNS= in resolved.conf, or the DHCP DNS option) and check `resolvectl status`"))
	}
	kv := []string{"nameservers", strconv.Itoa(len(st.Servers()))}
	if len(main.Conf.Search) > 0 {
		kv = append(kv, "search", strings.Join(main.Conf.Search, " "))
	}
	if len(main.Conf.Options) > 0 {
		kv = append(kv, "options", strings.Join(main.Conf.Options, " "))
	}
	msg := fmt.Sprintf("%s lists %d nameserver(s)", main.Path, len(main.Conf.Nameservers))
	if st.Stub {
		msg = fmt.Sprintf("%s points at the systemd-resolved stub with %d upstream server(s)", main.Path, len(st.Upstream.Conf.Nameservers))
	}
	return append(fs, runner.Passf(CodeDNSConfigOK, msg, d(kv...)))
}

// JudgeProbes turns probe results into findings: one verdict for the
// servers applications query (those in /etc/resolv.conf), one for
// systemd-resolved's upstreams when there are any, and one per configured
// name that no server resolves.
func JudgeProbes(results []ServerResult, names []string, namesFrom string, p Prober) []runner.Finding {
	detail := map[string]string{
		"names":      strings.Join(names, ", "),
		"names_from": namesFrom,
		"timeout":    p.Timeout.String(),
		"retries":    strconv.Itoa(p.Retries),
	}
	for i, r := range results {
		k := fmt.Sprintf("server_%d", i+1)
		label := r.Server.Addr.String() + " (" + r.Server.Source + ")"
		if r.Server.Upstream {
			label += " upstream of systemd-resolved"
		}
		detail[k] = label
		if r.Alive() {
			detail[k+"_status"] = "alive"
			detail[k+"_time"] = r.RTT().Round(time.Microsecond).String()
		} else {
			detail[k+"_status"] = "dead"
			detail[k+"_time"] = r.Elapsed.Round(time.Millisecond).String()
		}
		var answers, errs []string
		for _, q := range r.Queries {
			if q.Outcome.Alive() {
				answers = append(answers, describeAnswer(q))
			} else {
				errs = append(errs, fmt.Sprintf("%s %s: %s after %d attempt(s)", q.Name, q.Type, q.Err, q.Attempts))
			}
		}
		if len(answers) > 0 {
			detail[k+"_answers"] = strings.Join(answers, "; ")
		}
		if len(errs) > 0 {
			detail[k+"_errors"] = strings.Join(errs, "; ")
		}
	}
	var fs []runner.Finding
	for _, upstream := range []bool{false, true} {
		var group []ServerResult
		for _, r := range results {
			if r.Server.Upstream == upstream {
				group = append(group, r)
			}
		}
		if len(group) == 0 {
			continue
		}
		fs = append(fs, judgeGroup(group, upstream, detail))
	}
	if namesFrom == "config dns.names" {
		for _, n := range names {
			resolved, asked := false, false
			for _, r := range results {
				for _, q := range r.Queries {
					if q.Name == n && q.Outcome.Alive() {
						asked = true
						resolved = resolved || q.Outcome == OutcomeAnswer
					}
				}
			}
			if asked && !resolved {
				fs = append(fs, runner.New(runner.Warn, CodeDNSNameNotFound,
					fmt.Sprintf("%s does not resolve on any working nameserver", n), maps.Clone(detail),
					"Create the DNS record, or remove the name from dns.names if this network cannot resolve it"))
			}
		}
	}
	return fs
}

func judgeGroup(group []ServerResult, upstream bool, detail map[string]string) runner.Finding {
	var dead []string
	for _, r := range group {
		if !r.Alive() {
			dead = append(dead, r.Server.Addr.String())
		}
	}
	what := "nameserver"
	if upstream {
		what = "upstream server of systemd-resolved"
	}
	switch {
	case len(dead) == len(group):
		return runner.New(runner.Fail, CodeDNSServersDead,
			fmt.Sprintf("no %s answers (%d of %d dead: %s)", what, len(dead), len(group), strings.Join(dead, ", ")), maps.Clone(detail),
			"Check that the nameservers are reachable from this VM (see the routes check, the VLAN and its DHCP DNS option) and replace dead ones in the network config")
	case len(dead) > 0:
		return runner.New(runner.Warn, CodeDNSServersSomeDead,
			fmt.Sprintf("%s %s does not answer (%d of %d dead)", what, strings.Join(dead, ", "), len(dead), len(group)), maps.Clone(detail),
			"Remove or replace the dead nameserver in the network config; lookups that try it first wait for the resolver timeout")
	}
	fastest := time.Duration(0)
	for _, r := range group {
		if t := r.RTT(); fastest == 0 || t < fastest {
			fastest = t
		}
	}
	return runner.Passf(CodeDNSServersOK,
		fmt.Sprintf("all %d %s(s) answer (fastest in %s)", len(group), what, fastest.Round(time.Microsecond)), maps.Clone(detail))
}

func describeAnswer(q QueryResult) string {
	switch q.Outcome {
	case OutcomeAnswer:
		a := make([]string, len(q.Addrs))
		for i, x := range q.Addrs {
			a[i] = x.String()
		}
		return fmt.Sprintf("%s %s %s in %s", q.Name, q.Type, strings.Join(a, " "), q.RTT.Round(time.Microsecond))
	case OutcomeNXDomain:
		return fmt.Sprintf("%s %s NXDOMAIN in %s", q.Name, q.Type, q.RTT.Round(time.Microsecond))
	}
	return fmt.Sprintf("%s %s no record in %s", q.Name, q.Type, q.RTT.Round(time.Microsecond))
}

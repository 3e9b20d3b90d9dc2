package dns

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

// Check is the dns check. It does not depend on routes: when routing is
// broken, which nameservers still answer is exactly the evidence an
// operator needs.
var Check = runner.Check{
	ID:    "dns",
	Title: "DNS resolvers",
	Description: "the resolver lists one to three nameservers (behind systemd-resolved, its upstreams) " +
		"and each of them answers within dns.timeout",
	Settings: settings.Section(),
	Codes:    Codes,
	Run:      RunDNS,
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
		return append(fs, runner.Skipf(CodeDNSProbeSkipped.ID, "nameserver probes skipped: "+env.NotLiveReason(), nil))
	}
	names, from := ProbeNames(env.Root, env.Live, env.Config)
	// A name that cannot be put in a query would make every server look
	// dead; report it as the configuration mistake it is instead.
	var valid []string
	for _, n := range names {
		if err := ValidName(n); err != nil {
			fs = append(fs, CodeDNSNameInvalid.New(runner.Error, fmt.Sprintf("%s entry %q is not a valid DNS name", from, n),
				map[string]string{"error": err.Error()}, CodeDNSNameInvalid.Fixf("name", n, "source", nameSource(from))))
			continue
		}
		valid = append(valid, n)
	}
	if len(valid) == 0 && len(names) > 0 {
		return fs // every configured name was invalid, and each is reported
	}
	if names = valid; len(names) == 0 {
		return append(fs, CodeDNSProbeSkipped.New(runner.Skip,
			"nameserver probes skipped: the machine has no FQDN and dns.names is empty", nil,
			CodeDNSProbeSkipped.CaseFix("when there is no name to ask")))
	}
	cfg := settings.Of(env.Config)
	p := Prober{Dialer: env.Dialer, Timeout: cfg.Timeout, Retries: cfg.Retries}
	if p.Timeout == 0 { // dns.timeout: 0s keeps the default
		p.Timeout = DefaultDNSTimeout
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
			fs = append(fs, CodeDNSConfigInvalid.New(runner.Warn, msg,
				d("file", f.Path, "problems", problem.Join(f.Problems)),
				CodeDNSConfigInvalid.Fixf("file", f.Path)))
		}
	}
	switch {
	case main.Err != nil:
		return append(fs, CodeDNSConfigUnreadable.New(runner.Error, "cannot read "+main.Path,
			d("error", main.Err.Error()), readFix(CodeDNSConfigUnreadable, isRoot, main.Path, main.Err)))
	case main.Missing && !live && strings.Contains(main.Link, "run/"):
		return append(fs, runner.Skipf(CodeDNSConfigRuntime.ID,
			main.Path+" points into /run, which is only populated on the running system", d("link", main.Link)))
	case main.Missing:
		why := main.Path + " is missing"
		if main.Link != "" {
			why = main.Path + " is a dangling symlink to " + main.Link
		}
		return append(fs, CodeDNSNoNameserver.New(runner.Fail, why,
			d("effect", "the C library falls back to 127.0.0.1, where usually nothing answers"),
			CodeDNSNoNameserver.FixOn(live)))
	case len(main.Conf.Nameservers) == 0:
		return append(fs, CodeDNSNoNameserver.New(runner.Fail, main.Path+" lists no nameserver",
			d("effect", "the C library falls back to 127.0.0.1, where usually nothing answers"),
			CodeDNSNoNameserver.CaseFix("when the file lists no nameserver")))
	}
	if n := len(main.Conf.Nameservers); n > netstate.GlibcMaxNameservers {
		var ignored []string
		for _, ns := range main.Conf.Nameservers[netstate.GlibcMaxNameservers:] {
			ignored = append(ignored, fmt.Sprintf("%s (line %d)", ns.Addr, ns.Line))
		}
		fs = append(fs, CodeDNSTooMany.New(runner.Warn,
			fmt.Sprintf("%s lists %d nameservers; the C library uses only the first %d", main.Path, n, netstate.GlibcMaxNameservers),
			d("ignored", strings.Join(ignored, ", ")),
			CodeDNSTooMany.Fixf("ignored", strings.Join(ignored, ", "))))
	}
	if st.Stub && live && (st.Upstream.Missing || st.Upstream.Err != nil || len(st.Upstream.Conf.Nameservers) == 0) {
		why := st.Upstream.Path + " is missing: systemd-resolved is probably not running"
		if !st.Upstream.Missing {
			why = "systemd-resolved has no upstream nameserver"
		}
		fs = append(fs, CodeDNSStubNoUpstream.New(runner.Warn, why, d(), CodeDNSStubNoUpstream.Fixf()))
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
	return append(fs, runner.Passf(CodeDNSConfigOK.ID, msg, d(kv...)))
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
				fs = append(fs, CodeDNSNameNotFound.New(runner.Warn,
					fmt.Sprintf("%s does not resolve on any working nameserver", n), maps.Clone(detail),
					CodeDNSNameNotFound.Fixf("name", n)))
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
		return CodeDNSServersDead.New(runner.Fail,
			fmt.Sprintf("no %s answers (%d of %d dead: %s)", what, len(dead), len(group), strings.Join(dead, ", ")), maps.Clone(detail),
			CodeDNSServersDead.Fixf("servers", strings.Join(dead, ", ")))
	case len(dead) > 0:
		return CodeDNSServersSomeDead.New(runner.Warn,
			fmt.Sprintf("%s %s does not answer (%d of %d dead)", what, strings.Join(dead, ", "), len(dead), len(group)), maps.Clone(detail),
			CodeDNSServersSomeDead.Fixf("servers", strings.Join(dead, ", ")))
	}
	fastest := time.Duration(0)
	for _, r := range group {
		if t := r.RTT(); fastest == 0 || t < fastest {
			fastest = t
		}
	}
	return runner.Passf(CodeDNSServersOK.ID,
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

// readFix is code's fix for a guest file p that could not be read (err),
// by whether guestcheck runs as root: "run as root" only helps a user who
// is not root already, and a file that cannot be opened for another
// reason (a symlink loop) needs repair, not permissions.
func readFix(code runner.Code, isRoot bool, p string, err error) string {
	switch {
	case runner.IsPermission(err) && !isRoot:
		return code.Fixf("path", p)
	case runner.IsPermission(err):
		return code.CaseFix(runner.WhenRootDenied, "path", p)
	}
	return code.CaseFix("when the file cannot be opened for another reason", "path", p)
}

// nameSource says where a probe name from ProbeNames is set, for the fix
// of a name that cannot be asked: the configuration's setting, or the
// file the machine's FQDN was read from.
func nameSource(from string) string {
	switch from {
	case "config dns.names":
		return "`dns.names` in the configuration file"
	case "config hostname.expected":
		return "`hostname.expected` in the configuration file"
	}
	return from
}

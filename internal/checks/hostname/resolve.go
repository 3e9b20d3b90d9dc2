package hostname

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/hosts"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// judgeResolution judges how the judged name resolved, the way a static
// binary can: /etc/hosts (read through the root, so image roots work),
// then DNS on the live system only. When both fail and nsswitch.conf
// lists an NSS module that synthesises the local name, it says so instead
// of failing: glibc programs will resolve the name.
func (v *verdict) judgeResolution() {
	name, res := v.subject, v.f.Resolution
	hostsProblem, bad, hit := v.judgeHosts(name)
	if hit {
		return
	}
	dnsTried, dnsResult := res.DNS.Asked, res.DNS.Skipped
	if dnsTried {
		addrs, bad := dnsAddrs(res.DNS)
		if len(bad) > 0 {
			v.detail["dns_unparsable"] = strings.Join(bad, ", ")
		}
		if len(addrs) > 0 {
			v.judgeAddrs(name, "via DNS", addrs)
			return
		}
	}
	if res.DNS.Interrupted != nil {
		v.interrupted(res.DNS.Interrupted)
		return
	}
	if dnsTried {
		dnsResult = "DNS: " + dnsReason(res.DNS.Err, res.DNS.Got)
	}
	v.detail["resolution"] = "not resolved (" + dnsResult + ")"
	if hostsProblem != "" {
		v.detail["resolution"] += "; " + hostsProblem
	}
	if v.judgeNSS(name) {
		return
	}

	var msg string
	switch {
	case hostsProblem != "":
		msg = fmt.Sprintf("%s does not resolve: %s", name, hostsProblem)
	case dnsTried:
		msg = fmt.Sprintf("%s resolves through neither /etc/hosts nor DNS (%s): sudo, mail and other programs that look up the local name stall or complain", name, dnsResult)
	default:
		msg = fmt.Sprintf("%s is not in /etc/hosts (%s): sudo, mail and other programs that look up the local name stall or complain unless DNS has it", name, dnsResult)
	}
	v.add(runner.Warn, codeUnresolvable, msg, unresolvableFix(name, bad))
}

// unresolvableFix is the line that makes name resolve through /etc/hosts:
// the broken line that meant to, corrected, when there is one. A short
// name leaves the FQDN for the operator to fill in.
func unresolvableFix(name string, bad *hosts.LineError) string {
	kv := []string{"short", Short(name)}
	if strings.Contains(strings.TrimSuffix(name, "."), ".") {
		kv = append(kv, "fqdn", strings.TrimSuffix(name, "."))
	}
	if bad != nil {
		return codeUnresolvable.CaseFix("when a malformed line names it", append(kv, "name", name, "line", fmt.Sprint(bad.Line), "reason", bad.Msg)...)
	}
	return codeUnresolvable.Fixf(kv...)
}

// judgeHosts looks name up in /etc/hosts and judges the addresses when it
// is there (hit). hostsProblem names a line that lists the name but that
// resolvers skip, and bad is that line.
func (v *verdict) judgeHosts(name string) (hostsProblem string, bad *hosts.LineError, hit bool) {
	h := v.f.Resolution.Hosts
	if !v.readProblem(pathEtcHosts, h.ReadErr) {
		return "", nil, false
	}
	var he *hosts.Error
	if errors.As(h.ParseErr, &he) {
		var ps []string
		for _, p := range he.Problems {
			ps = append(ps, p.Error())
			for _, f := range p.Fields {
				if Compare(f, name) == MatchExact && hostsProblem == "" {
					hostsProblem = fmt.Sprintf("%s line %d names it but is skipped: %s", pathEtcHosts, p.Line, p.Msg)
					bad = &p
				}
			}
		}
		v.detail["etc_hosts_problems"] = strings.Join(ps, "; ")
	}
	hits := hosts.Lookup(h.Value, name)
	if len(hits) == 0 {
		return hostsProblem, bad, false
	}
	var addrs []netip.Addr
	for _, e := range hits {
		addrs = append(addrs, e.Addr)
	}
	v.judgeAddrs(name, fmt.Sprintf("via /etc/hosts line %d", hits[0].Line), addrs)
	return hostsProblem, bad, true
}

// judgeNSS passes a name that only an NSS module resolves, and notes a
// module whose library is missing. It reports whether it passed.
func (v *verdict) judgeNSS(name string) bool {
	n := v.f.Resolution.NSS
	if n.ReadErr != nil {
		v.fileProblem(n.Path, errReason(n.ReadErr))
	}
	if n.Found {
		v.detail["nsswitch_hosts"] = strings.Join(n.Sources, " ")
	}
	if len(n.Problems) > 0 {
		v.detail["nsswitch_problems"] = problem.Join(n.Problems)
	}
	switch {
	case n.Module != "" && n.Lib != "":
		who := "glibc programs such as sudo resolve it"
		if n.Module == "resolve" {
			who = "glibc programs such as sudo resolve it while systemd-resolved runs"
		}
		v.add(runner.Pass, codeNSSOnly,
			fmt.Sprintf("%s resolves only through the NSS module %s, which this static binary cannot use; %s", name, n.Module, who),
			"", "nss_module", n.Lib)
		return true
	case n.Module != "":
		v.detail["nss_module"] = fmt.Sprintf("nsswitch.conf lists %s but libnss_%s.so.2 was not found, so glibc skips it", n.Module, n.Module)
	}
	return false
}

// dnsReason turns a lookup failure into a short phrase.
func dnsReason(err error, got []string) string {
	var de *net.DNSError
	switch {
	case err == nil && len(got) == 0:
		return "no addresses"
	case err == nil:
		return "no parsable addresses"
	case errors.As(err, &de) && de.IsNotFound:
		return "no such host"
	case errors.As(err, &de) && de.IsTimeout, errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no answer within %s", hostnameDNSTimeout)
	}
	return err.Error()
}

// interrupted reports that the check's deadline ran out before resolution.
func (v *verdict) interrupted(err error) {
	v.detail["resolution"] = "interrupted: " + err.Error()
	v.add(runner.Error, codeInterrupted, "hostname check interrupted before name resolution: "+err.Error(), codeInterrupted.Fixf())
}

// judgeAddrs classifies the addresses name resolved to: loopback (127/8,
// ::1, including Debian's 127.0.1.1) and this machine's interface addresses
// are local.
func (v *verdict) judgeAddrs(name, via string, addrs []netip.Addr) {
	local := v.localAddrs()
	var shown, remote []string
	anyLocal, unknown := false, false
	for _, a := range addrs {
		a = a.Unmap().WithZone("")
		switch {
		case a.IsLoopback():
			shown = append(shown, a.String()+" (loopback)")
			anyLocal = true
		case local == nil:
			shown = append(shown, a.String())
			unknown = true
		case local[a]:
			shown = append(shown, a.String()+" (interface address)")
			anyLocal = true
		default:
			shown = append(shown, a.String()+" (not local)")
			remote = append(remote, a.String())
		}
	}
	list := strings.Join(shown, ", ")
	v.detail["resolution"] = via + ": " + list
	switch {
	case anyLocal:
		v.add(runner.Pass, codeResolves, fmt.Sprintf("%s resolves %s to %s", name, via, list), "")
	case unknown:
		v.add(runner.Pass, codeResolves,
			fmt.Sprintf("%s resolves %s to %s (not checked against interface addresses: %s)", name, via, list, v.localAddrsNote()), "")
	default:
		v.add(runner.Warn, codeResolvesRemote,
			fmt.Sprintf("%s resolves %s to %s, which is not an address of this VM", name, via, strings.Join(remote, ", ")),
			codeResolvesRemote.Fixf("name", name, "addresses", strings.Join(remote, ", ")))
	}
}

// localAddrs returns this machine's interface addresses, or nil when they
// cannot be known (not live, or listing them failed).
func (v *verdict) localAddrs() map[netip.Addr]bool {
	l := v.f.Resolution.Local
	if !v.f.Live || !l.Listed {
		return nil
	}
	if l.Err != nil {
		v.detail["interface_addresses"] = "unknown: " + l.Err.Error()
		return nil
	}
	m := map[netip.Addr]bool{}
	var list []string
	for _, a := range l.Addrs {
		var ip net.IP
		switch x := a.(type) {
		case *net.IPNet:
			ip = x.IP
		case *net.IPAddr:
			ip = x.IP
		}
		if na, ok := netip.AddrFromSlice(ip); ok {
			m[na.Unmap()] = true
			list = append(list, na.Unmap().String())
		}
	}
	v.detail["interface_addresses"] = or(strings.Join(list, ", "), "none")
	return m
}

func (v *verdict) localAddrsNote() string {
	if !v.f.Live {
		return v.f.NotLive
	}
	return v.detail["interface_addresses"]
}

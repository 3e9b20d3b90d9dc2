package networkconfig

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/netstate"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// JudgeIntentConsistency judges the declared configuration on its own:
// an address declared twice, two default gateways of one family on
// different interfaces (netplan refuses those), and two declarations for
// one interface. With facts, "one interface" means one live link,
// whatever the declarations matched it by.
func JudgeIntentConsistency(in Intent, facts *IntentFacts) []runner.Finding {
	det := detailer(intentDetail(in))
	// Facts come from the running system only: without them the
	// configuration may be an image's, and its fix is the image's.
	fs := judgeDuplicateAddresses(in, det, facts != nil)
	fs = append(fs, judgeGatewayConflicts(in, det)...)
	return append(fs, judgeMatchedTwice(in, facts, det)...)
}

// detailer returns a function that builds a finding's detail: base plus
// the key/value pairs given.
func detailer(base map[string]string) func(kv ...string) map[string]string {
	return func(kv ...string) map[string]string {
		d := map[string]string{}
		for k, v := range base {
			d[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			d[kv[i]] = kv[i+1]
		}
		return d
	}
}

// judgeDuplicateAddresses reports an address declared more than once.
func judgeDuplicateAddresses(in Intent, det func(kv ...string) map[string]string, live bool) []runner.Finding {
	var fs []runner.Finding
	type where struct{ iface, at string }
	addrs := map[netip.Addr][]where{}
	var addrOrder []netip.Addr
	for _, d := range in.Ifaces {
		for _, a := range d.Addresses {
			ip := a.Prefix.Addr()
			if _, ok := addrs[ip]; !ok {
				addrOrder = append(addrOrder, ip)
			}
			addrs[ip] = append(addrs[ip], where{d.Label(), a.At})
		}
	}
	for _, ip := range addrOrder {
		ws := addrs[ip]
		if len(ws) < 2 {
			continue
		}
		var at []string
		for _, w := range ws {
			at = append(at, w.iface+" at "+w.at)
		}
		fs = append(fs, CodeNCDuplicateAddress.New(runner.Fail,
			fmt.Sprintf("address %s is declared %d times: %s", ip, len(ws), strings.Join(at, "; ")),
			det("address", ip.String(), "declared", strings.Join(at, "\n")),
			CodeNCDuplicateAddress.FixOn(live, "address", ip.String())))
	}
	return fs
}

// judgeGatewayConflicts reports default routes of one family and one
// metric on two interfaces: the kernel picks either (netplan reports them
// as conflicting).
func judgeGatewayConflicts(in Intent, det func(kv ...string) map[string]string) []runner.Finding {
	var fs []runner.Finding
	for _, f := range []netstate.Family{netstate.IPv4, netstate.IPv6} {
		type group struct {
			gws    []string
			ifaces map[string]bool
		}
		groups := map[string]*group{}
		var order []string
		for _, d := range in.Ifaces {
			for _, g := range d.Gateways {
				if netstate.FamilyOf(g.Addr) != f {
					continue
				}
				gr, ok := groups[g.Metric]
				if !ok {
					gr = &group{ifaces: map[string]bool{}}
					groups[g.Metric] = gr
					order = append(order, g.Metric)
				}
				gr.gws = append(gr.gws, g.Addr.String()+" on "+d.Label()+" at "+g.At)
				gr.ifaces[d.ID] = true
			}
		}
		for _, m := range order {
			gr := groups[m]
			if len(gr.ifaces) < 2 {
				continue
			}
			metric := "the same metric " + m
			if m == "" {
				metric = "no metric"
			}
			fs = append(fs, CodeNCGatewayConflict.New(runner.Fail,
				fmt.Sprintf("%d interfaces declare an %s default gateway with %s: %s", len(gr.ifaces), f, metric, strings.Join(gr.gws, "; ")),
				det("family", f.String(), "gateways", strings.Join(gr.gws, "\n")),
				CodeNCGatewayConflict.Fixf("family", f.String())))
		}
	}
	return fs
}

// judgeMatchedTwice reports two declarations of one interface: by name,
// by MAC, or (with facts) by matching the same live link.
func judgeMatchedTwice(in Intent, facts *IntentFacts, det func(kv ...string) map[string]string) []runner.Finding {
	var fs []runner.Finding
	claims := map[string][]string{}
	var claimOrder []string
	claim := func(key, what string) {
		if _, ok := claims[key]; !ok {
			claimOrder = append(claimOrder, key)
		}
		claims[key] = append(claims[key], what)
	}
	for _, d := range in.Ifaces {
		what := d.Label() + " at " + d.At
		if facts != nil {
			for _, l := range facts.matches(d) {
				claim("interface "+l.Name, what)
			}
			continue
		}
		if d.Name != "" {
			claim("interface name "+d.Name, what)
		}
		if d.MatchMAC != nil && d.Kind == KindEthernet {
			claim("MAC "+d.MatchMAC.String(), what)
		}
	}
	for _, k := range claimOrder {
		ws := slices.Compact(claims[k])
		if len(ws) < 2 {
			continue
		}
		fs = append(fs, CodeNCMatchedTwice.New(runner.Fail,
			fmt.Sprintf("%s is declared %d times: %s", k, len(ws), strings.Join(ws, "; ")),
			det("declarations", strings.Join(ws, "\n")),
			CodeNCMatchedTwice.Fixf("what", k)))
	}
	return fs
}

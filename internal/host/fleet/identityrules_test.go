package fleet

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/testenv/promrules"
)

// identityFixes is the rules' fix annotation for the shared item, one
// branch per guestid.Items, as the rules file holds it (folded YAML
// lines, 12 spaces in).
func identityFixes() string {
	var b strings.Builder
	for i, it := range guestid.Items {
		pre := "{{- else if"
		if i == 0 {
			pre = "{{ if"
		}
		fmt.Fprintf(&b, "            %s eq $labels.item %q }}%s\n", pre, it, guestid.Fix(it))
	}
	b.WriteString("            {{- end }}\n")
	return b.String()
}

// TestIdentityRuleFixes holds the alert's fix annotation to guestid.Fix:
// Prometheus cannot call it, so the rules file carries a copy, generated
// (-update rewrites it).
func TestIdentityRuleFixes(t *testing.T) {
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	const marker = "          fix: >-\n"
	start := strings.Index(s, "# generated: guestid.Fix per item")
	if start < 0 || !strings.Contains(s[start:], marker) {
		t.Fatalf("%s: no generated fix annotation", rulesFile)
	}
	start += strings.Index(s[start:], marker) + len(marker)
	end := start
	for end < len(s) && strings.HasPrefix(s[end:], "            ") {
		end += strings.IndexByte(s[end:], '\n') + 1
	}
	if want := identityFixes(); s[start:end] != want {
		if *update {
			if err := os.WriteFile(rulesFile, []byte(s[:start]+want+s[end:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s: the fix annotation is not guestid.Fix (go test -run TestIdentityRuleFixes -update rewrites it):\n%s", rulesFile, s[start:end])
	}
}

// seenGuest is one guest as a scrape shows it: through guestcheck fleet
// on a host (domain set), or through its own textfile.
type seenGuest struct {
	instance, job, domain string
	boot                  int
	id                    guestid.Identity
	networks              map[string]string
}

func (g seenGuest) bootID() string { return fmt.Sprintf("0f2c1f7e-3b0d-4e57-9c54-%012d", g.boot) }

// identitySeries renders each view with the product's own renderer and
// keeps its identity series, with the labels a scrape adds.
func identitySeries(t *testing.T, views []seenGuest) []promrules.Series {
	t.Helper()
	var out []promrules.Series
	for _, g := range views {
		var b bytes.Buffer
		id := g.id
		rep := report.New(nil, report.Meta{Host: report.Host{BootID: g.bootID()}, Identity: &id, StartedAt: time.Unix(0, 0)})
		if g.domain != "" {
			r := Result{VMs: []VM{{Name: g.domain, Report: &rep, Networks: g.networks}}}
			if err := WritePrometheus(&b, r); err != nil {
				t.Fatal(err)
			}
		} else if err := report.WritePrometheus(&b, rep); err != nil {
			t.Fatal(err)
		}
		sels := series(t, b.Bytes())
		keys := make([]string, 0, len(sels))
		for sel := range sels {
			if strings.HasPrefix(sel, report.IdentityMetric+"{") || strings.HasPrefix(sel, IdentityMetric+"{") {
				keys = append(keys, sel)
			}
		}
		sort.Strings(keys)
		for _, sel := range keys {
			sel = strings.TrimSuffix(sel, "}") + fmt.Sprintf(",job=%q,instance=%q}", g.job, g.instance)
			out = append(out, promrules.Series{Series: sel, Values: "1x40"})
		}
	}
	return out
}

// sharedAlert is the alert the rules should fire for g sharing item's
// values (sorted, as the summary lists them) with the guests named in
// others: one alert per guest and item, however many values.
func sharedAlert(g seenGuest, it guestid.Item, values []string, others string) promrules.Alert {
	boot, _ := guestid.BootHash(g.bootID())
	name := g.domain
	l := map[string]string{"boot": boot, "item": string(it), "instance": g.instance, "job": g.job, "severity": "critical"}
	if g.domain != "" {
		l["domain"] = g.domain
	} else {
		name = g.instance
	}
	l["name"] = name
	return promrules.Alert{Labels: l, Annotations: map[string]string{
		"summary": fmt.Sprintf("%s on %s shares %s with other guests (%d value(s): %s)", name, g.instance, it, len(values), strings.Join(values, ", ")),
		"others":  others,
		"fix":     guestid.Fix(it),
	}}
}

// TestIdentityRulesAcrossHosts runs the shipped cross-host rules with
// promtool over two hosts' fleet series and three guests' own textfile
// series: vm-alpha (host A) and vm-bravo (host B) share a machine-id,
// which neither host sees alone, and so do guest-1 and guest-2, seen only
// through their textfiles. vm-alpha and vm-charlie are also seen through
// their own textfiles, and vm-charlie through a second host (a migration
// window): one guest seen twice is one guest. An address is shared on
// one network of one host only. Each guest alerts once per item.
func TestIdentityRulesAcrossHosts(t *testing.T) {
	rules := promrules.Load(t, rulesFile)
	const shared, other, third = "4f1d2c3b4a5968778695a4b3c2d1e0f9", "00112233445566778899aabbccddeeff", "ffeeddccbbaa99887766554433221100"
	vm := func(mid, host, mac, addr string) guestid.Identity {
		return guestid.Identity{MachineIDHash: mid, Hostname: host,
			Interfaces: []guestid.Interface{{Name: "enp1s0", MAC: mac, Addresses: []string{addr + "/24"}}}}
	}
	br := func(mac, net string) map[string]string { return map[string]string{mac: net} }
	alpha := seenGuest{"hv-a:9847", "guestcheck-fleet", "vm-alpha", 1, vm(shared, "alpha", "52:54:00:00:00:01", "192.0.2.10"), br("52:54:00:00:00:01", "bridge br0")}
	bravo := seenGuest{"hv-b:9847", "guestcheck-fleet", "vm-bravo", 2, vm(shared, "bravo", "52:54:00:00:00:02", "192.0.2.10"), br("52:54:00:00:00:02", "bridge br1")}
	charlie := seenGuest{"hv-b:9847", "guestcheck-fleet", "vm-charlie", 3, vm(other, "charlie", "52:54:00:00:00:03", "192.0.2.10"), br("52:54:00:00:00:03", "bridge br0")}
	charlieOnA := charlie
	charlieOnA.instance, charlieOnA.networks = "hv-a:9847", br("52:54:00:00:00:03", "bridge br2")
	own := func(g seenGuest, instance string) seenGuest {
		return seenGuest{instance: instance, job: "node", boot: g.boot, id: g.id}
	}
	g1 := seenGuest{"guest-1:9100", "node", "", 4, vm(third, "g1", "52:54:00:00:00:04", "198.51.100.4"), nil}
	g2 := seenGuest{"guest-2:9100", "node", "", 5, vm(third, "g2", "52:54:00:00:00:05", "198.51.100.4"), nil}
	// Two VMs on one network of host C, with a third on a network of the
	// same name on host D.
	x := seenGuest{"hv-c:9847", "guestcheck-fleet", "vm-x", 6, vm("6"+other[1:], "x", "52:54:00:00:00:06", "203.0.113.7"), br("52:54:00:00:00:06", "bridge br0")}
	y := seenGuest{"hv-c:9847", "guestcheck-fleet", "vm-y", 7, vm("7"+other[1:], "y", "52:54:00:00:00:07", "203.0.113.7"), br("52:54:00:00:00:07", "bridge br0")}
	z := seenGuest{"hv-d:9847", "guestcheck-fleet", "vm-z", 8, vm("8"+other[1:], "z", "52:54:00:00:00:08", "203.0.113.7"), br("52:54:00:00:00:08", "bridge br0")}

	input := identitySeries(t, []seenGuest{alpha, bravo, charlie, charlieOnA, own(alpha, "alpha:9100"), own(charlie, "charlie:9100"), g1, g2, x, y, z})
	want := []promrules.Alert{
		sharedAlert(alpha, guestid.ItemMachineID, []string{shared}, "vm-bravo on hv-b:9847"),
		sharedAlert(bravo, guestid.ItemMachineID, []string{shared}, "vm-alpha on hv-a:9847"),
		sharedAlert(g1, guestid.ItemMachineID, []string{third}, "guest-2:9100 on guest-2:9100"),
		sharedAlert(g2, guestid.ItemMachineID, []string{third}, "guest-1:9100 on guest-1:9100"),
		sharedAlert(x, guestid.ItemAddress, []string{"203.0.113.7"}, "vm-y on hv-c:9847"),
		sharedAlert(y, guestid.ItemAddress, []string{"203.0.113.7"}, "vm-x on hv-c:9847"),
	}
	rules.Run(t, []promrules.Test{{Interval: "1m", Input: input, Alerts: []promrules.AlertTest{
		{EvalTime: "10m", Alertname: "GuestcheckSharedIdentity", ExpAlerts: []promrules.Alert{}},
		{EvalTime: "20m", Alertname: "GuestcheckSharedIdentity", ExpAlerts: want},
	}}})
}

// TestIdentitySeriesBounded: a guest whose report lists thousands of
// host keys, NICs and addresses, and a hostname of quotes and newlines,
// gets at most guestid.MaxExportedSeries identity series, each label
// value escaped and at most guestid.MaxExportedLen bytes.
func TestIdentitySeriesBounded(t *testing.T) {
	id := guestid.Identity{MachineIDHash: "4f1d2c3b4a5968778695a4b3c2d1e0f9", Hostname: strings.Repeat("a\"b\\c\nd", 40)}
	nets := map[string]string{}
	for i := range 2000 {
		mac := fmt.Sprintf("52:54:00:00:%02x:%02x", i>>8, i&0xff)
		id.HostKeys = append(id.HostKeys, guestid.HostKey{Type: "ssh-ed25519", Fingerprint: fmt.Sprintf("SHA256:%043d", i)})
		id.Interfaces = append(id.Interfaces, guestid.Interface{Name: "eth", MAC: mac, Addresses: []string{fmt.Sprintf("192.0.2.%d/24", i%256), "2001:db8::1/64"}})
		nets[mac] = "bridge br0"
	}
	rep := report.New(nil, report.Meta{Host: report.Host{BootID: "0f2c1f7e-3b0d-4e57-9c54-000000000001"}, Identity: &id})
	var b bytes.Buffer
	if err := WritePrometheus(&b, Result{VMs: []VM{{Name: "hostile", Report: &rep, Networks: nets}}}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for sel := range series(t, b.Bytes()) {
		if !strings.HasPrefix(sel, IdentityMetric+"{") {
			continue
		}
		n++
		for k, v := range labelsOf(sel) {
			if len(v) > guestid.MaxExportedLen || strings.ContainsAny(v, "\n") {
				t.Errorf("%s: label %s is %d bytes or holds a newline", sel, k, len(v))
			}
		}
	}
	if n == 0 || n > guestid.MaxExportedSeries {
		t.Errorf("%d identity series for one guest, want 1 to %d", n, guestid.MaxExportedSeries)
	}
}

// TestIdentityRulesOncePerGuest: two clones on two hosts sharing two host
// keys alert once each for ssh-host-key, the summary listing both keys.
func TestIdentityRulesOncePerGuest(t *testing.T) {
	rules := promrules.Load(t, rulesFile)
	keys := []guestid.HostKey{{Type: "ssh-ed25519", Fingerprint: "SHA256:aaaa"}, {Type: "ssh-rsa", Fingerprint: "SHA256:bbbb"}}
	vm := func(mid, host string) guestid.Identity {
		return guestid.Identity{MachineIDHash: mid, Hostname: host, HostKeys: keys}
	}
	a := seenGuest{"hv-a:9847", "guestcheck-fleet", "vm-a", 1, vm("1"+strings.Repeat("0", 31), "a"), nil}
	b := seenGuest{"hv-b:9847", "guestcheck-fleet", "vm-b", 2, vm("2"+strings.Repeat("0", 31), "b"), nil}
	want := []promrules.Alert{
		sharedAlert(a, guestid.ItemHostKey, []string{"SHA256:aaaa", "SHA256:bbbb"}, "vm-b on hv-b:9847"),
		sharedAlert(b, guestid.ItemHostKey, []string{"SHA256:aaaa", "SHA256:bbbb"}, "vm-a on hv-a:9847"),
	}
	rules.Run(t, []promrules.Test{{Interval: "1m", Input: identitySeries(t, []seenGuest{a, b}), Alerts: []promrules.AlertTest{
		{EvalTime: "20m", Alertname: "GuestcheckSharedIdentity", ExpAlerts: want},
	}}})
}

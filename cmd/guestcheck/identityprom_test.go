package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/qga/qgafake"
	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// promGuest is a guest root for the identity metrics' tests: its
// machine-id, cloud-init instance-id and a networkd DHCP client whose
// DUID systemd derives from the machine-id, all raw values no metric may
// show.
type promGuest struct {
	name, machineID, instanceID string
	boot                        int
}

func (g promGuest) bootID() string { return fmt.Sprintf("6d1e3c2a-0b9f-4c8e-a7d6-%012d", g.boot) }

// report runs guestcheck --root over the guest's root and returns its JSON
// report as the running guest would write it: with its boot ID, which an
// image root has none of.
func (g promGuest) report(t *testing.T) report.Report {
	t.Helper()
	root := testenv.WriteTree(t, map[string]string{
		"etc/machine-id":                    g.machineID + "\n",
		"etc/hostname":                      g.name + "\n",
		"var/lib/cloud/data/instance-id":    g.instanceID + "\n",
		"etc/systemd/network/10-en.network": "[Match]\nName=en*\n[Network]\nDHCP=yes\n",
	})
	var stdout, stderr bytes.Buffer
	run([]string{"--root", root, "--config", writeConfig(t, ""), "--only", "hostname", "--format", "json", "--exit-zero"}, &stdout, &stderr, checks.All)
	var rep report.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.Identity == nil {
		t.Fatalf("guestcheck --root %s: %v, no identity: %s%s", root, err, stdout.String(), stderr.String())
	}
	rep.Host.BootID = g.bootID()
	return rep
}

// raw lists the guest's raw identity values, each as it may be spelled.
func (g promGuest) raw() []string {
	duid, _ := guestid.NetworkdDUID(g.machineID)
	return []string{g.machineID, g.instanceID, hex.EncodeToString(duid)}
}

// flat folds the spellings of an ID (dashes, colons, case) away.
func flat(s string) string {
	return strings.ToLower(strings.NewReplacer("-", "", ":", "", " ", "").Replace(s))
}

var machineIDSeries = regexp.MustCompile(`(?m)^guestcheck_(?:fleet_vm_)?identity_info\{.*item="machine-id",value="([0-9a-f]{32})"\} 1$`)

// TestIdentityMetricsShared: the in-guest Prometheus output of two guests
// with one machine-id has an identity series alike but for the boot, a
// third guest's does not, and guestcheck fleet over the three writes the
// same values; no raw machine-id, instance-id or DUID is in any of them.
func TestIdentityMetricsShared(t *testing.T) {
	guests := []promGuest{
		{"vm-alpha", "4b2f0c1d9e8a4f6b8c7d6e5f4a3b2c1d", "iid-alpha-7f3e", 1},
		{"vm-bravo", "4b2f0c1d9e8a4f6b8c7d6e5f4a3b2c1d", "iid-bravo-7f3e", 2},
		{"vm-charlie", "9a8b7c6d5e4f30211203f4e5d6c7b8a9", "iid-charlie-7f3e", 3},
	}
	dir := socketDir(t)
	var mids []string
	args := []string{"fleet", "--format", "prometheus", "--vm-timeout", "5s"}
	for _, g := range guests {
		rep := g.report(t)
		out, err := render(rep, report.FormatPrometheus, report.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range g.raw() {
			if strings.Contains(flat(string(out)), r) {
				t.Errorf("%s: the in-guest metrics hold the raw %s", g.name, r)
			}
		}
		m := machineIDSeries.FindStringSubmatch(string(out))
		if m == nil || !strings.Contains(string(out), `item="dhcp-client-id"`) || !strings.Contains(string(out), `item="instance-id"`) {
			t.Fatalf("%s: no machine-id, DHCP or instance-id series in:\n%s", g.name, out)
		}
		mids = append(mids, m[1])
		js, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, "--agent-socket", g.name+"="+fakeGuest(t, dir, g.name, &qgafake.Agent{Run: guestRunning(t, js)}))
	}
	if mids[0] != mids[1] || mids[0] == mids[2] {
		t.Errorf("machine-id series values %q: want the first two alike and the third apart", mids)
	}
	var stdout, stderr bytes.Buffer
	run(args, &stdout, &stderr, checks.All)
	fleetOut := stdout.String()
	for _, g := range guests {
		for _, r := range g.raw() {
			if strings.Contains(flat(fleetOut), r) {
				t.Errorf("fleet: the metrics hold %s's raw %s", g.name, r)
			}
		}
	}
	var got []string
	for _, m := range machineIDSeries.FindAllStringSubmatch(fleetOut, -1) {
		got = append(got, m[1])
	}
	slices.Sort(got)
	slices.Sort(mids)
	if !slices.Equal(got, mids) {
		t.Errorf("fleet's machine-id series values %q, want the in-guest ones %q\n%s%s", got, mids, fleetOut, stderr.String())
	}
}

// TestIdentityAlertsRealPrometheus: a real Prometheus scrapes two hosts'
// `guestcheck fleet --listen` (host A over vm-alpha, host B over vm-bravo
// and vm-charlie; vm-alpha and vm-bravo share a machine-id, so each host
// alone sees no collision) and two node_exporter textfile collectors
// serving the in-guest metrics of guest-1 and guest-2 (which share
// another), and evaluates the shipped rules. GuestcheckSharedIdentity
// must fire for the machine-id of exactly those four guests, and for
// nothing of vm-charlie's. The rules' `for:` and `interval:` are cut to
// 1s in the test's copy; nothing else changes. Everything listens on loopback.
func TestIdentityAlertsRealPrometheus(t *testing.T) {
	prom := testenv.Tool(t, "prometheus", "prometheus")
	nodeExporter := testenv.Tool(t, "prometheus-node-exporter", "prometheus-node-exporter")
	const one, two = "4b2f0c1d9e8a4f6b8c7d6e5f4a3b2c1d", "9a8b7c6d5e4f30211203f4e5d6c7b8a9"
	dir := socketDir(t)
	agent := func(g promGuest) string {
		js, err := json.Marshal(g.report(t))
		if err != nil {
			t.Fatal(err)
		}
		return g.name + "=" + fakeGuest(t, dir, g.name, &qgafake.Agent{Run: guestRunning(t, js)})
	}
	hosts := map[string][]string{
		"hv-a": {agent(promGuest{"vm-alpha", one, "iid-a", 1})},
		"hv-b": {agent(promGuest{"vm-bravo", one, "iid-b", 2}), agent(promGuest{"vm-charlie", "0123456789abcdef0123456789abcdef", "iid-c", 3})},
	}
	var targets []string
	var logs []func() string
	for _, h := range []string{"hv-a", "hv-b"} {
		addr := freePort(t)
		args := []string{"fleet", "--listen", addr, "--interval", "2s", "--vm-timeout", "5s"}
		for _, a := range hosts[h] {
			args = append(args, "--agent-socket", a)
		}
		gc := exec.Command(os.Args[0], "-test.run=^TestHelperGuestcheck$")
		gc.Env = append(os.Environ(), "GUESTCHECK_HELPER_ARGS="+strings.Join(args, "\x1f"))
		logs = append(logs, startLogged(t, gc, filepath.Join(dir, h+".log")))
		targets = append(targets, fmt.Sprintf("{targets: ['%s'], labels: {instance: %s}}", addr, h))
	}
	var nodeTargets []string
	for i, g := range []promGuest{{"guest-1", two, "iid-1", 4}, {"guest-2", two, "iid-2", 5}} {
		out, err := render(g.report(t), report.FormatPrometheus, report.Options{})
		if err != nil {
			t.Fatal(err)
		}
		text := filepath.Join(dir, g.name)
		testenv.WriteFiles(t, text, map[string]string{"guestcheck.prom": string(out)})
		addr := freePort(t)
		ne := exec.Command(nodeExporter, "--collector.disable-defaults", "--collector.textfile", "--collector.textfile.directory="+text,
			"--web.listen-address="+addr)
		logs = append(logs, startLogged(t, ne, filepath.Join(dir, fmt.Sprintf("node%d.log", i))))
		nodeTargets = append(nodeTargets, fmt.Sprintf("{targets: ['%s'], labels: {instance: %s}}", addr, g.name))
	}
	rules := identityRulesCopy(t, dir, "1s")
	cfg := fmt.Sprintf("global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}\nrule_files: ['%s']\nscrape_configs:\n"+
		"  - {job_name: guestcheck-fleet, static_configs: [%s]}\n  - {job_name: node, static_configs: [%s]}\n",
		rules, strings.Join(targets, ", "), strings.Join(nodeTargets, ", "))
	testenv.WriteFiles(t, dir, map[string]string{"prometheus.yml": cfg})
	promAddr := freePort(t)
	p := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	logs = append(logs, startLogged(t, p, filepath.Join(dir, "prometheus.log")))

	want := []string{"guest-1", "guest-2", "vm-alpha", "vm-bravo"}
	start := time.Now()
	var got []string
	var all []promAlert
	for time.Since(start) < 30*time.Second {
		all = firingAlerts(t, promAddr, "GuestcheckSharedIdentity")
		got = nil
		for _, a := range all {
			if a.Labels["item"] == "machine-id" {
				got = append(got, a.Labels["name"])
			}
		}
		slices.Sort(got)
		if slices.Equal(got, want) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if !slices.Equal(got, want) {
		var b strings.Builder
		for _, l := range logs {
			b.WriteString(l())
		}
		t.Fatalf("machine-id alerts fire for %q after %s, want %q; logs:\n%s", got, time.Since(start).Round(time.Second), want, b.String())
	}
	for _, a := range all {
		if a.Labels["name"] == "vm-charlie" {
			t.Errorf("an alert fires for vm-charlie: %v", a.Labels)
		}
		if a.Labels["name"] == "vm-alpha" && a.Labels["item"] == "machine-id" && a.Annotations["others"] != "vm-bravo on hv-b" {
			t.Errorf("vm-alpha's alert names the others %q, want vm-bravo on hv-b", a.Annotations["others"])
		}
	}
	t.Logf("the machine-id alerts fired %s after start", time.Since(start).Round(time.Millisecond))
}

// identityRulesCopy is the shipped rules file with every `for:` cut to
// 1s and every group `interval:` set to interval, in dir, for a test that
// cannot wait 15 minutes.
func identityRulesCopy(t testing.TB, dir, interval string) string {
	t.Helper()
	b, err := os.ReadFile("../../packaging/examples/prometheus-guestcheck-rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	b = regexp.MustCompile(`(?m)^(\s+for:) \S+$`).ReplaceAll(b, []byte("$1 1s"))
	b = regexp.MustCompile(`(?m)^(\s+interval:) \S+$`).ReplaceAll(b, []byte("$1 "+interval))
	testenv.WriteFiles(t, dir, map[string]string{"rules.yml": string(b)})
	return filepath.Join(dir, "rules.yml")
}

// promAlert is one alert as Prometheus's /api/v1/alerts lists it.
type promAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
}

// firingAlerts lists the firing alerts named name; none while Prometheus
// is starting.
func firingAlerts(t testing.TB, addr, name string) []promAlert {
	t.Helper()
	cl := http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get("http://" + addr + "/api/v1/alerts")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Alerts []promAlert `json:"alerts"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&r); err != nil {
		return nil
	}
	var out []promAlert
	for _, a := range r.Data.Alerts {
		if a.Labels["alertname"] == name && a.State == "firing" {
			out = append(out, a)
		}
	}
	return out
}

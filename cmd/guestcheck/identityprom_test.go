package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/guestid"
	"github.com/guestcheck/guestcheck/internal/qga/qgafake"
	"github.com/guestcheck/guestcheck/internal/report"
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

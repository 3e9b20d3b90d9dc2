package prove

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func hash(id string) string { h, _ := guestid.MachineIDHash(id); return h }

func clone(n int, mid, key, host, inst, mac, addr string) CloneResult {
	id := &guestid.Identity{MachineIDHash: hash(mid), MachineIDState: "valid", Hostname: host, InstanceID: inst,
		HostKeys:   []guestid.HostKey{{Type: "ssh-ed25519", Fingerprint: key, Path: "/etc/ssh/ssh_host_ed25519_key.pub"}},
		Interfaces: []guestid.Interface{{Name: "ens3", MAC: mac, Addresses: []string{addr}}},
		Unread:     []string{"dhcp-client-id: guestcheck's report carries no identity", "mac-binding: guestcheck's report carries no identity"}}
	return CloneResult{Name: "clone-" + string(rune('0'+n)), MAC: mac, Network: "192.0.2." + string(rune('0'+n)) + "/28", Boot: BootUp,
		FirmwareUUID: "6f1c0a52-3b8e-4d2a-9c71-00000000000" + string(rune('0'+n)),
		Verdict:      &BootVerdict{Status: "PASS", Checks: 14, Counts: Counts{Pass: 14}}, VerdictSource: SourceAgent,
		Identity: id, IdentitySource: SourceAgent, Timings: Timings{Seed: 80, Boot: 31000, CloudInit: 64000, Guestcheck: 14000, Collection: 300},
		Checks: []CheckVerdict{{ID: "cloud-init", Status: "pass", Summary: "cloud-init finished: done"},
			{ID: "network-identity", Status: "pass", Summary: "the machine-id was made for this instance"},
			{ID: "time-sync", Status: "skip", Summary: "no time sync service is installed"}}}
}

const (
	mid1 = "0123456789abcdef0123456789abcdef"
	mid2 = "fedcba9876543210fedcba9876543210"
	key1 = "SHA256:AnTz1D3Xk5Dse3SkHZ7U+/ESxIuBBfFsz5rQld5Go3I"
	key2 = "SHA256:QG5S1ONC6cVDwJPx+98RA8Fa4qirF7Qlcqzulba0vI0"
	keyT = "SHA256:C5ZXlqX/LP3RIutJT4AMrqJcwCkPoQF/e5Vl0LVD16E"
)

func baseReport(clones []CloneResult, tmpl TemplateIdentity) Report {
	r := Report{SchemaVersion: 1, Tool: "sealprep", Command: "prove", Version: "1.2.3", Accel: AccelTCG, AccelReason: "--accel tcg",
		Firmware: FirmwareBIOS, FirmwareReason: "the disk has a BIOS boot partition", MemoryMiB: 1024, CPUs: 2, FirmwareUUID: UUIDPerClone,
		StartedAt: time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC), DurationMS: 192345, PeakRSSKiB: 14000, Clones: clones, Template: tmpl}
	r.Image.File, r.Image.Format = "/var/lib/images/debian-12.qcow2", "qcow2"
	r.Items, r.Collisions = Compare(r.Clones, r.Template)
	if r.Collisions == nil {
		r.Collisions = []guestid.Collision{}
	}
	r.Failures = failures(r.Clones, r.Collisions, r.Template)
	r.Proven = len(r.Failures) == 0
	return r
}

func goodReport() Report {
	return baseReport([]CloneResult{
		clone(1, mid1, key1, "prove-1", "prove-abc-1", "52:54:00:00:00:01", "192.0.2.8/28"),
		clone(2, mid2, key2, "prove-2", "prove-abc-2", "52:54:00:00:00:02", "192.0.2.24/28"),
	}, TemplateIdentity{Read: true, Record: true, SealedAt: "2026-12-01T10:00:00Z", Operations: []string{"machine-id", "ssh-host-keys"},
		Identity: &guestid.Identity{MachineIDState: "empty", HostKeys: []guestid.HostKey{{Type: "ssh-ed25519", Fingerprint: keyT, Path: "/etc/ssh/ssh_host_ed25519_key (before the seal)"}}}})
}

// rebootReport is a --reboot run: clone-1 is the same VM after its
// reboot; clone-2 came back with new host keys, its cloud-init ran
// config_ssh again, and guestcheck failed it.
func rebootReport() Report {
	c1 := clone(1, mid1, key1, "prove-1", "prove-abc-1", "52:54:00:00:00:01", "192.0.2.8/28")
	c2 := clone(2, mid2, key2, "prove-2", "prove-abc-2", "52:54:00:00:00:02", "192.0.2.24/28")
	id1 := *c1.Identity
	c1.Reboot = &RebootResult{Boot: BootUp, How: "the guest agent's guest-shutdown mode=reboot", Verdict: c1.Verdict, VerdictSource: SourceAgent,
		Checks: c1.Checks, Identity: &id1, FirstBootRead: true, Changed: append([]Change{}, identityChanges(c1.Identity, &id1)...), Timings: Timings{Boot: 41000, Guestcheck: 9000, Collection: 200}}
	id2 := *c2.Identity
	id2.HostKeys = []guestid.HostKey{{Type: "ssh-ed25519", Fingerprint: keyT, Path: "/etc/ssh/ssh_host_ed25519_key.pub"}}
	t0 := time.Date(2026, 12, 2, 4, 1, 0, 0, time.UTC)
	changed := append(identityChanges(c2.Identity, &id2),
		semChanges(map[string]time.Time{"config_ssh": t0, "config_set_hostname": t0}, map[string]time.Time{"config_ssh": t0.Add(time.Minute), "config_set_hostname": t0})...)
	c2.Reboot = &RebootResult{Boot: BootUp, How: "the guest agent's guest-shutdown mode=reboot", VerdictSource: SourceAgent,
		Verdict: &BootVerdict{Status: "FAIL", Checks: 3, Counts: Counts{Pass: 1, Fail: 1, Skip: 1}},
		Failing: []string{"ssh: the host keys are newer than the instance"},
		Checks: []CheckVerdict{{ID: "cloud-init", Status: "pass", Summary: "cloud-init finished: done"},
			{ID: "ssh", Status: "fail", Summary: "the host keys are newer than the instance"},
			{ID: "time-sync", Status: "skip", Summary: "no time sync service is installed"}},
		Identity: &id2, Changed: changed, FirstBootRead: true, Timings: Timings{Boot: 45000, Guestcheck: 9000, Collection: 200}}
	c1.BootTime = &BootTime{ToVerdictMS: 109300, Code: "systemd-boot-time", Message: "boot times so far: kernel to userspace 4.1s, userspace to finish 61.2s",
		KernelToLastMilestone: "65.3s (cloud-final.service)", Slowest: "cloud-init.service +21.4s, cloud-config.service +9.8s", GuestBudget: "10m0s"}
	c1.Reboot.BootTime = &BootTime{ToVerdictMS: 50200}
	c2.BootTime = &BootTime{ToVerdictMS: 131900, Code: "systemd-boot-slow", Message: "the boot took 2m5s, over the 2m budget: slowest units regen-ssh-keys.service +58.0s, cloud-init.service +20.1s",
		Slowest: "regen-ssh-keys.service +58.0s, cloud-init.service +20.1s", GuestBudget: "2m0s"}
	r := baseReport([]CloneResult{c1, c2}, TemplateIdentity{Read: true, Record: true, SealedAt: "2026-12-01T10:00:00Z", Operations: []string{"machine-id", "ssh-host-keys"},
		Identity: &guestid.Identity{MachineIDState: "empty"}})
	r.BootBudgetMS = 120000
	r.Failures = append(r.Failures, budgetFailures(r.Clones, 2*time.Minute)...)
	return r
}

func badReport() Report {
	c1 := clone(1, mid1, keyT, "debian", "prove-abc-1", "52:54:00:00:00:01", "192.0.2.50/28")
	c2 := clone(2, mid1, keyT, "debian", "prove-abc-2", "52:54:00:00:00:02", "192.0.2.50/28")
	// guestcheck on the clones: network-identity fails on one, cannot
	// judge on the other.
	c1.Checks[1] = CheckVerdict{ID: "network-identity", Status: "fail", Summary: "/etc/machine-id predates cloud-init instance prove-abc-1"}
	c1.Verdict = &BootVerdict{Status: "FAIL", Checks: 3, Counts: Counts{Pass: 1, Fail: 1, Skip: 1}}
	c1.Failing = []string{"network-identity: /etc/machine-id predates cloud-init instance prove-abc-1"}
	c2.Checks[1] = CheckVerdict{ID: "network-identity", Status: "error", Summary: "could not read /etc/machine-id: permission denied"}
	c2.Verdict = &BootVerdict{Status: "ERROR", Checks: 3, Counts: Counts{Pass: 1, Error: 1, Skip: 1}}
	c2.Failing = []string{"network-identity: could not read /etc/machine-id: permission denied"}
	c3 := CloneResult{Name: "clone-3", MAC: "52:54:00:00:00:03", Network: "192.0.2.32/28", Boot: BootFailed,
		Problem:     "the guest did not come up: You are in emergency mode. After logging in, type \"journalctl -xb\" to view",
		ConsoleTail: []string{"[DEPEND] Dependency failed for data.mount - /data.", "You are in emergency mode. After logging in, type \"journalctl -xb\" to view", "Cannot open access to console, the root account is locked."},
		Timings:     Timings{Seed: 90, Boot: 0}}
	c4 := CloneResult{Name: "clone-4", MAC: "52:54:00:00:00:04", Network: "192.0.2.48/28", Boot: BootUp,
		Verdict: &BootVerdict{Status: "FAIL", Checks: 14, Counts: Counts{Fail: 1, Pass: 13}}, VerdictSource: SourceConsole,
		Notes: []string{"no guest agent answered: the boot verdict is the console's summary line, and identity was not compared for this clone"}}
	return baseReport([]CloneResult{c1, c2, c3, c4}, TemplateIdentity{Read: true,
		Identity: &guestid.Identity{MachineIDHash: hash(mid1), MachineIDState: "valid", Hostname: "debian",
			HostKeys: []guestid.HostKey{{Type: "ssh-ed25519", Fingerprint: keyT, Path: "/etc/ssh/ssh_host_ed25519_key"}}}})
}

// baselineReport: a Debian template whose sshd keeps its default
// PasswordAuthentication yes (cloud.cfg leaves ssh_pwauth unset) and
// whose debian account has a password: guestcheck fails ssh on its
// baseline alone. Identity is distinct, so the template is proven, and
// the baseline is listed apart.
func baselineReport() Report {
	const pa = "PasswordAuthentication is yes (/etc/ssh/sshd_config:58) and 1 account(s) have a password it accepts: debian; the baseline allows no"
	var clones []CloneResult
	for i, c := range []CloneResult{
		clone(1, mid1, key1, "prove-1", "prove-abc-1", "52:54:00:00:00:01", "192.0.2.8/28"),
		clone(2, mid2, key2, "prove-2", "prove-abc-2", "52:54:00:00:00:02", "192.0.2.24/28"),
	} {
		rep := reportv1.Report{Status: reportv1.Fail, Summary: reportv1.Summary{Pass: 2, Fail: 1},
			Checks: []reportv1.Result{
				{ID: "network-identity", Status: reportv1.Pass, Summary: "the machine-id was made for this instance",
					Findings: []reportv1.Finding{{Status: reportv1.Pass, Code: "identity-machine-id-ok", Message: "machine-id is set"}}},
				{ID: "ssh", Status: reportv1.Fail, Summary: pa, Findings: []reportv1.Finding{
					{Status: reportv1.Pass, Code: "ssh-hostkey-ok", Message: "1 host key(s) are usable"},
					{Status: reportv1.Fail, Code: "ssh-auth-baseline", Message: pa}}},
				{ID: "time-sync", Status: reportv1.Skip, Summary: "no time sync service is installed",
					Findings: []reportv1.Finding{{Status: reportv1.Skip, Code: "time-sync-none", Message: "no time sync service is installed"}}},
			}}
		v := verdictOf(rep)
		c.Verdict, c.Failing, c.Checks, c.Baseline = &v, failing(rep), checkVerdicts(rep), baselineFindings(rep)
		if i == 1 {
			c.Baseline = append(c.Baseline, "ssh: ssh-pwauth-unread: cannot read ssh_pwauth from /var/lib/cloud/instance/cloud-config.txt: line 3: did not find expected key")
		}
		clones = append(clones, c)
	}
	return baseReport(clones, goodReport().Template)
}

// TestBaselineApart judges clones from guestcheck's reports: a check that
// fails on baseline findings alone does not fail the clone and is listed
// apart; anything else it fails on, and a console verdict (counts only),
// still does.
func TestBaselineApart(t *testing.T) {
	r := baselineReport()
	if !r.Proven || len(r.Failures) != 0 {
		t.Fatalf("a baseline-only failure is not proven: %+v", r.Failures)
	}
	c := r.Clones[0]
	if len(c.Failing) != 0 || len(c.Baseline) != 1 || !strings.HasPrefix(c.Baseline[0], "ssh: ssh-auth-baseline: PasswordAuthentication is yes") {
		t.Errorf("failing %q, baseline %q", c.Failing, c.Baseline)
	}
	if !c.Checks[1].Baseline || c.Checks[0].Baseline || c.Checks[2].Baseline {
		t.Errorf("checks %+v", c.Checks)
	}
	if got := verdictText(c); got != "FAIL (baseline only)" {
		t.Errorf("verdict column %q", got)
	}
	if got := verdictLine(r); got != "PROVEN: 2 clones came up healthy and distinct (3m12s); baseline findings on 2 clones, listed above" {
		t.Errorf("verdict line %q", got)
	}

	ssh := func(fs ...reportv1.Finding) reportv1.Report {
		return reportv1.Report{Status: reportv1.Fail, Checks: []reportv1.Result{{ID: "ssh", Status: reportv1.Fail, Summary: "s", Findings: fs}}}
	}
	base := reportv1.Finding{Status: reportv1.Fail, Code: "ssh-auth-baseline", Message: "PasswordAuthentication is yes"}
	for _, tc := range []struct {
		name          string
		rep           reportv1.Report
		fails         bool
		baselineCount int
	}{
		{"baseline alone", ssh(base), false, 1},
		{"baseline and a template's host key", ssh(base, reportv1.Finding{Status: reportv1.Fail, Code: "ssh-hostkey-template", Message: "k"}), true, 1},
		{"a waived failure besides", ssh(base, reportv1.Finding{Status: reportv1.Fail, Code: "ssh-not-listening", Message: "n", Waived: &reportv1.Waived{Reason: "r"}}), false, 1},
		{"an error that is not baseline", ssh(reportv1.Finding{Status: reportv1.Error, Code: "ssh-state-unreadable", Message: "e"}), true, 0},
		{"a waived baseline finding", ssh(reportv1.Finding{Status: reportv1.Fail, Code: "ssh-auth-baseline", Message: "w", Waived: &reportv1.Waived{Reason: "r"}},
			reportv1.Finding{Status: reportv1.Fail, Code: "ssh-hostkey-template", Message: "k"}), true, 0},
	} {
		c := clone(1, mid1, key1, "h", "i", "52:54:00:00:00:01", "192.0.2.8/28")
		v := verdictOf(tc.rep)
		c.Verdict, c.Failing, c.Checks, c.Baseline = &v, failing(tc.rep), checkVerdicts(tc.rep), baselineFindings(tc.rep)
		if why := cloneFailed(c); (why != "") != tc.fails || len(c.Baseline) != tc.baselineCount {
			t.Errorf("%s: cloneFailed %q, baseline %q", tc.name, why, c.Baseline)
		}
		// The console's summary line has counts only: a FAIL there fails.
		c.VerdictSource = SourceConsole
		if cloneFailed(c) == "" {
			t.Errorf("%s: a console FAIL passes", tc.name)
		}
	}
}

func TestCompareGood(t *testing.T) {
	r := goodReport()
	if !r.Proven || ExitCode(r) != ExitProven || len(r.Failures) != 0 {
		t.Fatalf("a good run is not proven: %+v", r.Failures)
	}
	want := map[guestid.Item]string{guestid.ItemMachineID: ItemDistinct, guestid.ItemHostKey: ItemDistinct, guestid.ItemDHCPClient: ItemNotCompared,
		guestid.ItemMACBinding: ItemNotCompared, guestid.ItemHostname: ItemDistinct, guestid.ItemInstanceID: ItemDistinct, guestid.ItemMAC: ItemDistinct, guestid.ItemAddress: ItemDistinct}
	for _, it := range r.Items {
		if it.Status != want[it.Item] {
			t.Errorf("%s: %s (%s), want %s", it.Item, it.Status, it.Detail, want[it.Item])
		}
	}
}

// TestCompareFewHolders: an item fewer than two members hold is not
// compared, so its JUnit case is skipped rather than a pass that no
// template could fail.
func TestCompareFewHolders(t *testing.T) {
	c1 := clone(1, mid1, key1, "prove-1", "prove-abc-1", "52:54:00:00:00:01", "192.0.2.8/28")
	c2 := clone(2, mid2, key2, "prove-2", "prove-abc-2", "52:54:00:00:00:02", "192.0.2.24/28")
	c1.Identity.Unread, c2.Identity.Unread = nil, nil
	c1.Identity.DHCPClients = []guestid.DHCPClient{{Interface: "ens3", Source: "/var/lib/systemd/network/duid", Kind: "duid", Value: "00:02:00:00:ab:11:aa:bb"}}
	items, _ := Compare([]CloneResult{c1, c2}, TemplateIdentity{})
	want := map[guestid.Item]string{guestid.ItemDHCPClient: "only clone-1 has one", guestid.ItemMACBinding: "no member has one"}
	for _, it := range items {
		if w, ok := want[it.Item]; ok && (it.Status != ItemNotCompared || it.Detail != w) {
			t.Errorf("%s: %s (%s), want %s (%s)", it.Item, it.Status, it.Detail, ItemNotCompared, w)
		}
	}
	// A clone read by nobody (no agent) is named, rather than "no member
	// has one" as if it had been read and held none.
	c3 := CloneResult{Name: "clone-3", Boot: BootUp, VerdictSource: SourceConsole}
	items, _ = Compare([]CloneResult{c1, c3}, TemplateIdentity{})
	for _, it := range items {
		if it.Item == guestid.ItemMACBinding && it.Detail != "not read on clone-3" {
			t.Errorf("mac-binding with clone-3 unread: %s (%s)", it.Status, it.Detail)
		}
	}
	var buf bytes.Buffer
	r := baseReport([]CloneResult{c1, c2}, TemplateIdentity{})
	if err := WriteJUnit(&buf, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `<skipped message="no member has one">`) {
		t.Errorf("mac-binding held by no member is not a skipped JUnit case:\n%s", buf.String())
	}
}

func TestCompareBad(t *testing.T) {
	r := badReport()
	if r.Proven || ExitCode(r) != ExitFailed {
		t.Fatal("a bad run is proven")
	}
	var msgs []string
	for _, f := range r.Failures {
		msgs = append(msgs, f.Clone+": "+f.Message)
		if f.Fix == "" {
			t.Errorf("%q has no fix", f.Message)
		}
		if strings.Contains(f.Message, mid1) || strings.Contains(f.Message, hash(mid1)) {
			t.Errorf("%q shows the machine-id or its whole hash", f.Message)
		}
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		"clone-3", "emergency mode", "clone-4",
		"clone-1 and clone-2 keep the template's machine-id",
		"clone-1 and clone-2 keep the template's ssh-host-key",
		"clone-1 and clone-2 keep the template's hostname",
		"clone-1 and clone-2 share address (192.0.2.50)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no failure says %q:\n%s", want, all)
		}
	}
	// One clone holding the template's key fails without a second clone.
	one := baseReport([]CloneResult{clone(1, mid2, keyT, "prove-1", "i-1", "52:54:00:00:00:01", "192.0.2.8/28")}, TemplateIdentity{Read: true,
		Identity: &guestid.Identity{HostKeys: []guestid.HostKey{{Type: "ssh-ed25519", Fingerprint: keyT}}}})
	if one.Proven || len(one.Failures) != 1 || !strings.Contains(one.Failures[0].Message, "clone-1 keeps the template's ssh-host-key") {
		t.Errorf("one clone with the template's key: %+v", one.Failures)
	}
	// Three kept keys are one failure with one fix, naming all three.
	c := clone(1, mid2, keyT, "prove-1", "i-1", "52:54:00:00:00:01", "192.0.2.8/28")
	keys := []guestid.HostKey{{Type: "ssh-ed25519", Fingerprint: keyT}, {Type: "ecdsa-sha2-nistp256", Fingerprint: key1}, {Type: "ssh-rsa", Fingerprint: key2}}
	c.Identity.HostKeys = keys
	three := baseReport([]CloneResult{c}, TemplateIdentity{Read: true, Identity: &guestid.Identity{HostKeys: keys}})
	if len(three.Failures) != 1 || three.Failures[0].Message != "clone-1 keeps the template's 3 ssh-host-keys ("+key1+", "+keyT+", "+key2+")" {
		t.Errorf("three kept keys: %+v", three.Failures)
	}
}

func TestCloneFailed(t *testing.T) {
	c := clone(1, mid1, key1, "h", "i", "52:54:00:00:00:01", "192.0.2.8/28")
	if why := cloneFailed(c); why != "" {
		t.Errorf("a healthy clone fails: %s", why)
	}
	c.Verdict.Status = "WARN"
	if why := cloneFailed(c); why != "" {
		t.Errorf("a WARN verdict fails: %s", why)
	}
	c.Verdict.Status, c.Failing = "ERROR", []string{"routes: no default route"}
	if why := cloneFailed(c); !strings.Contains(why, "routes: no default route") {
		t.Errorf("an ERROR verdict: %q", why)
	}
	c.Verdict = nil
	if cloneFailed(c) == "" {
		t.Error("a clone without a verdict, and guestcheck expected, passes")
	}
	c.IdentityOnly = true
	if why := cloneFailed(c); why != "" {
		t.Errorf("an identity-only clone fails: %s", why)
	}
	c.Boot, c.Problem = BootTimeout, "the deadline passed"
	if !strings.Contains(cloneFailed(c), "deadline") {
		t.Error("a timeout passes")
	}
}

func render(t *testing.T, r Report, f func(*bytes.Buffer, Report) error) string {
	var b bytes.Buffer
	if err := f(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestRenderGolden holds the three formats to testdata/*.golden.
func TestRenderGolden(t *testing.T) {
	w := func(f func(w *bytes.Buffer, r Report) error) func(*bytes.Buffer, Report) error { return f }
	for name, r := range map[string]Report{"good": goodReport(), "bad": badReport(), "baseline": baselineReport(), "reboot": rebootReport(), "copy": copyReport()} {
		for ext, f := range map[string]func(*bytes.Buffer, Report) error{
			"txt":  w(func(b *bytes.Buffer, r Report) error { return WriteText(b, r) }),
			"json": w(func(b *bytes.Buffer, r Report) error { return WriteJSON(b, r) }),
			"xml":  w(func(b *bytes.Buffer, r Report) error { return WriteJUnit(b, r) }),
		} {
			testenv.Golden(t, filepath.Join("testdata", name+"."+ext+".golden"), render(t, r, f), *update)
		}
	}
}

// TestJSONStable: the JSON's top-level keys are the documented ones.
func TestJSONStable(t *testing.T) {
	var m map[string]any
	if err := json.Unmarshal([]byte(render(t, badReport(), func(b *bytes.Buffer, r Report) error { return WriteJSON(b, r) })), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema_version", "tool", "command", "version", "image", "accel", "accel_reason", "firmware", "firmware_reason",
		"memory_mib", "cpus", "proven", "clones", "template", "items", "collisions", "failures", "started_at", "duration_ms", "peak_rss_kib"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no %q in the JSON report", k)
		}
	}
}

// TestJUnitSchemas validates the JUnit output with xmllint against both
// schemas in schema/junit.
func TestJUnitSchemas(t *testing.T) {
	xmllint := testenv.Tool(t, "xmllint", "libxml2-utils")
	for name, r := range map[string]Report{"good": goodReport(), "bad": badReport(), "copy": copyReport()} {
		p := filepath.Join(t.TempDir(), name+".xml")
		if err := writeFile(p, render(t, r, func(b *bytes.Buffer, r Report) error { return WriteJUnit(b, r) })); err != nil {
			t.Fatal(err)
		}
		for _, xsd := range []string{"JUnit.xsd", "junit-10.xsd"} {
			out, err := exec.Command(xmllint, "--noout", "--schema", filepath.Join("..", "..", "..", "schema", "junit", xsd), p).CombinedOutput()
			if err != nil {
				t.Errorf("%s against %s: %v\n%s", name, xsd, err, out)
			}
		}
	}
}

func writeFile(p, s string) error { return os.WriteFile(p, []byte(s), 0o644) }

// TestRecordMachineID: a clone whose machine-id is the one the template
// record says the template had before the seal fails, even alone.
func TestRecordMachineID(t *testing.T) {
	c := clone(1, mid1, key1, "prove-1", "i-1", "52:54:00:00:00:01", "192.0.2.8/28")
	c.sealHash = sealrecord.HashID(mid1)
	tmpl := TemplateIdentity{Read: true, Record: true, Identity: &guestid.Identity{MachineIDState: "empty"}, record: sealrecord.Record{MachineIDHash: sealrecord.HashMachineID(mid1)}}
	r := baseReport([]CloneResult{c}, tmpl)
	if r.Proven || len(r.Failures) != 1 || !strings.Contains(r.Failures[0].Message, "clone-1 keeps the template's machine-id (the ID sealprep's template record") {
		t.Errorf("%+v", r.Failures)
	}
	// A record an older sealprep wrote holds a plain SHA-256: the same.
	tmpl.record = sealrecord.Record{MachineIDSHA256: sealrecord.LegacyHashMachineID(mid1)}
	if r := baseReport([]CloneResult{c}, tmpl); r.Proven || len(r.Failures) != 1 {
		t.Errorf("version 1 record: %+v", r.Failures)
	}
	tmpl.record = sealrecord.Record{MachineIDHash: sealrecord.HashMachineID(mid2)}
	if r := baseReport([]CloneResult{c}, tmpl); !r.Proven {
		t.Errorf("another ID fails: %+v", r.Failures)
	}
}

package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite golden files")

var meta = Meta{Tool: "guestcheck", Version: "1.2.3", Root: "/",
	Host:      Host{Hostname: "vm1", BootID: "0f2c1f7e-3b0d-4e57-9c54-5f0f2b7a9d11"},
	StartedAt: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), Duration: 42 * time.Millisecond,
	Identity: &testIdentity}

// testIdentity has every identity item once, for the JSON formats.
var testIdentity = guestid.Identity{
	MachineIDHash: "76eb71b6730144dfbb51776f36fd12fc", MachineIDState: "valid",
	OtherMachineIDs: []guestid.MachineIDCopy{{Hash: "6428146d0c0847759accdcda8b4a5231", Source: "/var/lib/dbus/machine-id"}},
	HostKeys:        []guestid.HostKey{{Type: "ssh-ed25519", Fingerprint: "SHA256:pR8fS2Ctq1bUxv6tGZ0H5c0wH9mXhLuJ3ZqkVw9Zb1I", Path: "/etc/ssh/ssh_host_ed25519_key"}},
	DHCPClients:     []guestid.DHCPClient{{Kind: "duid", Value: "00:02:00:00:ab:11:61:77:40:de:13:42:c3:a2", Source: "systemd-networkd: DUID-EN from /etc/machine-id (/etc/netplan/50-cloud-init.yaml:6)"}},
	MACBindings:     []guestid.MACBinding{{MAC: "52:54:00:12:34:56", At: "/etc/netplan/50-cloud-init.yaml:8", Kind: "netplan match: macaddress"}},
	Hostname:        "vm1", InstanceID: "i-0123456789",
	Interfaces: []guestid.Interface{{Name: "enp1s0", MAC: "52:54:00:12:34:56", Addresses: []string{"192.0.2.10/24", "2001:db8::10/64"}}},
	Unread:     []string{"dhcp-client-id: cannot list /var/lib/NetworkManager: permission denied"},
}

func res(id string, fs ...runner.Finding) runner.Result {
	sts := make([]runner.Status, len(fs))
	for i, f := range fs {
		sts[i] = f.Counted()
	}
	return runner.Result{ID: id, Title: "Title of " + id, Status: reportv1.Worst(sts...),
		Summary: fs[0].Message, Duration: 3 * time.Millisecond, Findings: fs}
}

// cases are the golden reports; each name carries the expected exit code.
var cases = []struct {
	name    string
	exit    int
	results []runner.Result
}{
	{"healthy", 0, []runner.Result{
		res("hostname", runner.Passf("hostname-ok", "hostname vm1 is valid and matches cloud-init", map[string]string{"kernel": "vm1"})),
		res("cloud-init", runner.Passf("cloud-init-done", "cloud-init finished without errors", nil)),
		res("routes", runner.Skipf("not-live", "needs the running system, but --root is /mnt", nil)),
	}},
	{"warn", 2, []runner.Result{
		res("hostname", runner.New(runner.Warn, "hostname-etc-mismatch", "/etc/hostname says web-1 but the kernel hostname is vm1",
			map[string]string{"kernel": "vm1", "etc_hostname": "web-1"},
			"Run hostnamectl set-hostname with the intended name so that both agree after the next reboot.")),
		res("cloud-init", runner.Passf("cloud-init-done", "cloud-init finished without errors", nil)),
	}},
	{"fail", 1, []runner.Result{
		res("cloud-init", runner.New(runner.Fail, "cloud-init-module-error",
			"module scripts_user failed in stage modules-final: Failed to run module scripts_user (scripts in /var/lib/cloud/instance/scripts)",
			map[string]string{"stage": "modules-final", "datasource": "nocloud", "errors": "first line\nsecond line"},
			"Read /var/log/cloud-init.log around the failure, fix the user-data and re-run cloud-init on a new instance.")),
		res("hostname", runner.New(runner.Warn, "hostname-unresolvable", "vm1 does not resolve to a local address", nil,
			"Add \"127.0.1.1 vm1\" to /etc/hosts.")),
		res("dns", runner.Errorf("dns-unreadable", "/etc/resolv.conf: permission denied", nil, "Run guestcheck as root.")),
		res("routes", runner.Skipf("dependency-not-passed", "skipped because dns reported error", nil)),
	}},
	{"waived", 0, []runner.Result{
		res("time-sync", runner.Passf("time-sync-daemon-active", "chrony.service is active", nil),
			waived(runner.New(runner.Fail, "time-sync-clock-unsynced", "the kernel clock is not synchronised",
				map[string]string{"daemon": "chrony"}, "Give chrony a reachable NTP server."), "no NTP on the test network", "2027-03-01")),
		res("hostname", runner.Passf("hostname-ok", "hostname vm1 is valid and matches cloud-init", nil),
			waived(runner.New(runner.Warn, "hostname-unresolvable", "vm1 does not resolve to a local address", nil,
				"Add \"127.0.1.1 vm1\" to /etc/hosts."), "resolved by the lab DNS", "")),
	}},
}

// waived marks f as a waiver accepts it.
func waived(f runner.Finding, reason, expires string) runner.Finding {
	f.Waived = &runner.Waived{Reason: reason, Expires: expires}
	return f
}

func TestGolden(t *testing.T) {
	t.Parallel()
	schema := compileSchema(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := New(tc.results, meta)
			if got := ExitCode(r); got != tc.exit {
				t.Errorf("ExitCode = %d, want %d", got, tc.exit)
			}
			var js, txt bytes.Buffer
			if err := WriteJSON(&js, r); err != nil {
				t.Fatal(err)
			}
			if err := WriteText(&txt, r, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(inst); err != nil {
				t.Errorf("JSON does not match the schema: %v", err)
			}
			golden(t, fmt.Sprintf("%s.%d.json", tc.name, tc.exit), js.Bytes())
			golden(t, fmt.Sprintf("%s.%d.text", tc.name, tc.exit), txt.Bytes())
			var verbose bytes.Buffer
			if err := WriteText(&verbose, r, TextOptions{Verbose: true}); err != nil {
				t.Fatal(err)
			}
			golden(t, fmt.Sprintf("%s.%d.verbose.text", tc.name, tc.exit), verbose.Bytes())
			txt.Write(verbose.Bytes()) // both must fit 80 columns
			for i, l := range strings.Split(txt.String(), "\n") {
				if len(l) > 80 {
					t.Errorf("text line %d is %d columns (over 80): %q", i+1, len(l), l)
				}
			}
		})
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testenv.Golden(t, filepath.Join("testdata", name), string(got), *update)
}

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	return compileSchemaFile(t, "../../../schema/report-v1.schema.json")
}

// compileSchemaFile compiles the JSON Schema at p, with the other
// schema files beside it.
func compileSchemaFile(t *testing.T, p string) *jsonschema.Schema {
	t.Helper()
	return testenv.Schema(t, filepath.Dir(p), filepath.Base(p))
}

// TestSchemaRejects proves the schema is not vacuous: broken reports,
// and reports with a malformed identity, fail it.
func TestSchemaRejects(t *testing.T) {
	t.Parallel()
	schema := compileSchema(t)
	var good bytes.Buffer
	if err := WriteJSON(&good, New(cases[2].results, meta)); err != nil {
		t.Fatal(err)
	}
	idOf := func(m map[string]any) map[string]any { return m["identity"].(map[string]any) }
	first := func(m map[string]any, k string) map[string]any { return idOf(m)[k].([]any)[0].(map[string]any) }
	mutations := map[string]func(m map[string]any){
		"bad status":           func(m map[string]any) { m["status"] = "ok" },
		"missing summary":      func(m map[string]any) { delete(m, "summary") },
		"finding code case":    func(m map[string]any) { finding(m)["code"] = "Cloud_Init" },
		"fail without fix":     func(m map[string]any) { delete(finding(m), "remediation") },
		"empty findings":       func(m map[string]any) { m["checks"].([]any)[0].(map[string]any)["findings"] = []any{} },
		"wrong schema number":  func(m map[string]any) { m["schema_version"] = 2 },
		"raw-looking hash":     func(m map[string]any) { idOf(m)["machine_id_hash"] = "0102030405060708090A0B0C0D0E0F10" },
		"unknown state":        func(m map[string]any) { idOf(m)["machine_id_state"] = "fine" },
		"md5 fingerprint":      func(m map[string]any) { first(m, "ssh_host_keys")["fingerprint"] = "MD5:12:34" },
		"upper-case duid":      func(m map[string]any) { first(m, "dhcp_client_ids")["value"] = "00:02:AB" },
		"duid without colons":  func(m map[string]any) { first(m, "dhcp_client_ids")["value"] = "0002ab" },
		"unknown dhcp kind":    func(m map[string]any) { first(m, "dhcp_client_ids")["kind"] = "iaid" },
		"binding without at":   func(m map[string]any) { delete(first(m, "mac_bindings"), "at") },
		"address without mask": func(m map[string]any) { first(m, "interfaces")["addresses"] = []any{"192.0.2.10"} },
		"identity not object":  func(m map[string]any) { m["identity"] = "vm1" },
	}
	for name, mut := range mutations {
		var m map[string]any
		if err := json.Unmarshal(good.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		mut(m)
		b, _ := json.Marshal(m)
		inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err := schema.Validate(inst); err == nil {
			t.Errorf("%s: schema accepted a broken report", name)
		}
	}
}

func finding(m map[string]any) map[string]any {
	return m["checks"].([]any)[0].(map[string]any)["findings"].([]any)[0].(map[string]any)
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sts  []runner.Status
		want int
	}{
		{nil, ExitOK},
		{[]runner.Status{runner.Pass, runner.Skip}, ExitOK},
		{[]runner.Status{runner.Pass, runner.Warn}, ExitWarn},
		{[]runner.Status{runner.Warn, runner.Error}, ExitProblem},
		{[]runner.Status{runner.Fail}, ExitProblem},
		{[]runner.Status{""}, ExitProblem}, // a zero status is never a pass
		{[]runner.Status{"bogus"}, ExitProblem},
	} {
		var rs []runner.Result
		for i, s := range tc.sts {
			rs = append(rs, runner.Result{ID: fmt.Sprint("c", i), Status: s,
				Findings: []runner.Finding{{Status: s, Code: "x", Message: "m"}}})
		}
		r := New(rs, meta)
		if got := ExitCode(r); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.sts, got, tc.want)
		}
	}
}

// TestOverallStatus: a report's status is reportv1.Overall of its
// checks' statuses (whose rules reportv1's TestOverall holds).
func TestOverallStatus(t *testing.T) {
	t.Parallel()
	for _, sts := range [][]runner.Status{{runner.Pass, runner.Skip}, {runner.Skip, runner.Skip}, {runner.Warn, runner.Error, runner.Pass}, {""}} {
		var rs []runner.Result
		for _, s := range sts {
			rs = append(rs, runner.Result{ID: "c", Status: s})
		}
		if got, want := New(rs, meta).Status, reportv1.Overall(sts...); got != want {
			t.Errorf("%v: %s, want %s", sts, got, want)
		}
	}
}

func TestTextColour(t *testing.T) {
	t.Parallel()
	r := New(cases[2].results, meta)
	var plain, col bytes.Buffer
	if err := WriteText(&plain, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&col, r, TextOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("plain text contains escape codes")
	}
	if !strings.Contains(col.String(), "\x1b[1;31mFAIL") {
		t.Error("colour text lacks a red FAIL")
	}
}

// TestTextCountsChecks holds the text report to counting what it shows on
// the left margin: checks. A FAIL check that also holds an ERROR finding
// is one failed check, and the summary says "checks" so that its
// "0 error" does not read as a contradiction of the ERROR line. Under an
// image root the header names the root once, and only there.
func TestTextCountsChecks(t *testing.T) {
	m := meta
	m.Root = "/mnt/img"
	r := New([]runner.Result{res("fstab",
		runner.New(runner.Fail, "fstab-kernel-device-name", "/ is mounted from kernel device name /dev/sda1", nil, "fix"),
		runner.Errorf("fstab-unreadable", "/etc/fstab.d: permission denied", nil, "fix"))}, m)
	var b bytes.Buffer
	if err := WriteText(&b, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if lines[0] != "Guest root: /mnt/img (the paths below are inside it)" {
		t.Errorf("first line %q, want the root named", lines[0])
	}
	if n := strings.Count(b.String(), "/mnt/img"); n != 1 {
		t.Errorf("the root is named %d times, want once:\n%s", n, b.String())
	}
	if got, want := lines[len(lines)-1], "guestcheck: FAIL (1 check: 1 fail, 0 error, 0 warn, 0 pass, 0 skip) in 42 ms"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	if got := SummaryLine(r); got != lines[len(lines)-1]+"; fail: fstab" {
		t.Errorf("SummaryLine %q is not the text's last line and the failing check", got)
	}
	b.Reset()
	if err := WriteText(&b, New(r.Checks, meta), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Guest root") {
		t.Errorf("the live system's report names its root:\n%s", b.String())
	}
}

// TestSummaryLineNamesFailing: --summary's line names the failed checks,
// then those in error, at most MaxSummaryIDs of them, then how many more;
// a report without either names none.
func TestSummaryLineNamesFailing(t *testing.T) {
	mk := func(sts ...runner.Status) Report {
		var rs []runner.Result
		for i, st := range sts {
			rs = append(rs, res(fmt.Sprintf("c%d", i), runner.New(st, "x", "x", nil, "")))
		}
		return New(rs, meta)
	}
	for _, c := range []struct {
		r    Report
		want string
	}{
		{mk(runner.Pass, runner.Warn, runner.Skip), "guestcheck: WARN (3 checks: 0 fail, 0 error, 1 warn, 1 pass, 1 skip) in 42 ms"},
		{mk(runner.Error, runner.Fail, runner.Pass), "guestcheck: FAIL (3 checks: 1 fail, 1 error, 0 warn, 1 pass, 0 skip) in 42 ms; fail: c1; error: c0"},
		{mk(runner.Error, runner.Error), "guestcheck: ERROR (2 checks: 0 fail, 2 error, 0 warn, 0 pass, 0 skip) in 42 ms; error: c0, c1"},
		{mk(runner.Fail, runner.Fail, runner.Error, runner.Fail, runner.Fail, runner.Error, runner.Fail, runner.Pass),
			"guestcheck: FAIL (8 checks: 5 fail, 2 error, 0 warn, 1 pass, 0 skip) in 42 ms; fail: c0, c1, c3, c4, c6 and 2 more"},
		{mk(runner.Fail, runner.Fail, runner.Error, runner.Error, runner.Error, runner.Error),
			"guestcheck: FAIL (6 checks: 2 fail, 4 error, 0 warn, 0 pass, 0 skip) in 42 ms; fail: c0, c1; error: c2, c3, c4 and 1 more"},
	} {
		if got := SummaryLine(c.r); got != c.want {
			t.Errorf("\n got %s\nwant %s", got, c.want)
		}
	}
}

// TestSummaryFits80: the text report's last line stays inside 80 columns
// with fifteen checks and a run of seconds; the duration moves under it.
func TestSummaryFits80(t *testing.T) {
	long := "guestcheck: FAIL (15 checks: 2 fail, 0 error, 2 warn, 11 pass, 0 skip) in 4763 ms"
	got := fit80(long)
	if got != "guestcheck: FAIL (15 checks: 2 fail, 0 error, 2 warn, 11 pass, 0 skip)\n            in 4763 ms" {
		t.Errorf("fit80 = %q", got)
	}
	if short := "guestcheck: PASS (9 checks: 0 fail, 0 error, 0 warn, 9 pass, 0 skip) in 12 ms"; fit80(short) != short {
		t.Errorf("a line inside 80 columns changed: %q", fit80(short))
	}
}

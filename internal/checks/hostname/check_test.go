package hostname

import (
	"context"
	"errors"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/runner/checktest"
)

// tcase is a fake guest under t.TempDir(): files to write, and how
// the environment around them looks.
type tcase struct {
	files    map[string]string // guest path -> content
	live     bool
	notRoot  bool
	expected string
	resolver *fakeResolver
	ifaddrs  []string // interface addresses on the fake live system
}

// fakeResolver answers from a table; unknown names are "no such host". It
// records calls and the deadline it was given.
type fakeResolver struct {
	mu        sync.Mutex
	answers   map[string][]string
	block     bool // wait for ctx instead of answering
	calls     int
	deadlines []time.Duration
}

func (f *fakeResolver) LookupHost(ctx context.Context, host string) ([]string, error) {
	f.mu.Lock()
	f.calls++
	if d, ok := ctx.Deadline(); ok {
		f.deadlines = append(f.deadlines, time.Until(d))
	}
	f.mu.Unlock()
	if f.block {
		<-ctx.Done()
		return nil, &net.DNSError{Err: ctx.Err().Error(), Name: host, IsTimeout: true}
	}
	if a, ok := f.answers[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func (f *fakeResolver) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// healthyFiles is a cloud-init-provisioned Debian-style guest named web1.
func healthyFiles() map[string]string {
	return map[string]string{
		"/proc/sys/kernel/hostname":                "web1\n",
		"/etc/hostname":                            "web1\n",
		"/etc/hosts":                               "127.0.0.1 localhost\n127.0.1.1 web1.example.com web1\n::1 localhost ip6-localhost\n",
		"/etc/nsswitch.conf":                       "passwd: files\nhosts: files dns\n",
		"/var/lib/cloud/data/set-hostname":         `{"hostname": "web1", "fqdn": "web1.example.com"}`,
		"/run/cloud-init/instance-data.json":       `{"v1": {"local_hostname": "web1", "local-hostname": "web1", "cloud_name": "nocloud"}}`,
		"/etc/cloud/cloud.cfg":                     "preserve_hostname: false\nusers: [default]\n",
		"/var/lib/cloud/instance/cloud-config.txt": "#cloud-config\n\n# from 1 files\n# part-001\n\n---\nruncmd: [true]\n",
	}
}

func (c tcase) run(t *testing.T, ctx context.Context) ([]runner.Finding, *fakeResolver) {
	t.Helper()
	dir := t.TempDir()
	files := c.files
	if _, ok := files["/etc/machine-id"]; !ok {
		// A guest's, so that the root is not judged as a sealed template.
		files = maps.Clone(files)
		if files == nil {
			files = map[string]string{}
		}
		files["/etc/machine-id"] = "0123456789abcdef0123456789abcdef\n"
	}
	for p, content := range files {
		hp := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
			t.Fatal(err)
		}
		if content == "<dir>" {
			if err := os.MkdirAll(hp, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(hp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	cfg := config.Default()
	settings.Set(cfg, Settings{Expected: c.expected})
	res := c.resolver
	if res == nil {
		res = &fakeResolver{}
	}
	env := &runner.Env{
		Root: root, Live: c.live, Resolver: res, Config: cfg, IsRoot: !c.notRoot,
		Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
	}
	ifaddrs := func() ([]net.Addr, error) {
		if !c.live {
			t.Error("interface addresses listed off the live system")
		}
		var out []net.Addr
		for _, s := range c.ifaddrs {
			ip, n, err := net.ParseCIDR(s)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, &net.IPNet{IP: ip, Mask: n.Mask})
		}
		return out, nil
	}
	env.InterfaceAddrs = ifaddrs
	got := Run(ctx, env)
	assertInvariants(t, got)
	return got, res
}

// assertInvariants holds every finding to the framework's rules, each
// remediation to its code's fix templates among them, and to the check's
// own: a pass carries no remediation, and the full evidence heads the
// check and rides on every finding that needs attention.
func assertInvariants(t *testing.T, fs []runner.Finding) {
	t.Helper()
	checktest.Conventions(t, fs, Codes)
	for i, f := range fs {
		needFix := f.Status != runner.Pass && f.Status != runner.Skip
		if !needFix && f.Remediation != "" {
			t.Errorf("%s (%s): remediation %q", f.Code, f.Status, f.Remediation)
		}
		for _, k := range []string{"kernel_hostname", "etc_hostname", "cloud_init_hostname", "cloud_init_fqdn",
			"cloud_init_source", "set_hostname", "metadata_local_hostname", "preserve_hostname",
			"preserve_hostname_source", "expected", "resolution"} {
			if _, ok := f.Detail[k]; !ok && (i == 0 || needFix) {
				t.Errorf("%s: detail lacks %q: %v", f.Code, k, f.Detail)
			}
		}
	}
}

// find returns the single finding with code, failing when it is absent.
func find(t *testing.T, fs []runner.Finding, code string) runner.Finding {
	t.Helper()
	var hits []runner.Finding
	for _, f := range fs {
		if f.Code == code {
			hits = append(hits, f)
		}
	}
	if len(hits) != 1 {
		t.Fatalf("want one %s finding, got %d in:\n%s", code, len(hits), dumpFindings(fs))
	}
	return hits[0]
}

func expect(t *testing.T, fs []runner.Finding, code string, st runner.Status, msgParts ...string) runner.Finding {
	t.Helper()
	f := find(t, fs, code)
	if f.Status != st {
		t.Errorf("%s: status %s, want %s (%s)", code, f.Status, st, f.Message)
	}
	for _, p := range msgParts {
		if !strings.Contains(f.Message, p) {
			t.Errorf("%s: message %q lacks %q", code, f.Message, p)
		}
	}
	return f
}

func absent(t *testing.T, fs []runner.Finding, codes ...string) {
	t.Helper()
	for _, f := range fs {
		for _, c := range codes {
			if f.Code == c {
				t.Errorf("unexpected %s (%s): %s", c, f.Status, f.Message)
			}
		}
	}
}

// codesOf lists finding codes in order, for exact expectations.
func codesOf(fs []runner.Finding) string {
	var cs []string
	for _, f := range fs {
		cs = append(cs, f.Code+":"+string(f.Status))
	}
	return strings.Join(cs, " ")
}

func dumpFindings(fs []runner.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("  " + string(f.Status) + " " + f.Code + ": " + f.Message + "\n")
	}
	return b.String()
}

func TestHostnameHealthy(t *testing.T) {
	t.Parallel()
	fs, res := tcase{files: healthyFiles(), live: true}.run(t, context.Background())
	if got, want := codesOf(fs), "hostname-ok:pass hostname-resolves:pass"; got != want {
		t.Fatalf("findings = %s, want %s\n%s", got, want, dumpFindings(fs))
	}
	ok := expect(t, fs, "hostname-ok", runner.Pass, "kernel hostname web1 is a valid host name", "agrees with /etc/hostname",
		"matches what cloud-init was asked for", "instance-data.json v1.local_hostname")
	expect(t, fs, "hostname-resolves", runner.Pass, "web1 resolves via /etc/hosts line 2 to 127.0.1.1 (loopback)")
	if res.callCount() != 0 {
		t.Errorf("DNS consulted although /etc/hosts answered")
	}
	for k, want := range map[string]string{
		"kernel_hostname": "web1", "etc_hostname": "web1", "etc_hostname_match": "exact",
		"cloud_init_hostname": "web1", "set_hostname": "hostname=web1 fqdn=web1.example.com",
		"metadata_local_hostname": "web1", "preserve_hostname": "false", "expected": "not set",
		"resolution": "via /etc/hosts line 2: 127.0.1.1 (loopback)",
	} {
		if ok.Detail[k] != want {
			t.Errorf("detail[%s] = %q, want %q", k, ok.Detail[k], want)
		}
	}
	if !strings.HasSuffix(ok.Detail["preserve_hostname_source"], "/etc/cloud/cloud.cfg") {
		t.Errorf("preserve_hostname_source = %q", ok.Detail["preserve_hostname_source"])
	}
}

func TestHostnameLocalhost(t *testing.T) {
	t.Parallel()
	for _, kernel := range []string{"localhost", "localhost.localdomain", "(none)", "LOCALHOST"} {
		t.Run(kernel, func(t *testing.T) {
			files := healthyFiles()
			files["/proc/sys/kernel/hostname"] = kernel + "\n"
			files["/etc/hostname"] = kernel + "\n"
			fs, res := tcase{files: files, live: true}.run(t, context.Background())
			expect(t, fs, "hostname-localhost", runner.Fail, "a placeholder", "(cloud-init was asked for web1)")
			absent(t, fs, "hostname-ok", "hostname-resolves", "hostname-metadata-mismatch")
			if res.callCount() != 0 {
				t.Error("a placeholder name was looked up in DNS")
			}
		})
	}
	t.Run("empty", func(t *testing.T) {
		files := healthyFiles()
		files["/proc/sys/kernel/hostname"] = "\n"
		fs, _ := tcase{files: files, live: true}.run(t, context.Background())
		expect(t, fs, "hostname-localhost", runner.Fail, "kernel hostname is empty")
	})
}

func TestHostnameInvalid(t *testing.T) {
	t.Parallel()
	files := healthyFiles()
	files["/proc/sys/kernel/hostname"] = "web_1\n"
	files["/etc/hostname"] = "web_1\n"
	files["/var/lib/cloud/data/set-hostname"] = `{"hostname": "web_1", "fqdn": "web_1.example.com"}`
	files["/run/cloud-init/instance-data.json"] = `{"v1": {"local_hostname": "web_1"}}`
	fs, _ := tcase{files: files, live: true}.run(t, context.Background())
	f := expect(t, fs, "hostname-invalid", runner.Fail, `kernel hostname web_1 is not a valid RFC 1123 host name`, `label 1 "web_1" contains '_'`)
	if !strings.Contains(f.Remediation, "hostnamectl set-hostname") {
		t.Errorf("remediation %q", f.Remediation)
	}
	absent(t, fs, "hostname-ok", "hostname-resolves", "hostname-unresolvable")

	files["/proc/sys/kernel/hostname"] = "web1.example.com.\n"
	fs, _ = tcase{files: files, live: true}.run(t, context.Background())
	expect(t, fs, "hostname-invalid", runner.Fail, "ends with '.'")
}

func TestHostnameEtc(t *testing.T) {
	t.Parallel()
	t.Run("mismatch", func(t *testing.T) {
		files := healthyFiles()
		files["/etc/hostname"] = "web2\n"
		fs, _ := tcase{files: files, live: true}.run(t, context.Background())
		expect(t, fs, "hostname-etc-mismatch", runner.Warn, "/etc/hostname says web2 but the kernel hostname is web1")
		absent(t, fs, "hostname-ok")
		find(t, fs, "hostname-resolves")
	})
	t.Run("short and fqdn agree", func(t *testing.T) {
		files := healthyFiles()
		files["/etc/hostname"] = "WEB1.example.com\n"
		fs, _ := tcase{files: files, live: true}.run(t, context.Background())
		absent(t, fs, "hostname-etc-mismatch")
		if f := find(t, fs, "hostname-ok"); f.Detail["etc_hostname_match"] != "short name" {
			t.Errorf("etc_hostname_match = %q", f.Detail["etc_hostname_match"])
		}
	})
	t.Run("missing", func(t *testing.T) {
		files := healthyFiles()
		delete(files, "/etc/hostname")
		fs, _ := tcase{files: files, live: true}.run(t, context.Background())
		expect(t, fs, "hostname-etc-missing", runner.Warn, "/etc/hostname is missing, so the name web1 is transient")
		absent(t, fs, "hostname-ok")
	})
	t.Run("empty", func(t *testing.T) {
		files := healthyFiles()
		files["/etc/hostname"] = "# nothing\n"
		fs, _ := tcase{files: files, live: true}.run(t, context.Background())
		expect(t, fs, "hostname-etc-missing", runner.Warn, "/etc/hostname is empty")
	})
	t.Run("missing on purpose", func(t *testing.T) {
		files := healthyFiles()
		delete(files, "/etc/hostname")
		files["/etc/cloud/cloud.cfg.d/90-transient.cfg"] = "create_hostname_file: false\n"
		fs, _ := tcase{files: files, live: true}.run(t, context.Background())
		absent(t, fs, "hostname-etc-missing")
		if f := find(t, fs, "hostname-ok"); !strings.Contains(f.Detail["etc_hostname_note"], "create_hostname_file is false") {
			t.Errorf("etc_hostname_note = %q", f.Detail["etc_hostname_note"])
		}
	})
	t.Run("several names", func(t *testing.T) {
		files := healthyFiles()
		files["/etc/hostname"] = "web1\nweb2\n"
		fs, _ := tcase{files: files, live: true}.run(t, context.Background())
		expect(t, fs, "hostname-file-unreadable", runner.Error, "/etc/hostname: several names: line 1 and line 2")
		find(t, fs, "hostname-ok") // the kernel name is still judged
	})
}

func TestHostnameMetadataMismatch(t *testing.T) {
	t.Parallel()
	t.Run("set-hostname only", func(t *testing.T) {
		files := healthyFiles()
		delete(files, "/run/cloud-init/instance-data.json")
		files["/proc/sys/kernel/hostname"] = "rewritten\n"
		files["/etc/hostname"] = "rewritten\n"
		files["/etc/hosts"] = "127.0.1.1 rewritten\n"
		fs, _ := tcase{files: files, live: true}.run(t, context.Background())
		f := expect(t, fs, "hostname-metadata-mismatch", runner.Fail,
			"kernel hostname rewritten differs from what cloud-init set", "set-hostname): web1 or web1.example.com")
		if !strings.Contains(f.Remediation, "preserve_hostname") {
			t.Errorf("remediation %q", f.Remediation)
		}
		absent(t, fs, "hostname-ok")
		find(t, fs, "hostname-resolves")
	})
	t.Run("meta-data", func(t *testing.T) {
		files := healthyFiles()
		files["/proc/sys/kernel/hostname"] = "debian\n"
		files["/etc/hostname"] = "debian\n"
		fs, _ := tcase{files: files, live: true}.run(t, context.Background())
		expect(t, fs, "hostname-metadata-mismatch", runner.Fail, "kernel hostname debian differs from what cloud-init was asked for", "v1.local_hostname): web1")
	})
	t.Run("user-data hostname wins over meta-data", func(t *testing.T) {
		files := healthyFiles()
		files["/var/lib/cloud/instance/cloud-config.txt"] = "#cloud-config\nfqdn: app.example.org\n"
		fs, _ := tcase{files: files, live: true}.run(t, context.Background())
		f := expect(t, fs, "hostname-metadata-mismatch", runner.Fail, "differs from what cloud-init was asked for", "cloud-config.txt): app or app.example.org")
		if f.Detail["cloud_init_fqdn"] != "app.example.org" || !strings.HasSuffix(f.Detail["cloud_init_source"], "cloud-config.txt") {
			t.Errorf("detail = %v", f.Detail)
		}
	})
	t.Run("fqdn applied on an RHEL-style guest", func(t *testing.T) {
		files := healthyFiles()
		files["/var/lib/cloud/instance/cloud-config.txt"] = "#cloud-config\nfqdn: web1.example.com\nprefer_fqdn_over_hostname: true\n"
		files["/proc/sys/kernel/hostname"] = "web1.example.com\n"
		files["/etc/hostname"] = "web1.example.com\n"
		fs, _ := tcase{files: files, live: true}.run(t, context.Background())
		absent(t, fs, "hostname-metadata-mismatch")
		find(t, fs, "hostname-ok")
	})
	t.Run("renamed since set-hostname", func(t *testing.T) {
		// cc_update_hostname applies a meta-data rename every boot but
		// leaves set-hostname with the first name.
		files := healthyFiles()
		files["/var/lib/cloud/data/set-hostname"] = `{"hostname": "old", "fqdn": "old.example.com"}`
		fs, _ := tcase{files: files, live: true}.run(t, context.Background())
		absent(t, fs, "hostname-metadata-mismatch")
		if f := find(t, fs, "hostname-ok"); f.Detail["set_hostname_note"] == "" {
			t.Error("set_hostname_note missing")
		}
	})
	t.Run("garbage user-data downgrades a meta-data mismatch", func(t *testing.T) {
		files := healthyFiles()
		delete(files, "/var/lib/cloud/data/set-hostname")
		files["/var/lib/cloud/instance/cloud-config.txt"] = "#cloud-config\nhostname: [unclosed\n"
		files["/proc/sys/kernel/hostname"] = "custom\n"
		files["/etc/hostname"] = "custom\n"
		files["/etc/hosts"] = "127.0.1.1 custom\n"
		fs, _ := tcase{files: files, live: true}.run(t, context.Background())
		expect(t, fs, "hostname-file-unreadable", runner.Error, "cloud-config.txt: line")
		expect(t, fs, "hostname-metadata-mismatch", runner.Warn, "user-data was not readable")
	})
}

func TestHostnamePreserved(t *testing.T) {
	t.Parallel()
	files := healthyFiles()
	files["/var/lib/cloud/instance/cloud-config.txt"] = "#cloud-config\npreserve_hostname: true\n"
	files["/run/cloud-init/instance-data.json"] = `{"v1": {"local_hostname": "vm-a"}}`
	files["/var/lib/cloud/data/set-hostname"] = `{"hostname": "template", "fqdn": "template.local"}`
	fs, _ := tcase{files: files, live: true}.run(t, context.Background())
	expect(t, fs, "hostname-preserved", runner.Pass, "web1 differs from meta-data local-hostname vm-a, as intended", "cloud-config.txt")
	if fs[0].Detail["preserve_hostname"] != "true" || !strings.HasSuffix(fs[0].Detail["preserve_hostname_source"], "cloud-config.txt") {
		t.Errorf("detail = %v", fs[0].Detail)
	}
	absent(t, fs, "hostname-metadata-mismatch")
	find(t, fs, "hostname-ok")

	// user-data overrides system config in both directions.
	files["/etc/cloud/cloud.cfg.d/10-keep.cfg"] = "preserve_hostname: true\n"
	files["/var/lib/cloud/instance/cloud-config.txt"] = "#cloud-config\npreserve_hostname: false\n"
	fs, _ = tcase{files: files, live: true}.run(t, context.Background())
	expect(t, fs, "hostname-metadata-mismatch", runner.Fail, "vm-a")
	absent(t, fs, "hostname-preserved")

	delete(files, "/var/lib/cloud/instance/cloud-config.txt")
	fs, _ = tcase{files: files, live: true}.run(t, context.Background())
	expect(t, fs, "hostname-preserved", runner.Pass)
	if !strings.HasSuffix(fs[0].Detail["preserve_hostname_source"], "10-keep.cfg") {
		t.Errorf("preserve_hostname_source = %q", fs[0].Detail["preserve_hostname_source"])
	}
}

func TestHostnameExpected(t *testing.T) {
	t.Parallel()
	files := healthyFiles()
	files["/proc/sys/kernel/hostname"] = "custom1\n"
	files["/etc/hostname"] = "custom1\n"
	files["/etc/hosts"] = "127.0.1.1 custom1\n"
	fs, _ := tcase{files: files, live: true, expected: "custom1.example.com"}.run(t, context.Background())
	expect(t, fs, "hostname-ok", runner.Pass, "matches hostname.expected")
	absent(t, fs, "hostname-metadata-mismatch", "hostname-expected-mismatch")

	fs, _ = tcase{files: files, live: true, expected: "custom2"}.run(t, context.Background())
	f := expect(t, fs, "hostname-expected-mismatch", runner.Fail, "kernel hostname custom1 differs from hostname.expected custom2")
	if !strings.Contains(f.Remediation, "hostnamectl set-hostname custom2") || f.Detail["expected"] != "custom2" {
		t.Errorf("remediation %q, detail %v", f.Remediation, f.Detail)
	}
	absent(t, fs, "hostname-metadata-mismatch", "hostname-ok")

	fs, _ = tcase{files: files, live: true, expected: "bad_name"}.run(t, context.Background())
	expect(t, fs, "hostname-config-invalid", runner.Error, `hostname.expected bad_name is not a valid host name`)
}

func TestHostnameNoMetadata(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"/proc/sys/kernel/hostname": "plain\n",
		"/etc/hostname":             "plain\n",
		"/etc/hosts":                "127.0.1.1 plain.example.net plain\n",
	}
	fs, _ := tcase{files: files, live: true}.run(t, context.Background())
	if got, want := codesOf(fs), "hostname-ok:pass hostname-no-metadata:pass hostname-resolves:pass"; got != want {
		t.Fatalf("findings = %s, want %s", got, want)
	}
	f := find(t, fs, "hostname-ok")
	if f.Detail["cloud_init_source"] != "none" || f.Detail["set_hostname"] != "absent" || f.Detail["preserve_hostname_source"] != "cloud-init default" {
		t.Errorf("detail = %v", f.Detail)
	}
}

func TestHostnameResolution(t *testing.T) {
	t.Parallel()
	noHosts := func() map[string]string {
		files := healthyFiles()
		files["/etc/hosts"] = "127.0.0.1 localhost\n"
		return files
	}
	t.Run("hosts to an interface address", func(t *testing.T) {
		files := healthyFiles()
		files["/etc/hosts"] = "127.0.0.1 localhost\n192.0.2.10 web1.example.com web1\n"
		fs, _ := tcase{files: files, live: true, ifaddrs: []string{"192.0.2.10/24"}}.run(t, context.Background())
		expect(t, fs, "hostname-resolves", runner.Pass, "via /etc/hosts line 2 to 192.0.2.10 (interface address)")
	})
	t.Run("hosts to someone else", func(t *testing.T) {
		files := healthyFiles()
		files["/etc/hosts"] = "127.0.0.1 localhost\n# stale from the template\n198.51.100.7 web1\n"
		fs, _ := tcase{files: files, live: true, ifaddrs: []string{"192.0.2.10/24"}}.run(t, context.Background())
		f := expect(t, fs, "hostname-resolves-remote", runner.Warn, "web1 resolves via /etc/hosts line 3 to 198.51.100.7, which is not an address of this VM")
		if !strings.Contains(f.Remediation, "127.0.1.1") {
			t.Errorf("remediation %q", f.Remediation)
		}
	})
	t.Run("DNS to an interface address", func(t *testing.T) {
		res := &fakeResolver{answers: map[string][]string{"web1": {"2001:db8::10", "192.0.2.10"}}}
		fs, _ := tcase{files: noHosts(), live: true, resolver: res, ifaddrs: []string{"192.0.2.10/24", "2001:db8::10/64"}}.run(t, context.Background())
		expect(t, fs, "hostname-resolves", runner.Pass, "web1 resolves via DNS to 2001:db8::10 (interface address), 192.0.2.10 (interface address)")
		if fs[0].Detail["resolution"] != "via DNS: 2001:db8::10 (interface address), 192.0.2.10 (interface address)" {
			t.Errorf("resolution = %q", fs[0].Detail["resolution"])
		}
		if len(res.deadlines) != 1 || res.deadlines[0] > hostnameDNSTimeout {
			t.Errorf("DNS deadlines = %v, want one of at most %s", res.deadlines, hostnameDNSTimeout)
		}
	})
	t.Run("DNS to someone else", func(t *testing.T) {
		res := &fakeResolver{answers: map[string][]string{"web1": {"203.0.113.5"}}}
		fs, _ := tcase{files: noHosts(), live: true, resolver: res, ifaddrs: []string{"192.0.2.10/24"}}.run(t, context.Background())
		expect(t, fs, "hostname-resolves-remote", runner.Warn, "via DNS to 203.0.113.5")
	})
	t.Run("unresolvable", func(t *testing.T) {
		fs, res := tcase{files: noHosts(), live: true}.run(t, context.Background())
		f := expect(t, fs, "hostname-unresolvable", runner.Warn, "web1 resolves through neither /etc/hosts nor DNS (DNS: no such host)", "sudo")
		if !strings.Contains(f.Remediation, "`127.0.1.1 FQDN web1`") || res.callCount() != 1 {
			t.Errorf("remediation %q, DNS calls %d", f.Remediation, res.callCount())
		}
		absent(t, fs, "hostname-nss-only", "hostname-resolves")
		find(t, fs, "hostname-ok")
	})
	t.Run("malformed hosts line", func(t *testing.T) {
		files := noHosts()
		files["/etc/hosts"] = "127.0.0.1 localhost\n127.0.1.l web1\n"
		fs, _ := tcase{files: files, live: true}.run(t, context.Background())
		f := expect(t, fs, "hostname-unresolvable", runner.Warn, `/etc/hosts line 2 names it but is skipped: invalid address "127.0.1.l"`)
		if f.Detail["etc_hosts_problems"] == "" {
			t.Error("etc_hosts_problems missing")
		}
		if want := "Correct line 2 of `/etc/hosts`, which names web1 but is skipped (invalid address \"127.0.1.l\")"; !strings.HasPrefix(f.Remediation, want) {
			t.Errorf("remediation %q, want it to start %q", f.Remediation, want)
		}
	})
	t.Run("NSS only", func(t *testing.T) {
		files := noHosts()
		files["/etc/nsswitch.conf"] = "hosts: files myhostname dns\n"
		files["/usr/lib/x86_64-linux-gnu/libnss_myhostname.so.2"] = "ELF"
		fs, _ := tcase{files: files, live: true}.run(t, context.Background())
		f := expect(t, fs, "hostname-nss-only", runner.Pass, "resolves only through the NSS module myhostname, which this static binary cannot use", "glibc programs")
		if !strings.HasSuffix(f.Detail["nss_module"], "/usr/lib/x86_64-linux-gnu/libnss_myhostname.so.2") || fs[0].Detail["nsswitch_hosts"] != "files myhostname dns" {
			t.Errorf("detail = %v", f.Detail)
		}
		absent(t, fs, "hostname-unresolvable")
	})
	t.Run("NSS module listed but not installed", func(t *testing.T) {
		files := noHosts()
		files["/etc/nsswitch.conf"] = "hosts: files myhostname dns\n"
		fs, _ := tcase{files: files, live: true}.run(t, context.Background())
		f := expect(t, fs, "hostname-unresolvable", runner.Warn)
		if !strings.Contains(f.Detail["nss_module"], "libnss_myhostname.so.2 was not found") {
			t.Errorf("nss_module = %q", f.Detail["nss_module"])
		}
	})
	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		fs, _ := tcase{files: noHosts(), live: true, resolver: &fakeResolver{block: true}}.run(t, ctx)
		if time.Since(start) > time.Second {
			t.Errorf("check outlived its context: %s", time.Since(start))
		}
		expect(t, fs, "hostname-interrupted", runner.Error, "context deadline exceeded")
		find(t, fs, "hostname-ok") // what was judged before is kept
	})
}

func TestHostnameGarbageFiles(t *testing.T) {
	t.Parallel()
	files := healthyFiles()
	files["/run/cloud-init/instance-data.json"] = `{"v1": {"local_hostname": "we`
	fs, _ := tcase{files: files, live: true}.run(t, context.Background())
	f := expect(t, fs, "hostname-file-unreadable", runner.Error, "/run/cloud-init/instance-data.json: unexpected end of JSON input")
	if !strings.HasSuffix(f.Detail["file"], "/run/cloud-init/instance-data.json") || f.Detail["reason"] != "unexpected end of JSON input" {
		t.Errorf("detail = %v", f.Detail)
	}
	// The rest of the check still reports, judged against set-hostname.
	expect(t, fs, "hostname-ok", runner.Pass, "matches what cloud-init set")
	find(t, fs, "hostname-resolves")

	for name, tc := range map[string]struct{ path, content, msg string }{
		"set-hostname wrong type":  {"/var/lib/cloud/data/set-hostname", `{"hostname": 7}`, `set-hostname: "hostname" is a number, want a string`},
		"instance-data wrong type": {"/run/cloud-init/instance-data.json", `{"v1": {"local_hostname": {}}}`, `"v1.local_hostname" is an object, want a string`},
		"cloud.cfg.d garbage":      {"/etc/cloud/cloud.cfg.d/50-bad.cfg", "preserve_hostname: [true]\n", "50-bad.cfg: line 1: preserve_hostname is a sequence, want a boolean"},
		"user-data is a directory": {"/var/lib/cloud/instance/cloud-config.txt", "<dir>", "cloud-config.txt: is a directory"},
	} {
		t.Run(name, func(t *testing.T) {
			files := healthyFiles()
			files[tc.path] = tc.content
			fs, _ := tcase{files: files, live: true}.run(t, context.Background())
			expect(t, fs, "hostname-file-unreadable", runner.Error, tc.msg)
			find(t, fs, "hostname-resolves")
		})
	}

	t.Run("control characters stay quoted", func(t *testing.T) {
		files := healthyFiles()
		files["/run/cloud-init/instance-data.json"] = `{"v1": {"local_hostname": "evil\nname"}}`
		fs, _ := tcase{files: files, live: true}.run(t, context.Background())
		expect(t, fs, "hostname-metadata-mismatch", runner.Fail, `"evil\nname"`)
	})

	t.Run("kernel hostname missing", func(t *testing.T) {
		files := healthyFiles()
		delete(files, "/proc/sys/kernel/hostname")
		fs, _ := tcase{files: files, live: true}.run(t, context.Background())
		expect(t, fs, "hostname-file-unreadable", runner.Error, "/proc/sys/kernel/hostname: file does not exist")
		// /etc/hostname stands in, and says so.
		expect(t, fs, "hostname-ok", runner.Pass, "/etc/hostname web1")
	})
}

func TestHostnameNotLive(t *testing.T) {
	t.Parallel()
	files := healthyFiles()
	files["/proc/sys/kernel/hostname"] = "builder-vm\n" // the host's, never to be read
	files["/etc/hosts"] = "127.0.0.1 localhost\n"
	res := &fakeResolver{answers: map[string][]string{"web1": {"192.0.2.10"}}}
	fs, _ := tcase{files: files, live: false, resolver: res}.run(t, context.Background())
	ok := expect(t, fs, "hostname-ok", runner.Pass, "/etc/hostname web1 is a valid host name")
	if !strings.HasPrefix(ok.Detail["kernel_hostname"], "not consulted: needs the running system") {
		t.Errorf("kernel_hostname = %q", ok.Detail["kernel_hostname"])
	}
	absent(t, fs, "hostname-etc-mismatch")
	expect(t, fs, "hostname-unresolvable", runner.Warn, "web1 is not in /etc/hosts (DNS not consulted")
	if res.callCount() != 0 {
		t.Error("DNS consulted for an image root")
	}
	for _, f := range fs {
		if strings.Contains(f.Message, "builder-vm") {
			t.Errorf("kernel hostname file read off the live system: %s", f.Message)
		}
	}

	t.Run("hosts entry not checked against interfaces", func(t *testing.T) {
		files := healthyFiles()
		files["/etc/hosts"] = "192.0.2.10 web1\n"
		fs, _ := tcase{files: files, live: false}.run(t, context.Background())
		expect(t, fs, "hostname-resolves", runner.Pass, "not checked against interface addresses")
	})
	t.Run("missing /etc/hostname", func(t *testing.T) {
		files := healthyFiles()
		delete(files, "/etc/hostname")
		fs, _ := tcase{files: files, live: false}.run(t, context.Background())
		expect(t, fs, "hostname-etc-missing", runner.Warn, "kernel hostname was not consulted")
		absent(t, fs, "hostname-ok", "hostname-localhost")
	})
	t.Run("half-sealed template", func(t *testing.T) {
		// sealprep sealed it, then its machine ID was put back: the
		// record makes it a template still, so no fix bakes a name into
		// every clone (the machine-id check fails the ID).
		files := healthyFiles()
		delete(files, "/etc/hostname")
		const id = "0123456789abcdef0123456789abcdef"
		files["/etc/machine-id"] = id + "\n"
		files[sealrecord.Path] = string(sealrecord.Record{SchemaVersion: sealrecord.SchemaVersion,
			SealedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), SealprepVersion: "v9.9",
			MachineIDHash: sealrecord.HashMachineID(id), MachineIDCleared: true}.Marshal())
		fs, _ := tcase{files: files, live: false}.run(t, context.Background())
		f := expect(t, fs, "hostname-template", runner.Pass, "no static hostname", "as in a sealed template")
		if !strings.HasPrefix(f.Detail["template"], "half-sealed") {
			t.Errorf("template detail %q", f.Detail["template"])
		}
		absent(t, fs, "hostname-etc-missing", "hostname-ok")
	})
	t.Run("template named localhost", func(t *testing.T) {
		files := healthyFiles()
		files["/etc/hostname"] = "localhost\n"
		fs, _ := tcase{files: files, live: false}.run(t, context.Background())
		expect(t, fs, "hostname-localhost", runner.Fail, "/etc/hostname is localhost")
	})
}

func TestHostnameCodes(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, c := range Codes {
		if !runner.IsKebab(c.ID) || seen[c.ID] {
			t.Errorf("code %q is not kebab-case or is listed twice", c.ID)
		}
		seen[c.ID] = true
	}
	// The reference page documents every code.
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "checks", "hostname.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Codes {
		if !strings.Contains(string(doc), "`"+c.ID+"`") {
			t.Errorf("docs/checks/hostname.md does not document %s", c.ID)
		}
	}
}

func TestHostnameDNSReason(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		got  []string
		want string
	}{
		{nil, nil, "no addresses"},
		{&net.DNSError{Err: "no such host", IsNotFound: true}, nil, "no such host"},
		{&net.DNSError{Err: "i/o timeout", IsTimeout: true}, nil, "no answer within 2s"},
		{context.DeadlineExceeded, nil, "no answer within 2s"},
		{errors.New("server misbehaving"), nil, "server misbehaving"},
	} {
		if got := dnsReason(tc.err, tc.got); got != tc.want {
			t.Errorf("dnsReason(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

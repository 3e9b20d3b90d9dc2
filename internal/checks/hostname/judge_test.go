package hostname

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/cloudcfg"
	"github.com/guestcheck/guestcheck/internal/fact/hostnamefile"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/instancedata"
	"github.com/guestcheck/guestcheck/internal/parse/hosts"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/runner/checktest"
)

// healthyFacts is a live, cloud-init-provisioned guest named web1, as
// Gather would find it, built without a filesystem.
func healthyFacts(t *testing.T) Facts {
	t.Helper()
	entries, err := hosts.Parse([]byte("127.0.0.1 localhost\n127.0.1.1 web1.example.com web1\n"))
	if err != nil {
		t.Fatal(err)
	}
	absent := &os.PathError{Op: "open", Path: "x", Err: os.ErrNotExist}
	var layers []cloudcfg.File
	for _, p := range layerPaths {
		layers = append(layers, cloudcfg.File{Path: p, ReadErr: absent})
	}
	return Facts{
		Live: true, IsRoot: true,
		KernelName:  "web1",
		Static:      hostnamefile.Decide([]byte("web1\n"), nil),
		SetHostname: Input[SetHostname]{Value: SetHostname{Hostname: "web1", FQDN: "web1.example.com"}},
		Instance:    Input[*instancedata.Data]{Value: &instancedata.Data{HasV1: true, LocalHostname: "web1"}},
		System:      cloudcfg.Load(cloudcfg.System{Files: []cloudcfg.File{{Path: "/etc/cloud/cloud.cfg", Data: []byte("preserve_hostname: false\n")}}}),
		Layers:      layers,
		Resolution: Resolution{
			Name:  "web1",
			Hosts: Input[[]hosts.Entry]{Value: entries},
			Local: LocalAddrs{Listed: true, Addrs: []net.Addr{&net.IPNet{IP: net.ParseIP("192.0.2.10"), Mask: net.CIDRMask(24, 32)}}},
		},
	}
}

func codes(fs []runner.Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.Status)+" "+f.Code)
	}
	return strings.Join(out, ", ")
}

// TestJudgeFacts judges Facts values directly: each case changes one
// fact of the healthy guest and names the findings it must give.
func TestJudgeFacts(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(f *Facts)
		want string
		msg  string // a part of the first finding's message
	}{
		{"healthy", func(f *Facts) {}, "pass hostname-ok, pass hostname-resolves", "kernel hostname web1 is a valid host name, agrees with /etc/hostname and matches what cloud-init was asked for"},
		{"no static name", func(f *Facts) { f.Static = hostnamefile.Static{State: hostnamefile.Missing} },
			"warn hostname-etc-missing, pass hostname-resolves", "/etc/hostname is missing, so the name web1 is transient"},
		{"placeholder", func(f *Facts) { f.KernelName, f.Resolution = "localhost", Resolution{} },
			"fail hostname-localhost, warn hostname-etc-mismatch", "kernel hostname is localhost, a placeholder: nothing gave this VM a name (cloud-init was asked for web1)"},
		{"meta-data renamed", func(f *Facts) { f.Instance.Value.LocalHostname = "web2" },
			"fail hostname-metadata-mismatch, pass hostname-resolves", "kernel hostname web1 differs from what cloud-init was asked for (/run/cloud-init/instance-data.json v1.local_hostname): web2"},
		{"instance data without v1", func(f *Facts) { f.Instance.Value = &instancedata.Data{} },
			"error hostname-file-unreadable, pass hostname-ok, pass hostname-resolves", `/run/cloud-init/instance-data.json: no "v1" object`},
		{"expected differs", func(f *Facts) { f.Expected = "db1" },
			"fail hostname-expected-mismatch, pass hostname-resolves", "kernel hostname web1 differs from hostname.expected db1"},
		{"not in hosts, DNS interrupted", func(f *Facts) {
			f.Resolution.Hosts.Value = nil
			f.Resolution.DNS = DNS{Interrupted: context.DeadlineExceeded}
		}, "pass hostname-ok, error hostname-interrupted", "kernel hostname web1 is a valid host name"},
		{"only NSS resolves", func(f *Facts) {
			f.Resolution.Hosts.Value = nil
			f.Resolution.DNS = DNS{Asked: true, Err: &net.DNSError{Err: "no such host", IsNotFound: true}}
			f.Resolution.NSS = NSS{Path: pathNsswitch, Found: true, Sources: []string{"files", "myhostname"}, Module: "myhostname", Lib: "/lib/x86_64-linux-gnu/libnss_myhostname.so.2"}
		}, "pass hostname-ok, pass hostname-nss-only", "kernel hostname web1 is a valid host name"},
		{"resolves elsewhere", func(f *Facts) {
			f.Resolution.Hosts.Value = nil
			f.Resolution.DNS = DNS{Asked: true, Got: []string{"198.51.100.7"}}
		}, "pass hostname-ok, warn hostname-resolves-remote", "kernel hostname web1 is a valid host name"},
		{"unreadable user-data as non-root", func(f *Facts) {
			f.IsRoot = false
			f.Layers[3].ReadErr = &os.PathError{Op: "open", Path: pathUserCloudConfig, Err: os.ErrPermission}
			f.Instance.Value.LocalHostname = "web2"
		}, "pass hostname-ok, pass hostname-resolves", "matches what cloud-init set (/var/lib/cloud/data/set-hostname)"},
		{"preserved", func(f *Facts) {
			f.System = cloudcfg.Load(cloudcfg.System{Files: []cloudcfg.File{{Path: "/etc/cloud/cloud.cfg", Data: []byte("preserve_hostname: yes\n")}}})
			f.Instance.Value.LocalHostname = "web2"
		}, "pass hostname-ok, pass hostname-preserved, pass hostname-resolves", "kernel hostname web1 is a valid host name and agrees with /etc/hostname"},
	} {
		f := healthyFacts(t)
		tc.edit(&f)
		got := Judge(f)
		checktest.Conventions(t, got, Codes)
		if c := codes(got); c != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, c, tc.want)
			continue
		}
		if !strings.Contains(got[0].Message, tc.msg) {
			t.Errorf("%s: first message %q, want it to contain %q", tc.name, got[0].Message, tc.msg)
		}
	}
}

// TestJudgeEvidence: the shared evidence heads the first finding and
// every finding that needs attention, and comes from the facts.
func TestJudgeEvidence(t *testing.T) {
	f := healthyFacts(t)
	f.Show = func(p string) string { return "/mnt" + p }
	f.Static = hostnamefile.Decide([]byte("web1 web2\n"), nil)
	got := Judge(f)
	checktest.Conventions(t, got, Codes)
	if codes(got) != "error hostname-file-unreadable, pass hostname-ok, pass hostname-resolves" {
		t.Fatalf("findings %s", codes(got))
	}
	d := got[0].Detail
	for k, want := range map[string]string{
		"file": "/mnt/etc/hostname", "reason": `line 1 holds several names: "web1 web2"`, "etc_hostname": "unreadable",
		"interface_addresses": "192.0.2.10", "resolution": "via /etc/hosts line 2: 127.0.1.1 (loopback)",
		"cloud_init_source": "/mnt/run/cloud-init/instance-data.json v1.local_hostname", "preserve_hostname_source": "/mnt/etc/cloud/cloud.cfg",
	} {
		if d[k] != want {
			t.Errorf("detail %s = %q, want %q", k, d[k], want)
		}
	}
	if len(got[2].Detail) != 0 {
		t.Errorf("a passing note carries the shared evidence: %v", got[2].Detail)
	}
}

// TestGatherOnlyWhatIsNeeded: Gather asks DNS only when /etc/hosts does
// not answer, and does not resolve an unusable name at all.
func TestGatherOnlyWhatIsNeeded(t *testing.T) {
	files := healthyFiles()
	res := &fakeResolver{}
	got, _ := tcase{files: files, live: true, resolver: res}.run(t, context.Background())
	if res.callCount() != 0 || codes(got) != "pass hostname-ok, pass hostname-resolves" {
		t.Errorf("hosts answers: %d DNS calls, %s", res.callCount(), codes(got))
	}
	files["/proc/sys/kernel/hostname"] = "localhost\n"
	res = &fakeResolver{}
	tcase{files: files, live: true, resolver: res}.run(t, context.Background())
	if res.callCount() != 0 {
		t.Errorf("a placeholder was looked up %d times", res.callCount())
	}
}

// TestJudgeTemplate judges /etc/hostname in a sealed template: no static
// name passes, a name warns, and no fix names hostnamectl.
func TestJudgeTemplate(t *testing.T) {
	tpl := identity.TemplateState{Is: true, Why: "looks sealed; /etc/machine-id is empty"}
	for _, tc := range []struct {
		name, etc string
		missing   bool
		want      string
	}{
		{"missing", "", true, "pass hostname-template"},
		{"empty", "", false, "pass hostname-template"},
		{"blank line", "\n", false, "pass hostname-template"},
		{"named", "web1\n", false, "warn hostname-template-named"},
		{"placeholder", "localhost\n", false, "warn hostname-template-named"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := healthyFacts(t)
			f.Live, f.KernelErr, f.NotLive = false, nil, "needs the running system"
			f.Resolution = Resolution{}
			f.Template = tpl
			if tc.missing {
				f.Static = hostnamefile.Decide(nil, &os.PathError{Op: "open", Path: "x", Err: os.ErrNotExist})
			} else {
				f.Static = hostnamefile.Decide([]byte(tc.etc), nil)
			}
			out := Judge(f)
			checktest.Conventions(t, out, Codes)
			if got := codes(out); got != tc.want {
				t.Fatalf("got %s, want %s\n%+v", got, tc.want, out)
			}
			if out[0].Detail["template"] != tpl.Why || strings.Contains(out[0].Remediation, "hostnamectl") {
				t.Errorf("finding %+v", out[0])
			}
		})
	}
}

// TestJudgeTemplateFallback: SUSE's /etc/HOSTNAME, a file of its own,
// must name nobody in a template either, as sealprep's hostname
// operation empties it, even beside an empty /etc/hostname.
func TestJudgeTemplateFallback(t *testing.T) {
	f := healthyFacts(t)
	f.Live, f.KernelErr, f.NotLive = false, nil, "needs the running system"
	f.Resolution = Resolution{}
	f.Template = identity.TemplateState{Is: true, Why: "sealed"}
	f.Static = hostnamefile.Decide(nil, nil)
	suse := hostnamefile.Decide([]byte("suse1\n"), nil)
	suse.Path = "/etc/HOSTNAME"
	f.Fallbacks = []hostnamefile.Static{suse}
	out := Judge(f)
	checktest.Conventions(t, out, Codes)
	if got := codes(out); got != "pass hostname-template, warn hostname-template-named" || !strings.HasPrefix(out[1].Message, "/etc/HOSTNAME names suse1") {
		t.Fatalf("got %s\n%+v", got, out)
	}
}

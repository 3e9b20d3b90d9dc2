package dns

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/guestcheck/guestcheck/internal/checks/dns/dnstest"
	"github.com/guestcheck/guestcheck/internal/fact/netstate/nstest"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// dnHealthy answers A for *.example.org with 192.0.2.80, NXDOMAIN for
// missing.example.org, and NOERROR without records for AAAA.
func dnHealthy(t testing.TB) string {
	return dnstest.Serve(t, func(w mdns.ResponseWriter, r *mdns.Msg) {
		m := new(mdns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		switch {
		case strings.HasPrefix(q.Name, "missing."):
			m.Rcode = mdns.RcodeNameError
		case q.Qtype == mdns.TypeA:
			m.Answer = []mdns.RR{&mdns.A{Hdr: mdns.RR_Header{Name: q.Name, Rrtype: mdns.TypeA, Class: mdns.ClassINET, Ttl: 60}, A: net.IPv4(192, 0, 2, 80)}}
		}
		_ = w.WriteMsg(m)
	})
}

// dnServFail answers every query with SERVFAIL.
func dnServFail(t testing.TB) string { return dnstest.Serve(t, dnstest.ServFail) }

// dnEnv is a live guest whose files are files and whose probes reach the
// fake servers through d. It never touches the kernel: dns does not.
func dnEnv(t testing.TB, files map[string]string, d dnstest.Redirect, cfg *config.Config) *runner.Env {
	if _, ok := files["/etc/hostname"]; !ok {
		files["/proc/sys/kernel/hostname"] = "web1.example.org\n"
	}
	env := liveEnv(writeRoot(t, files), nil, cfg)
	env.Dialer = d
	return env
}

// dnFastConfig is a configuration with dns.timeout 500ms and names, if
// any, as dns.names.
func dnFastConfig(names ...string) *config.Config {
	cfg := config.Default()
	settings.Set(cfg, Settings{Timeout: 500 * time.Millisecond, Retries: DefaultDNSRetries, Names: names})
	return cfg
}

func TestDNSHealthyAndBlackHole(t *testing.T) {
	d := dnstest.Redirect{"192.0.2.53:53": dnHealthy(t), "198.51.100.53:53": dnstest.BlackHole(t)}
	env := dnEnv(t, map[string]string{"/etc/resolv.conf": "nameserver 192.0.2.53\nnameserver 198.51.100.53\n"}, d, dnFastConfig())
	start := time.Now()
	fs := RunDNS(context.Background(), env)
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("the check hung for %v", el)
	}
	assertConventions(t, fs, Codes)
	want := []string{"pass dns-config-ok", "warn dns-servers-some-dead"}
	if got := codesOf(fs); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v\n%+v", got, want, fs)
	}
	f := fs[1]
	for k, v := range map[string]string{
		"server_1": "192.0.2.53 (" + env.Root.Display("/etc/resolv.conf") + ":1)", "server_1_status": "alive",
		"server_2_status": "dead", "names": "web1.example.org", "timeout": "500ms", "retries": "1",
	} {
		if f.Detail[k] != v {
			t.Errorf("detail[%s] = %q, want %q", k, f.Detail[k], v)
		}
	}
	if !strings.HasPrefix(f.Detail["server_1_answers"], "web1.example.org A 192.0.2.80 in ") ||
		!strings.Contains(f.Detail["server_2_errors"], "web1.example.org A: no answer before the deadline after 2 attempt(s)") ||
		!strings.Contains(f.Detail["names_from"], "FQDN") {
		t.Errorf("detail = %v", f.Detail)
	}
	if f.Message != "nameserver 198.51.100.53 does not answer (1 of 2 dead)" {
		t.Errorf("message %q", f.Message)
	}
}

func TestDNSAllDead(t *testing.T) {
	d := dnstest.Redirect{"192.0.2.53:53": dnServFail(t), "198.51.100.53:53": dnstest.BlackHole(t)}
	fs := RunDNS(context.Background(), dnEnv(t, map[string]string{"/etc/resolv.conf": "nameserver 192.0.2.53\nnameserver 198.51.100.53\n"}, d, dnFastConfig()))
	assertConventions(t, fs, Codes)
	f := mustFind(t, fs, "dns-servers-dead")
	if f.Status != runner.Fail || !strings.Contains(f.Detail["server_1_errors"], "server answered SERVFAIL after 2 attempt(s)") {
		t.Errorf("finding = %+v", f)
	}
}

// TestDNSResolvedStub: applications ask the stub; the check probes it and
// each upstream, and judges both layers.
func TestDNSResolvedStub(t *testing.T) {
	d := dnstest.Redirect{"127.0.0.53:53": dnHealthy(t), "192.0.2.53:53": dnHealthy(t), "198.51.100.53:53": dnServFail(t)}
	files := map[string]string{
		"/etc/resolv.conf":                 "# stub\nnameserver 127.0.0.53\noptions edns0 trust-ad\nsearch example.org\n",
		"/run/systemd/resolve/resolv.conf": "nameserver 192.0.2.53\nnameserver 198.51.100.53\n",
	}
	fs := RunDNS(context.Background(), dnEnv(t, files, d, dnFastConfig()))
	assertConventions(t, fs, Codes)
	want := []string{"pass dns-config-ok", "pass dns-servers-ok", "warn dns-servers-some-dead"}
	if got := codesOf(fs); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v\n%+v", got, want, fs)
	}
	if s := fs[0].Detail["resolver_stack"]; !strings.Contains(s, "127.0.0.53 (systemd-resolved stub); upstream") || !strings.Contains(s, "192.0.2.53, 198.51.100.53") {
		t.Errorf("resolver_stack = %q", s)
	}
	if m := fs[2].Message; m != "upstream server of systemd-resolved 198.51.100.53 does not answer (1 of 2 dead)" {
		t.Errorf("message %q", m)
	}
}

func TestDNSConfiguredNames(t *testing.T) {
	d := dnstest.Redirect{"192.0.2.53:53": dnHealthy(t)}
	cfg := dnFastConfig("www.example.org", "missing.example.org")
	fs := RunDNS(context.Background(), dnEnv(t, map[string]string{"/etc/resolv.conf": "nameserver 192.0.2.53\n", "/etc/hostname": "web1\n"}, d, cfg))
	assertConventions(t, fs, Codes)
	want := []string{"pass dns-config-ok", "pass dns-servers-ok", "warn dns-name-not-found"}
	if got := codesOf(fs); !slices.Equal(got, want) || fs[2].Message != "missing.example.org does not resolve on any working nameserver" {
		t.Fatalf("got %v, want %v\n%+v", got, want, fs)
	}
}

func TestDNSInvalidConfiguredName(t *testing.T) {
	d := dnstest.Redirect{"192.0.2.53:53": dnHealthy(t)}
	cfg := dnFastConfig(strings.Repeat("a", 64)+".example.org", "www.example.org")
	fs := RunDNS(context.Background(), dnEnv(t, map[string]string{"/etc/resolv.conf": "nameserver 192.0.2.53\n"}, d, cfg))
	assertConventions(t, fs, Codes)
	want := []string{"pass dns-config-ok", "error dns-name-invalid", "pass dns-servers-ok"}
	if got := codesOf(fs); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v\n%+v", got, want, fs)
	}
}

func TestDNSNoNameToProbe(t *testing.T) {
	fs := RunDNS(context.Background(), dnEnv(t, map[string]string{"/etc/resolv.conf": "nameserver 192.0.2.53\n", "/etc/hostname": "web1\n"}, dnstest.Redirect{}, nil))
	assertConventions(t, fs, Codes)
	if got := codesOf(fs); !slices.Equal(got, []string{"pass dns-config-ok", "skip dns-probe-skipped"}) || !strings.Contains(fs[1].Message, "no FQDN") {
		t.Errorf("got %+v", fs)
	}
}

// TestDNSBadInputGoesOn: unparsable resolv.conf lines are reported with
// file and line, and the servers that could be read are still probed.
func TestDNSBadInputGoesOn(t *testing.T) {
	d := dnstest.Redirect{"192.0.2.53:53": dnHealthy(t)}
	env := dnEnv(t, map[string]string{"/etc/resolv.conf": "nameserver 192.0.2.53\nnameserver 192.0.2.999\n\x00\x01garbage\n"}, d, dnFastConfig())
	fs := RunDNS(context.Background(), env)
	assertConventions(t, fs, Codes)
	want := []string{"warn dns-config-invalid", "pass dns-config-ok", "pass dns-servers-ok"}
	if got := codesOf(fs); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v\n%+v", got, want, fs)
	}
	if m := fs[0].Message; m != env.Root.Display("/etc/resolv.conf")+":2: nameserver \"192.0.2.999\" is not an IP address (+1 more)" {
		t.Errorf("message %q", m)
	}
}

func TestDNSNoNameserver(t *testing.T) {
	fs := RunDNS(context.Background(), dnEnv(t, map[string]string{"/etc/resolv.conf": "# empty\n"}, dnstest.Redirect{}, nil))
	assertConventions(t, fs, Codes)
	if got := codesOf(fs); !slices.Equal(got, []string{"fail dns-no-nameserver"}) {
		t.Errorf("got %+v", fs)
	}
}

// TestDNSRespectsCheckDeadline: with probes configured longer than the
// check's deadline, the black hole is given up in time and the check
// reports its findings instead of timing out.
func TestDNSRespectsCheckDeadline(t *testing.T) {
	d := dnstest.Redirect{"192.0.2.53:53": dnHealthy(t), "198.51.100.53:53": dnstest.BlackHole(t)}
	cfg := config.Default()
	settings.Set(cfg, Settings{Timeout: time.Minute, Retries: DefaultDNSRetries})
	cfg.Checks = map[string]config.CheckConfig{"dns": {Timeout: 3 * time.Second}}
	env := dnEnv(t, map[string]string{"/etc/resolv.conf": "nameserver 192.0.2.53\nnameserver 198.51.100.53\n"}, d, cfg)
	res := runner.Run(context.Background(), []runner.Check{Check}, env, runner.RunOptions{Timeout: cfg.CheckTimeoutFor})
	if res[0].Status != runner.Warn || mustFind(t, res[0].Findings, "dns-servers-some-dead").Detail["server_1_status"] != "alive" {
		t.Errorf("result = %+v", res[0])
	}
}

// BenchmarkDNSCheckBlackHole runs the dns check on a guest whose resolv.conf
// lists one healthy and one black-hole nameserver, with the default DNS
// settings (2s, one retry). Probes run in parallel, so one op should take
// about the DNS deadline, not twice it. Root only (the guest's link lives
// in a network namespace built for it).
func BenchmarkDNSCheckBlackHole(b *testing.B) {
	ns := nstest.New(b)
	ns.NIC(b, "eth0", "52:54:00:00:00:10", "192.0.2.10/24")
	ns.Default(b, "eth0", "192.0.2.1", 100, 0, false)
	d := dnstest.Redirect{"192.0.2.53:53": dnHealthy(b), "198.51.100.53:53": dnstest.BlackHole(b)}
	env := dnEnv(b, map[string]string{"/etc/resolv.conf": "nameserver 192.0.2.53\nnameserver 198.51.100.53\n"}, d, nil)
	env.Netlink = ns.Handle
	checks := []runner.Check{Check}
	b.ResetTimer()
	for b.Loop() {
		res := runner.Run(context.Background(), checks, env, runner.RunOptions{Timeout: env.Config.CheckTimeoutFor})
		if res[0].Status != runner.Warn {
			b.Fatalf("dns %s (%s)", res[0].Status, res[0].Summary)
		}
	}
}

package dns

import (
	"context"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/checks/hostname"
	"github.com/guestcheck/guestcheck/internal/fact/netstate"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

func TestJudgeResolverStack(t *testing.T) {
	tests := []struct {
		name  string
		root  map[string]string
		dir   string // a fixture root instead of root
		live  bool
		want  []string
		check func(t *testing.T, fs []runner.Finding)
	}{
		{name: "plain", dir: "resolv-plain", live: true, want: []string{"pass dns-config-ok"},
			check: func(t *testing.T, fs []runner.Finding) {
				if fs[0].Detail["search"] != "example.org" || fs[0].Detail["nameservers"] != "2" {
					t.Errorf("detail = %v", fs[0].Detail)
				}
			}},
		{name: "stub with upstreams", dir: "resolv-stub", live: true, want: []string{"pass dns-config-ok"},
			check: func(t *testing.T, fs []runner.Finding) {
				if !strings.Contains(fs[0].Message, "systemd-resolved stub with 2 upstream") ||
					!strings.Contains(fs[0].Detail["resolver_stack"], "upstream") {
					t.Errorf("finding = %+v", fs[0])
				}
			}},
		{name: "stub without upstream file on a running system", dir: "resolv-stub-image", live: true,
			want: []string{"warn dns-stub-no-upstream", "pass dns-config-ok"}},
		{name: "stub in an image", dir: "resolv-stub-image", live: false, want: []string{"pass dns-config-ok"}},
		{name: "symlink into /run in an image", root: map[string]string{"/etc/resolv.conf": "->../run/systemd/resolve/stub-resolv.conf"},
			want: []string{"skip dns-config-runtime"}},
		{name: "dangling symlink on a running system", live: true, root: map[string]string{"/etc/resolv.conf": "->../run/systemd/resolve/stub-resolv.conf"},
			want: []string{"fail dns-no-nameserver"}},
		{name: "missing", live: true, root: map[string]string{"/etc/hosts": ""}, want: []string{"fail dns-no-nameserver"}},
		{name: "no nameserver", live: true, root: map[string]string{"/etc/resolv.conf": "search example.org\n"}, want: []string{"fail dns-no-nameserver"}},
		{name: "four nameservers", live: true,
			root: map[string]string{"/etc/resolv.conf": "nameserver 192.0.2.1\nnameserver 192.0.2.2\nnameserver 192.0.2.3\nnameserver 192.0.2.4\n"},
			want: []string{"warn dns-too-many-nameservers", "pass dns-config-ok"},
			check: func(t *testing.T, fs []runner.Finding) {
				if fs[0].Detail["ignored"] != "192.0.2.4 (line 4)" {
					t.Errorf("detail = %v", fs[0].Detail)
				}
			}},
		{name: "unparsable lines", live: true, root: map[string]string{"/etc/resolv.conf": "nameserver 192.0.2.1\nnameserver 192.0.2.999\nnamesever 192.0.2.3\n"},
			want: []string{"warn dns-config-invalid", "pass dns-config-ok"},
			check: func(t *testing.T, fs []runner.Finding) {
				if !strings.HasSuffix(fs[0].Message, "/etc/resolv.conf:2: nameserver \"192.0.2.999\" is not an IP address (+1 more)") ||
					!strings.Contains(fs[0].Detail["problems"], "/etc/resolv.conf:3: unknown keyword") {
					t.Errorf("finding = %+v", fs[0])
				}
			}},
		{name: "unparsable upstream file", live: true, root: map[string]string{"/etc/resolv.conf": "nameserver 127.0.0.53\n",
			"/run/systemd/resolve/resolv.conf": "nameserver 192.0.2.1\nbogus\n"},
			want: []string{"warn dns-config-invalid", "pass dns-config-ok"}},
		{name: "unreadable", live: true, root: map[string]string{"/etc/resolv.conf": "->resolv.conf"}, want: []string{"error dns-config-unreadable"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := writeRoot(t, tc.root)
			if tc.dir != "" {
				root = openRoot(t, filepath.Join("../../fact/netstate/testdata/roots", tc.dir))
			}
			fs := JudgeResolverStack(netstate.ReadResolverStack(root), tc.live, false)
			assertConventions(t, fs, Codes)
			if got := codesOf(fs); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v\n%+v", got, tc.want, fs)
			}
			if tc.check != nil {
				tc.check(t, fs)
			}
		})
	}
}

func qr(name, typ string, o Outcome, rtt time.Duration, addrs ...string) QueryResult {
	q := QueryResult{Name: name, Type: typ, Outcome: o, RTT: rtt, Attempts: 1}
	for _, a := range addrs {
		q.Addrs = append(q.Addrs, netip.MustParseAddr(a))
	}
	if !o.Alive() {
		q.Err, q.Attempts = "no answer before the deadline", 2
	}
	return q
}

func TestJudgeProbes(t *testing.T) {
	alive := func(addr string, up bool) ServerResult {
		return ServerResult{Server: netstate.Server{Addr: netip.MustParseAddr(addr), Source: "/etc/resolv.conf:1", Upstream: up},
			Queries: []QueryResult{qr("a.example.org", "A", OutcomeAnswer, 3*time.Millisecond, "192.0.2.80"), qr("a.example.org", "AAAA", OutcomeNoData, 2*time.Millisecond)}}
	}
	dead := func(addr string, up bool) ServerResult {
		return ServerResult{Server: netstate.Server{Addr: netip.MustParseAddr(addr), Source: "/etc/resolv.conf:2", Upstream: up}, Elapsed: 2 * time.Second,
			Queries: []QueryResult{qr("a.example.org", "A", OutcomeTimeout, time.Second), qr("a.example.org", "AAAA", OutcomeTimeout, time.Second)}}
	}
	nx := ServerResult{Server: netstate.Server{Addr: netip.MustParseAddr("192.0.2.54"), Source: "x"},
		Queries: []QueryResult{qr("a.example.org", "A", OutcomeNXDomain, time.Millisecond), qr("a.example.org", "AAAA", OutcomeNXDomain, time.Millisecond)}}
	p := Prober{Timeout: 2 * time.Second, Retries: 1}
	tests := []struct {
		name    string
		results []ServerResult
		from    string
		want    []string
	}{
		{"all alive", []ServerResult{alive("192.0.2.53", false), alive("198.51.100.53", false)}, "x", []string{"pass dns-servers-ok"}},
		{"one dead", []ServerResult{alive("192.0.2.53", false), dead("198.51.100.53", false)}, "x", []string{"warn dns-servers-some-dead"}},
		{"all dead", []ServerResult{dead("192.0.2.53", false), dead("198.51.100.53", false)}, "x", []string{"fail dns-servers-dead"}},
		{"stub alive, upstreams half dead", []ServerResult{alive("127.0.0.53", false), alive("192.0.2.53", true), dead("198.51.100.53", true)}, "x",
			[]string{"pass dns-servers-ok", "warn dns-servers-some-dead"}},
		{"NXDOMAIN proves a live server", []ServerResult{nx}, "the machine's FQDN", []string{"pass dns-servers-ok"}},
		{"configured name missing everywhere", []ServerResult{nx, dead("198.51.100.53", false)}, "config dns.names",
			[]string{"warn dns-servers-some-dead", "warn dns-name-not-found"}},
		{"configured name resolves somewhere", []ServerResult{nx, alive("192.0.2.53", false)}, "config dns.names", []string{"pass dns-servers-ok"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := JudgeProbes(tc.results, []string{"a.example.org"}, tc.from, p)
			assertConventions(t, fs, Codes)
			if got := codesOf(fs); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v\n%+v", got, tc.want, fs)
			}
		})
	}
	fs := JudgeProbes([]ServerResult{alive("192.0.2.53", false), dead("198.51.100.53", false)}, []string{"a.example.org"}, "config dns.names", p)
	d := fs[0].Detail
	for k, want := range map[string]string{
		"server_1": "192.0.2.53 (/etc/resolv.conf:1)", "server_1_status": "alive", "server_1_time": "2ms",
		"server_1_answers": "a.example.org A 192.0.2.80 in 3ms; a.example.org AAAA no record in 2ms",
		"server_2_status":  "dead", "server_2_time": "2s",
		"server_2_errors": "a.example.org A: no answer before the deadline after 2 attempt(s); a.example.org AAAA: no answer before the deadline after 2 attempt(s)",
		"names":           "a.example.org", "names_from": "config dns.names", "timeout": "2s", "retries": "1",
	} {
		if d[k] != want {
			t.Errorf("detail[%s] = %q, want %q", k, d[k], want)
		}
	}
	if fs[0].Message != "nameserver 198.51.100.53 does not answer (1 of 2 dead)" {
		t.Errorf("message %q", fs[0].Message)
	}
}

func TestProbeNames(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		live  bool
		cfg   string // guestcheck.yaml
		want  string
		from  string
	}{
		{"configured names win", map[string]string{"/etc/hostname": "web1.example.com\n"}, false,
			"dns: {names: [a.example.org, b.example.org]}", "a.example.org,b.example.org", "config dns.names"},
		{"dotted hostname", map[string]string{"/etc/hostname": "# c\nweb1.example.com.\n"}, false, "", "web1.example.com", "/etc/hostname"},
		{"kernel hostname when live", map[string]string{"/etc/hostname": "old\n", "/proc/sys/kernel/hostname": "web2.example.com\n"}, true, "",
			"web2.example.com", "/proc/sys/kernel/hostname"},
		{"FQDN from /etc/hosts", map[string]string{"/etc/hostname": "web1\n", "/etc/hosts": "127.0.0.1 localhost\n127.0.1.1 web1.example.com web1\n"}, false, "",
			"web1.example.com", "/etc/hosts:2"},
		{"localhost.localdomain is no FQDN", map[string]string{"/etc/hostname": "localhost.localdomain\n"}, false, "", "", ""},
		{"short name, no hosts entry, expected from config", map[string]string{"/etc/hostname": "web1\n", "/etc/hosts": "127.0.0.1 localhost.localdomain localhost web1\n"}, false,
			"hostname: {expected: web1.example.net}", "web1.example.net", "config hostname.expected"},
		{"nothing to ask", map[string]string{"/etc/hostname": "web1\n"}, false, "hostname: {expected: web1}", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Parse("guestcheck.yaml", []byte(tc.cfg), Check.Settings, hostname.Check.Settings)
			if err != nil {
				t.Fatal(err)
			}
			names, from := ProbeNames(writeRoot(t, tc.files), tc.live, c)
			if strings.Join(names, ",") != tc.want || !strings.Contains(from, tc.from) {
				t.Errorf("got %v from %q, want %q from %q", names, from, tc.want, tc.from)
			}
		})
	}
}

func TestRunDNSNotLive(t *testing.T) {
	root := openRoot(t, "../../fact/netstate/testdata/roots/resolv-plain")
	fs := RunDNS(context.Background(), &runner.Env{Root: root, Live: false, Config: config.Default()})
	assertConventions(t, fs, Codes)
	if got := codesOf(fs); !slices.Equal(got, []string{"pass dns-config-ok", "skip dns-probe-skipped"}) || !strings.Contains(fs[1].Message, "needs the running system") {
		t.Errorf("got %+v", fs)
	}
}

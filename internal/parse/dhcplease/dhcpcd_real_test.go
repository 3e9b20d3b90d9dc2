package dhcplease

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

var update = flag.Bool("update", false, "TestRealDhcpcdLease rewrites testdata/dhcpcd with the files of its run")

// dhcpcdDBDir is where Debian's dhcpcd keeps its DUID and leases
// (compiled in: configure --dbdir); the test binds a directory of its own
// over it, in a mount namespace of dhcpcd's own.
const dhcpcdDBDir = "/var/lib/dhcpcd"

// The capture's addresses are documentation ones: the client's MAC from
// RFC 7042's 00-00-5E-00-53-00/24, the server's DUID-EN under RFC 5612's
// enterprise number 32473.
var (
	dhcpcdClientMAC = net.HardwareAddr{0, 0, 0x5e, 0, 0x53, 1}
	dhcpcdServerMAC = net.HardwareAddr{0, 0, 0x5e, 0, 0x53, 2}
)

const dhcpcdCapture = "testdata/dhcpcd"

// dhcpcdConf is the test's dhcpcd.conf: Debian's identity settings (its
// /etc/dhcpcd.conf: a DUID, and the RFC 4361 client ID made from it),
// then what keeps the run short and off the host: no hook scripts (they
// would write the host's resolv.conf and hostname), no ARP probe, no
// random delay, no router solicitation; ia_na starts DHCPv6 without a
// router advertisement.
const dhcpcdConf = `duid
option rapid_commit
script %TRUE%
noarp
nodelay
noipv6rs
nodev
interface eth0
ia_na 1
`

// TestRealDhcpcdLease holds ParseDhcpcdLease and ParseDUIDFile to the
// files the real dhcpcd writes where guestid reads them (DBDIR/duid,
// DBDIR/IFACE.lease and .lease6), against what the DHCP server recorded
// of the same client: in a network namespace of the test's own, dnsmasq
// serves a veth's one end and dhcpcd takes a DHCPv4, then a DHCPv6 lease
// on the other.
func TestRealDhcpcdLease(t *testing.T) {
	testenv.RequireRoot(t, "a network and a mount namespace for dhcpcd need root")
	ipCmd := testenv.Tool(t, "ip", "iproute2")
	dhcpcd := testenv.Tool(t, "dhcpcd", "dhcpcd-base")
	dnsmasq := testenv.Tool(t, "dnsmasq", "dnsmasq-base")
	unshare := testenv.Tool(t, "unshare", "util-linux")
	mount := testenv.Tool(t, "mount", "mount")
	trueCmd := testenv.Tool(t, "true", "coreutils")
	// The bind mount needs the directory dhcpcd-base ships; the test
	// makes nothing on the host.
	if st, err := os.Stat(dhcpcdDBDir); err != nil || !st.IsDir() {
		t.Fatalf("%s is not a directory (%v): dhcpcd-base ships it", dhcpcdDBDir, err)
	}
	start := time.Now()
	ns, ip := testNetns(t, ipCmd)
	// No duplicate address detection, so that both ends have their
	// link-local addresses (which DHCPv6 runs over) at once.
	nsExec(t, ipCmd, ns, "sh", "-c", "echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad")
	ip("-n", ns, "link", "add", "srv0", "address", dhcpcdServerMAC.String(), "type", "veth",
		"peer", "name", "eth0", "address", dhcpcdClientMAC.String())
	ip("-n", ns, "addr", "add", "192.0.2.1/24", "dev", "srv0")
	ip("-n", ns, "addr", "add", "2001:db8::1/64", "dev", "srv0")
	for _, l := range []string{"lo", "srv0", "eth0"} {
		ip("-n", ns, "link", "set", l, "up")
	}
	for _, l := range []string{"srv0", "eth0"} {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			a := ip("-n", ns, "-6", "addr", "show", "dev", l)
			if strings.Contains(a, "scope link") && !strings.Contains(a, "tentative") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no link-local address on %s: %s", l, a)
			}
		}
	}

	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	if err := os.Mkdir(db, 0o755); err != nil {
		t.Fatal(err)
	}
	leases := filepath.Join(dir, "dnsmasq.leases")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// dnsmasq: DHCP only (port 0), on srv0 only, writing nothing outside
	// dir; no ping before an offer, which would cost seconds.
	srv := startGroup(t, ctx, ipCmd, "netns", "exec", ns, dnsmasq, "--keep-in-foreground",
		"--conf-file=/dev/null", "--user=root", "--port=0", "--interface=srv0", "--bind-interfaces",
		"--pid-file="+filepath.Join(dir, "dnsmasq.pid"), "--dhcp-leasefile="+leases,
		"--log-facility=-", "--log-dhcp", "--no-ping", "--dhcp-authoritative",
		"--dhcp-range=192.0.2.10,192.0.2.20,255.255.255.0,1h",
		"--dhcp-range=2001:db8::10,2001:db8::20,64,1h",
		"--dhcp-duid=32473,53:01")
	srvLog := func() string {
		srv.kill()
		srv.wait(t, 10*time.Second)
		return srv.output()
	}
	conf := filepath.Join(dir, "dhcpcd.conf")
	if err := os.WriteFile(conf, []byte(strings.ReplaceAll(dhcpcdConf, "%TRUE%", trueCmd)), 0o644); err != nil {
		t.Fatal(err)
	}
	// One oneshot run per family: dhcpcd 9.4.1 -1 exits on the first
	// address whatever --waitip says. The second run finds the DUID the
	// first made, as a rebooted guest would. Each runs in a mount
	// namespace of its own with dir's db over DBDIR and a tmpfs over
	// /run (its pid files and sockets), and in a PID namespace of its
	// own, which ends its privilege-separated helpers with it.
	for _, family := range []string{"-4", "-6"} {
		c := startGroup(t, ctx, ipCmd, "netns", "exec", ns, unshare, "--pid", "--fork", "--kill-child",
			"--mount", "--propagation", "private",
			"sh", "-ec", `"$1" --bind "$2" "$3"; "$1" -t tmpfs tmpfs /run; shift 3; exec "$@"`,
			"sh", mount, db, dhcpcdDBDir,
			dhcpcd, "-f", conf, "--oneshot", "--nobackground", "--debug", family, "eth0")
		if err := c.wait(t, 20*time.Second); err != nil {
			t.Fatalf("dhcpcd %s: %v\n%s\ndnsmasq:\n%s", family, err, c.output(), srvLog())
		}
		c.kill() // any privilege-separated helper left behind
	}
	// dnsmasq writes its lease file once it has replied: wait for both.
	var v4, v6 dnsmasqLease
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(leases)
		v4, v6 = parseDnsmasqLeases(t, b)
		if v4.clientID != nil && v6.clientID != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("dnsmasq recorded no DHCPv4 and DHCPv6 lease: %q\n%s", b, srvLog())
		}
	}
	log := srvLog()
	// RFC 6842: the server echoes option 61 in its reply, which is all
	// the lease file can show of it; dnsmasq --log-dhcp lists the
	// options it sent.
	var echoed []byte
	if strings.Contains(log, "option: 61 ") {
		echoed = v4.clientID
	}
	t.Logf("dnsmasq: DHCPv4 client ID %s, DHCPv6 client DUID %s, option 61 echoed: %v; took %v",
		Hex(v4.clientID), Hex(v6.clientID), echoed != nil, time.Since(start).Round(time.Millisecond))
	checkDhcpcdFiles(t, db, v4, v6, echoed)
	if *update {
		for _, n := range []string{"duid", "eth0.lease", "eth0.lease6"} {
			copyFile(t, filepath.Join(db, n), filepath.Join(dhcpcdCapture, n))
		}
		copyFile(t, leases, filepath.Join(dhcpcdCapture, "dnsmasq.leases"))
	}
}

// TestDhcpcdCapture holds the parsers to the files of one run of
// TestRealDhcpcdLease (testdata/dhcpcd/README.md), so that a run without
// root reads a real dhcpcd's files too.
func TestDhcpcdCapture(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(dhcpcdCapture, "dnsmasq.leases"))
	if err != nil {
		t.Fatal(err)
	}
	v4, v6 := parseDnsmasqLeases(t, b)
	if v4.clientID == nil || v6.clientID == nil {
		t.Fatalf("dnsmasq.leases holds no DHCPv4 and DHCPv6 lease: %q", b)
	}
	// dnsmasq 2.90 echoed no option 61 (README.md).
	checkDhcpcdFiles(t, dhcpcdCapture, v4, v6, nil)
}

// checkDhcpcdFiles compares what the parsers read of dhcpcd's files in
// dir with what dnsmasq recorded of the client (v4, v6) and with the
// option 61 it echoed (nil for none).
func checkDhcpcdFiles(t *testing.T, dir string, v4, v6 dnsmasqLease, echoed []byte) {
	t.Helper()
	read := func(n string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatalf("dhcpcd wrote no %s where guestid reads it: %v", n, err)
		}
		return b
	}
	duidFile := read("duid")
	duid, probs := ParseDUIDFile("duid", duidFile)
	if duid == nil || len(probs) != 0 {
		t.Fatalf("duid file %q: %x, %v", duidFile, duid, probs)
	}
	if !bytes.Equal(duid, v6.clientID) {
		t.Errorf("duid file %s, dnsmasq's DHCPv6 client DUID %s", Hex(duid), Hex(v6.clientID))
	}
	// RFC 4361 6.1: type 255, the IAID (dhcpcd's: the MAC's last four
	// bytes), the DUID.
	want4 := append(append([]byte{255}, dhcpcdClientMAC[2:]...), duid...)
	if !bytes.Equal(v4.clientID, want4) {
		t.Errorf("dnsmasq's DHCPv4 client ID %s, want ff:IAID:DUID %s", Hex(v4.clientID), Hex(want4))
	}
	if !bytes.Equal(v4.mac, dhcpcdClientMAC) {
		t.Errorf("dnsmasq's DHCPv4 lease for MAC %s, want %s", v4.mac, dhcpcdClientMAC)
	}

	l, err := ParseDhcpcdLease(read("eth0.lease"), false)
	if err != nil {
		t.Fatalf("eth0.lease: %v", err)
	}
	if l.V6 || !bytes.Equal(l.HWAddr, dhcpcdClientMAC) || !bytes.Equal(l.ClientID, echoed) {
		t.Errorf("eth0.lease: %+v, want chaddr %s and the client ID dnsmasq echoed (%s)", l, dhcpcdClientMAC, Hex(echoed))
	}
	l, err = ParseDhcpcdLease(read("eth0.lease6"), true)
	if err != nil {
		t.Fatalf("eth0.lease6: %v", err)
	}
	if !l.V6 || l.HWAddr != nil || !bytes.Equal(l.ClientID, v6.clientID) {
		t.Errorf("eth0.lease6: %+v, want dnsmasq's client DUID %s", l, Hex(v6.clientID))
	}
}

// dnsmasqLease is a line of dnsmasq's lease file: "EXPIRY MAC IP NAME
// CLIENT-ID" for DHCPv4, "EXPIRY IAID IP NAME DUID" for DHCPv6 (after its
// "duid SERVER-DUID" line).
type dnsmasqLease struct {
	mac      net.HardwareAddr
	clientID []byte
}

func parseDnsmasqLeases(t *testing.T, b []byte) (v4, v6 dnsmasqLease) {
	t.Helper()
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 5 || f[4] == "*" {
			continue
		}
		id, err := ParseHex(f[4])
		if err != nil {
			t.Fatalf("dnsmasq lease %q: %v", line, err)
		}
		if strings.Contains(f[2], ":") {
			v6.clientID = id
			continue
		}
		v4.clientID = id
		if v4.mac, err = net.ParseMAC(f[1]); err != nil {
			t.Fatalf("dnsmasq lease %q: %v", line, err)
		}
	}
	return v4, v6
}

// group is a process started in a process group of its own: dhcpcd's
// privilege-separated helpers and dnsmasq must not outlive the test, nor
// hold its network namespace.
type group struct {
	cmd  *exec.Cmd
	out  bytes.Buffer
	done chan struct{}
	err  error
}

func startGroup(t *testing.T, ctx context.Context, name string, args ...string) *group {
	t.Helper()
	g := &group{cmd: exec.CommandContext(ctx, name, args...), done: make(chan struct{})}
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	g.cmd.Cancel = func() error { g.kill(); return nil }
	g.cmd.WaitDelay = 5 * time.Second
	g.cmd.Stdout, g.cmd.Stderr = &g.out, &g.out
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { g.err = g.cmd.Wait(); close(g.done) }()
	t.Cleanup(func() {
		g.kill()
		g.wait(t, 10*time.Second)
	})
	return g
}

// kill kills the whole group.
func (g *group) kill() { syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL) }

// wait waits for the group's leader to exit, for at most d.
func (g *group) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case <-g.done:
		return g.err
	case <-time.After(d):
		g.kill()
		t.Errorf("%s did not exit within %v", g.cmd, d)
		return errors.New("timed out")
	}
}

// output is what the process wrote; only once it has exited.
func (g *group) output() string {
	select {
	case <-g.done:
		return g.out.String()
	default:
		return "(still running)"
	}
}

// nsExec runs a command in namespace ns.
func nsExec(t *testing.T, ipCmd, ns string, args ...string) {
	t.Helper()
	if out, err := exec.Command(ipCmd, append([]string{"netns", "exec", ns}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

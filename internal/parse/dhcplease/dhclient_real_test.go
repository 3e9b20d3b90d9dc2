package dhcplease

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestRealDhclientDUID holds ParseDhclient to a lease file the real
// dhclient -6 wrote: in a network namespace of its own, on a veth with
// no DHCPv6 server, it makes a DUID-LLT from the NIC's MAC and writes it
// as default-duid (octal escapes and all) before its first Solicit.
func TestRealDhclientDUID(t *testing.T) {
	testenv.RequireRoot(t, "a network namespace for dhclient needs root")
	ipCmd := testenv.Tool(t, "ip", "iproute2")
	dhclient := testenv.Tool(t, "dhclient", "isc-dhcp-client")
	ns, ip := testNetns(t, ipCmd)
	ip("-n", ns, "link", "add", "veth-a", "type", "veth", "peer", "name", "veth-b")
	ip("-n", ns, "link", "set", "veth-a", "up")
	ip("-n", ns, "link", "set", "veth-b", "up")
	// dhclient -6 needs a link-local address past duplicate detection.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		a := ip("-n", ns, "-6", "addr", "show", "dev", "veth-a")
		if strings.Contains(a, "scope link") && !strings.Contains(a, "tentative") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no link-local address on veth-a: %s", a)
		}
	}
	fields := strings.Fields(ip("-n", ns, "-o", "link", "show", "veth-a"))
	var mac net.HardwareAddr
	for i, f := range fields {
		if f == "link/ether" && i+1 < len(fields) {
			mac, _ = net.ParseMAC(fields[i+1])
		}
	}
	if mac == nil {
		t.Fatalf("no MAC for veth-a in %q", fields)
	}
	dir := t.TempDir()
	lf := filepath.Join(dir, "dhclient6.leases")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, ipCmd, "netns", "exec", ns, dhclient, "-6", "-1", "-d",
		"-lf", lf, "-pf", filepath.Join(dir, "pid"), "-sf", "/bin/true", "veth-a")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var b []byte
	for deadline := time.Now().Add(15 * time.Second); !bytes.Contains(b, []byte("default-duid")); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			cancel()
			cmd.Wait()
			t.Fatalf("dhclient wrote no default-duid: %q\n%s", b, out.String())
		}
		b, _ = os.ReadFile(lf)
	}
	cancel()
	cmd.Wait()
	d, probs := ParseDhclient(lf, b)
	if len(probs) != 0 {
		t.Fatalf("problems in dhclient's own file %q: %v", b, probs)
	}
	// DUID-LLT (RFC 8415 11.2): type 1, hardware type 1 (Ethernet), four
	// bytes of time, then the MAC.
	if len(d.DefaultDUID) != 14 || !bytes.Equal(d.DefaultDUID[:4], []byte{0, 1, 0, 1}) || !bytes.Equal(d.DefaultDUID[8:], mac) {
		t.Errorf("default-duid %s from %q, want 00:01:00:01:TIME:%s", Hex(d.DefaultDUID), b, mac)
	}
}

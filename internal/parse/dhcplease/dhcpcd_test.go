package dhcplease

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ack is a DHCPACK as dhcpcd saves it: the BOOTP header, the magic
// cookie, message type ACK, a client identifier (type 1, the MAC) and
// the lease time.
func ack(opts ...byte) []byte {
	b := make([]byte, bootpFixed)
	b[0], b[1], b[2] = 2, 1, 6
	copy(b[16:], []byte{192, 0, 2, 10})
	copy(b[bootpCHAddr:], []byte{0x52, 0x54, 0, 0x12, 0x34, 0x56})
	b = append(b, magicCookie[:]...)
	return append(b, opts...)
}

func TestParseDhcpcdLease(t *testing.T) {
	id := []byte{1, 0x52, 0x54, 0, 0x12, 0x34, 0x56}
	l, err := ParseDhcpcdLease(ack(append(append([]byte{53, 1, 5, 0, 61, 7}, id...), 51, 4, 0, 1, 81, 128, 255)...), false)
	if err != nil || !bytes.Equal(l.ClientID, id) || !bytes.Equal(l.HWAddr, id[1:]) || l.V6 {
		t.Errorf("ACK: %+v, %v", l, err)
	}
	if l, err := ParseDhcpcdLease(ack(53, 1, 5, 255), false); err != nil || l.ClientID != nil {
		t.Errorf("ACK without option 61: %+v, %v", l, err)
	}
	duid := []byte{0, 1, 0, 1, 0x2e, 0x8a, 0x1c, 0x11, 0x52, 0x54, 0, 0x12, 0x34, 0x56}
	v6 := append([]byte{7, 0xab, 0xcd, 0xef, 0, 2, 0, 2, 9, 9, 0, 1, 0, byte(len(duid))}, duid...)
	if l, err := ParseDhcpcdLease(v6, true); err != nil || !bytes.Equal(l.ClientID, duid) || !l.V6 {
		t.Errorf("DHCPv6 reply: %+v, %v", l, err)
	}
	for _, tc := range []struct {
		b    []byte
		v6   bool
		want string
	}{
		{[]byte("# not a lease\n"), false, "shorter than a DHCP message"},
		{append([]byte{1}, ack(255)[1:]...), false, "not a BOOTREPLY"},
		{append(ack()[:bootpFixed], 1, 2, 3, 4), false, "no DHCP magic cookie"},
		{ack(61, 9, 1), false, "option 61 runs past"},
		{[]byte{7, 0, 0}, true, "shorter than a DHCPv6"},
		{[]byte{1, 0, 0, 0}, true, "not a DHCPv6 reply"},
		{[]byte{7, 0, 0, 0, 0, 1, 0, 9, 1}, true, "option 1 runs past"},
	} {
		if _, err := ParseDhcpcdLease(tc.b, tc.v6); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.b, err, tc.want)
		}
	}
}

// FuzzParseDhcpcdLease: never panics; a client identifier comes from
// within the message and is never empty.
func FuzzParseDhcpcdLease(f *testing.F) {
	f.Add(ack(61, 2, 1, 2, 255), false)
	f.Add([]byte{7, 0, 0, 0, 0, 1, 0, 3, 0, 1, 2}, true)
	// The real dhcpcd's files (testdata/dhcpcd/README.md).
	for _, n := range []string{"eth0.lease", "eth0.lease6"} {
		b, err := os.ReadFile(filepath.Join(dhcpcdCapture, n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, strings.HasSuffix(n, "6"))
	}
	f.Fuzz(func(t *testing.T, b []byte, v6 bool) {
		l, err := ParseDhcpcdLease(b, v6)
		if l.ClientID != nil && (len(l.ClientID) == 0 || !bytes.Contains(b, l.ClientID)) {
			t.Fatalf("client id %x not from the message (%v)", l.ClientID, err)
		}
		if len(l.HWAddr) > 16 {
			t.Fatalf("chaddr of %d bytes", len(l.HWAddr))
		}
	})
}

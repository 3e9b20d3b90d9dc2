package guestid

import (
	"encoding/hex"
	"testing"

	"github.com/guestcheck/guestcheck/internal/parse/dhcplease"
)

// TestSipHash24 checks the hash against the reference vectors of the
// SipHash paper (appendix A: key 00..0f, message 00..0e) and of its
// reference implementation (vectors.h: the empty message, and 00..07).
func TestSipHash24(t *testing.T) {
	var key [16]byte
	for i := range key {
		key[i] = byte(i)
	}
	msg := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i)
		}
		return b
	}
	for _, tc := range []struct {
		n    int
		want uint64
	}{
		{15, 0xa129ca6149be45e5},
		{0, 0x726fdb47dd0e0e31},
		{8, 0x93f5f5799a932462},
	} {
		if got := siphash24(key, msg(tc.n)); got != tc.want {
			t.Errorf("siphash24(%d bytes) = %#x, want %#x", tc.n, got, tc.want)
		}
	}
}

// TestNetworkdDUID: systemd's own test vector. With network test mode
// on, sd_dhcp_duid_set_en uses the machine ID 0102..10 and asserts that
// the DUID is 00:02 00:00:ab:11 61:77:40:de:13:42:c3:a2
// (src/libsystemd-network/sd-dhcp-duid.c).
func TestNetworkdDUID(t *testing.T) {
	got, ok := NetworkdDUID("0102030405060708090a0b0c0d0e0f10\n")
	if want := "00:02:00:00:ab:11:61:77:40:de:13:42:c3:a2"; !ok || dhcplease.Hex(got) != want {
		t.Errorf("NetworkdDUID = %s, %v; want %s", dhcplease.Hex(got), ok, want)
	}
	// Real systemd-networkd 252 (Debian 12), machine-id
	// 6f1b2c3d4e5f40718293a4b5c6d7e8f9 bind-mounted over /etc/machine-id,
	// DHCP=ipv4 on a veth in a private network namespace (with /sys
	// read-only, so that networkd does not wait for udev): its
	// DHCPDISCOVER, captured on the veth's peer, carried option 61
	// ff 568f3c4b 0002 0000ab11 ab42bc4854a433da, that is type 255, the
	// IAID, then the DUID.
	if got, _ := NetworkdDUID("6f1b2c3d4e5f40718293a4b5c6d7e8f9"); dhcplease.Hex(got) != "00:02:00:00:ab:11:ab:42:bc:48:54:a4:33:da" {
		t.Errorf("NetworkdDUID = %s, systemd-networkd sent 00:02:00:00:ab:11:ab:42:bc:48:54:a4:33:da", dhcplease.Hex(got))
	}
	for _, bad := range []string{"", "uninitialized", "0102", "zz02030405060708090a0b0c0d0e0f10"} {
		if d, ok := NetworkdDUID(bad); ok || d != nil {
			t.Errorf("NetworkdDUID(%q) = %x", bad, d)
		}
	}
}

func TestMachineIDHashForm(t *testing.T) {
	h, ok := MachineIDHash("0102030405060708090A0B0C0D0E0F10")
	if !ok || len(h) != 32 {
		t.Fatalf("MachineIDHash = %q, %v", h, ok)
	}
	b, _ := hex.DecodeString(h)
	if b[6]>>4 != 4 || b[8]>>6 != 2 {
		t.Errorf("%s is not marked as a version 4 UUID", h)
	}
	if h2, _ := MachineIDHash("0102030405060708090a0b0c0d0e0f10"); h2 != h {
		t.Errorf("case changes the hash: %s, %s", h, h2)
	}
	for _, bad := range []string{"", "0102", "uninitialized"} {
		if _, ok := MachineIDHash(bad); ok {
			t.Errorf("MachineIDHash(%q) ok", bad)
		}
	}
}

// TestMachineIDHashVector: what systemd-id128 machine-id
// --app-specific=322e36d10a804d5d9f5468df9622eb0f printed (systemd 252)
// with /etc/machine-id holding 0102..10; TestMachineIDHashSystemd checks
// more IDs against the real tool, as root.
func TestMachineIDHashVector(t *testing.T) {
	if h, _ := MachineIDHash("0102030405060708090a0b0c0d0e0f10"); h != "76eb71b6730144dfbb51776f36fd12fc" {
		t.Errorf("MachineIDHash = %s", h)
	}
}

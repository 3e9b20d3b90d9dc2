package netstate

import (
	"net"
	"net/netip"
	"reflect"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
)

func TestIdentityInterfaces(t *testing.T) {
	mac, _ := net.ParseMAC("52:54:00:AB:CD:01")
	links := []Link{
		{Index: 1, Name: "lo", Encap: "loopback", MAC: make(net.HardwareAddr, 6)},
		{Index: 2, Name: "eth0", Encap: "ether", MAC: mac},
		{Index: 3, Name: "wg0", Encap: "none"},
	}
	addrs := []Addr{
		{LinkIndex: 1, Prefix: netip.MustParsePrefix("127.0.0.1/8"), Scope: unix.RT_SCOPE_HOST},
		{LinkIndex: 2, Prefix: netip.MustParsePrefix("192.0.2.10/24"), Scope: unix.RT_SCOPE_UNIVERSE},
		{LinkIndex: 2, Prefix: netip.MustParsePrefix("fe80::5054:ff:feab:cd01/64"), Scope: unix.RT_SCOPE_LINK},
		{LinkIndex: 2, Prefix: netip.MustParsePrefix("2001:db8::10/64"), Scope: unix.RT_SCOPE_UNIVERSE, Tentative: true},
		{LinkIndex: 3, Prefix: netip.MustParsePrefix("198.51.100.1/32"), Scope: unix.RT_SCOPE_UNIVERSE},
	}
	want := []guestid.Interface{
		{Name: "eth0", MAC: "52:54:00:ab:cd:01", Addresses: []string{"192.0.2.10/24", "2001:db8::10/64"}},
		{Name: "wg0", Addresses: []string{"198.51.100.1/32"}},
	}
	if got := IdentityInterfaces(links, addrs); !reflect.DeepEqual(got, want) {
		t.Errorf("IdentityInterfaces = %+v, want %+v", got, want)
	}
}

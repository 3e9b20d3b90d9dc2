package netcheck

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// NMConnection is what network-identity takes from a NetworkManager
// keyfile (.nmconnection).
type NMConnection struct {
	File          string
	ID            string
	InterfaceName string
	MAC           *MACRef // [ethernet] mac-address: the profile applies only to that NIC
	IPv4Method    string
	DHCPClientID  string // [ipv4] dhcp-client-id
	DHCPClientAt  string
}

// ParseNMKeyfile interprets a parsed NetworkManager keyfile. An invalid
// mac-address is a problem.
func ParseNMKeyfile(f INI) (NMConnection, []Problem) {
	c := NMConnection{File: f.File}
	var probs []Problem
	if e, ok := f.Get("connection", "id"); ok {
		c.ID = e.Value
	}
	if e, ok := f.Get("connection", "interface-name"); ok {
		c.InterfaceName = e.Value
	}
	for _, sec := range []string{"ethernet", "802-3-ethernet"} {
		e, ok := f.Get(sec, "mac-address")
		if !ok || e.Value == "" {
			continue
		}
		mac, err := parseNMMAC(e.Value)
		if err != nil {
			probs = append(probs, Problem{File: f.File, Line: e.Line, Msg: "mac-address " + quoteShort(e.Value) + " is not a MAC address"})
			continue
		}
		c.MAC = &MACRef{MAC: mac, At: loc(f.File, e.Line)}
	}
	if e, ok := f.Get("ipv4", "method"); ok {
		c.IPv4Method = e.Value
	}
	if e, ok := f.Get("ipv4", "dhcp-client-id"); ok {
		c.DHCPClientID, c.DHCPClientAt = strings.ToLower(e.Value), loc(f.File, e.Line)
	}
	return c, probs
}

// parseNMMAC accepts "52:54:00:12:34:56", with an optional trailing ';'
// (older keyfiles), or the legacy list of decimal bytes "82;84;0;18;52;86;".
func parseNMMAC(s string) (net.HardwareAddr, error) {
	s = strings.TrimSuffix(s, ";")
	if !strings.Contains(s, ";") {
		return net.ParseMAC(s)
	}
	parts := strings.Split(s, ";")
	if len(parts) != 6 {
		return nil, fmt.Errorf("want 6 bytes, got %d", len(parts))
	}
	mac := make(net.HardwareAddr, 6)
	for i, p := range parts {
		v, err := strconv.ParseUint(strings.TrimSpace(p), 10, 8)
		if err != nil {
			return nil, err
		}
		mac[i] = byte(v)
	}
	return mac, nil
}

// DHCPv4 reports whether the profile runs a DHCPv4 client.
func (c NMConnection) DHCPv4() bool { return c.IPv4Method == "" || c.IPv4Method == "auto" }

// machineClientID reports whether the profile's DHCPv4 client identifier
// derives from state a clone keeps (/etc/machine-id or NetworkManager's
// secret key): "duid", "ipv6-duid" and "stable". Unset means NetworkManager's
// default, which for its internal client is the MAC address.
func (c NMConnection) machineClientID() bool {
	switch c.DHCPClientID {
	case "duid", "ipv6-duid", "stable":
		return true
	}
	return false
}

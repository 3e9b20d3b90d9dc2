package dhcplease

import (
	"errors"
	"fmt"
)

// DHCP message layout (RFC 2131 section 2, RFC 8415 section 8 and 21.2).
const (
	bootpFixed   = 236 // op .. file, before the options' magic cookie
	bootpCHAddr  = 28  // client hardware address, 16 bytes
	bootpHLen    = 2   // its length
	optPad       = 0
	optEnd       = 255
	optClientID  = 61 // RFC 2132 9.14
	opt6ClientID = 1  // RFC 8415 21.2: OPTION_CLIENTID, a DUID
)

var magicCookie = [4]byte{99, 130, 83, 99}

// DhcpcdLease is what a dhcpcd lease file says about the client that
// holds it: the identifier it presented, as the server's reply echoes it
// (option 61 for DHCPv4, RFC 6842; OPTION_CLIENTID for DHCPv6), and the
// client hardware address of a DHCPv4 reply.
type DhcpcdLease struct {
	// V6 says the file is a DHCPv6 message (dhcpcd's .lease6).
	V6 bool
	// ClientID is the client identifier, nil when the reply carries none:
	// a DHCPv6 reply always does, a DHCPv4 one only from a server that
	// echoes option 61 (dnsmasq 2.90 does not; ISC dhcpd only with
	// echo-client-id), so a DHCPv4 lease often names no client.
	ClientID []byte
	// HWAddr is the DHCPv4 reply's chaddr, nil for DHCPv6.
	HWAddr []byte
}

// ParseDhcpcdLease parses a dhcpcd lease file: the server's last reply as
// dhcpcd saved it, a BOOTP message with DHCP options (.lease), or a
// DHCPv6 message (.lease6, v6). Pure, for the fuzzer; the error says what
// is not a DHCP message.
func ParseDhcpcdLease(b []byte, v6 bool) (DhcpcdLease, error) {
	if v6 {
		return parseDHCPv6(b)
	}
	var l DhcpcdLease
	if len(b) < bootpFixed+len(magicCookie) {
		return l, fmt.Errorf("%d bytes, shorter than a DHCP message (%d)", len(b), bootpFixed+len(magicCookie))
	}
	if b[0] != 2 {
		return l, fmt.Errorf("op %d, not a BOOTREPLY", b[0])
	}
	if [4]byte(b[bootpFixed:bootpFixed+4]) != magicCookie {
		return l, errors.New("no DHCP magic cookie after the BOOTP header")
	}
	if n := int(b[bootpHLen]); n > 0 && n <= 16 {
		l.HWAddr = append([]byte(nil), b[bootpCHAddr:bootpCHAddr+n]...)
	}
	opts := b[bootpFixed+4:]
	for i := 0; i < len(opts); {
		code := opts[i]
		switch code {
		case optPad:
			i++
			continue
		case optEnd:
			return l, nil
		}
		if i+1 >= len(opts) || i+2+int(opts[i+1]) > len(opts) {
			return l, fmt.Errorf("option %d runs past the end of the message", code)
		}
		val := opts[i+2 : i+2+int(opts[i+1])]
		if code == optClientID && l.ClientID == nil && len(val) > 0 {
			l.ClientID = append([]byte(nil), val...)
		}
		i += 2 + len(val)
	}
	return l, nil
}

// parseDHCPv6 reads a DHCPv6 message: the type, the 3-byte transaction
// ID, then options of a 2-byte code and a 2-byte length.
func parseDHCPv6(b []byte) (DhcpcdLease, error) {
	l := DhcpcdLease{V6: true}
	if len(b) < 4 {
		return l, fmt.Errorf("%d bytes, shorter than a DHCPv6 message", len(b))
	}
	if t := b[0]; t != 7 && t != 2 { // REPLY, ADVERTISE
		return l, fmt.Errorf("message type %d, not a DHCPv6 reply", t)
	}
	opts := b[4:]
	for i := 0; i+4 <= len(opts); {
		code := int(opts[i])<<8 | int(opts[i+1])
		n := int(opts[i+2])<<8 | int(opts[i+3])
		if i+4+n > len(opts) {
			return l, fmt.Errorf("option %d runs past the end of the message", code)
		}
		if code == opt6ClientID && l.ClientID == nil && n >= minDUID && n <= maxDUID {
			l.ClientID = append([]byte(nil), opts[i+4:i+4+n]...)
		}
		i += 4 + n
	}
	return l, nil
}

// Package dhcplease parses the files in which a guest's DHCP clients keep
// the identity they present to a DHCP server: ISC dhclient's lease files
// (dhclient.leases, dhclient6.leases, NetworkManager's dhclient-*.lease),
// systemd-networkd's lease files (/run/systemd/netif/leases/N, and the
// same format in NetworkManager's internal-*.lease) and dhcpcd's DUID
// file. Each is a pure function of bytes; values come back as bytes, and
// Hex writes them the way guestcheck reports them.
package dhcplease

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Dhclient is what identifies the client in one dhclient lease file.
type Dhclient struct {
	// DefaultDUID is the file's default-duid (dhclient -6 keeps its DUID
	// there), nil when absent; DUIDLine is its line.
	DefaultDUID []byte
	DUIDLine    int
	// Leases are the lease and lease6 blocks in file order (dhclient
	// appends, so the last one per interface is the newest).
	Leases []Lease
}

// Lease is one lease or lease6 block.
type Lease struct {
	V6        bool   // a lease6 block
	Line      int    // of the block's opening
	Interface string // interface "NAME"; "" when the block does not say
	// ClientID is option dhcp-client-identifier (lease) or
	// dhcp6.client-id (lease6), nil when absent; ClientIDLine its line.
	ClientID     []byte
	ClientIDLine int
	// Address is fixed-address, the leased IPv4 address; Routers and DNS
	// are option routers and option domain-name-servers. network-config
	// compares them with the kernel's.
	Address netip.Addr
	Routers []netip.Addr
	DNS     []netip.Addr
}

// Last returns the lease in force for iface: the last block for it,
// since dhclient appends each lease it gets; ok is false when the file
// holds none for iface.
func (d Dhclient) Last(iface string) (l Lease, ok bool) {
	for i := len(d.Leases) - 1; i >= 0; i-- {
		if d.Leases[i].Interface == iface {
			return d.Leases[i], true
		}
	}
	return Lease{}, false
}

// maxDepth bounds the nesting of blocks (lease6 holds ia-na, which holds
// iaaddr: three deep in real files).
const maxDepth = 16

// ParseDhclient parses a dhclient lease file (dhclient.leases(5)). Only
// the statements that identify the client are kept; every other
// statement is skipped by its syntax. Bad syntax is a problem at its
// line, and parsing stops at an unterminated string.
func ParseDhclient(name string, b []byte) (Dhclient, []problem.Problem) {
	toks, probs := lex(name, b)
	// After a problem that ends the input, its end is no further problem.
	p := &dhParser{name: name, toks: toks, probs: probs, stopped: len(probs) > 0}
	p.block(0, nil, 0)
	return p.out, p.probs
}

type dhParser struct {
	name  string
	toks  []token
	pos   int
	out   Dhclient
	probs []problem.Problem
	// stopped is set when parsing gave up before the end of the input.
	stopped bool
}

// block parses statements until the '}' that closes it (depth > 0; it
// opened at line opened) or the end of input (depth 0). Statements
// inside lease blocks fill l.
func (p *dhParser) block(depth int, l *Lease, opened int) {
	for p.pos < len(p.toks) {
		start := p.pos
		for p.pos < len(p.toks) && !p.toks[p.pos].punct() {
			p.pos++
		}
		words := p.toks[start:p.pos]
		if p.pos == len(p.toks) {
			if len(words) > 0 && !p.stopped {
				p.bad(words[0].line, "statement %s has no ';'", quoteTok(words[0]))
			}
			break
		}
		end := p.toks[p.pos]
		p.pos++
		switch end.kind {
		case ';':
			if len(words) > 0 {
				p.statement(depth, l, words)
			}
		case '}':
			if len(words) > 0 {
				p.bad(words[0].line, "statement %s has no ';'", quoteTok(words[0]))
			}
			if depth == 0 {
				p.bad(end.line, "'}' closes no block")
				continue
			}
			return
		case '{':
			p.open(depth, l, words, end)
		}
	}
	if depth > 0 && !p.stopped {
		p.bad(opened, "the block opened here is not closed")
	}
}

// open parses a block whose '{' was just read.
func (p *dhParser) open(depth int, l *Lease, words []token, brace token) {
	if depth+1 > maxDepth {
		p.bad(brace.line, "blocks nested more than %d deep", maxDepth)
		p.pos, p.stopped = len(p.toks), true
		return
	}
	kw := ""
	if len(words) > 0 && words[0].kind == 'w' {
		kw = words[0].text
	}
	if depth == 0 && (kw == "lease" || kw == "lease6") {
		nl := Lease{V6: kw == "lease6", Line: brace.line}
		p.block(depth+1, &nl, brace.line)
		p.out.Leases = append(p.out.Leases, nl)
		return
	}
	// Inner blocks (ia-na, iaaddr) hold per-address options, not the
	// client's identity.
	p.block(depth+1, nil, brace.line)
}

// statement takes one statement of interest.
func (p *dhParser) statement(depth int, l *Lease, w []token) {
	kw := w[0].text
	switch {
	case depth == 0 && w[0].kind == 'w' && kw == "default-duid":
		if v, ok := p.value(w, 1, "default-duid"); ok {
			p.out.DefaultDUID, p.out.DUIDLine = v, w[0].line
		}
	case l != nil && w[0].kind == 'w' && kw == "interface":
		if len(w) != 2 || w[1].kind != 's' {
			p.bad(w[0].line, "interface wants one quoted name")
			return
		}
		l.Interface = w[1].text
	case l != nil && w[0].kind == 'w' && kw == "fixed-address" && len(w) == 2:
		l.Address, _ = netip.ParseAddr(w[1].text)
	case l != nil && w[0].kind == 'w' && kw == "option" && len(w) > 2 && (w[1].text == "routers" || w[1].text == "domain-name-servers"):
		var words []string
		for _, t := range w[2:] {
			words = append(words, t.text)
		}
		if as := AddrList(strings.Join(words, " ")); w[1].text == "routers" {
			l.Routers = as
		} else {
			l.DNS = as
		}
	case l != nil && w[0].kind == 'w' && kw == "option" && len(w) > 1 && isClientIDOption(w[1].text, l.V6):
		if v, ok := p.value(w, 2, "option "+w[1].text); ok {
			l.ClientID, l.ClientIDLine = v, w[0].line
		}
	}
}

// AddrList reads the addresses of a list as DHCP clients write them,
// separated by blanks, commas or semicolons; other words are skipped.
func AddrList(s string) []netip.Addr {
	var out []netip.Addr
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == ';' || r == '\t' }) {
		if a, err := netip.ParseAddr(w); err == nil {
			out = append(out, a)
		}
	}
	return out
}

func isClientIDOption(name string, v6 bool) bool {
	if v6 {
		return name == "dhcp6.client-id"
	}
	return name == "dhcp-client-identifier"
}

// value decodes the one value at w[i]: a quoted string (dhclient writes
// printable data that way) or colon-separated hexadecimal bytes.
func (p *dhParser) value(w []token, i int, what string) ([]byte, bool) {
	if len(w) != i+1 {
		p.bad(w[0].line, "%s wants one value, has %d", what, len(w)-i)
		return nil, false
	}
	t := w[i]
	if t.kind == 's' {
		if t.text == "" {
			p.bad(t.line, "%s is empty", what)
			return nil, false
		}
		return []byte(t.text), true
	}
	v, err := ParseHex(t.text)
	if err != nil {
		p.bad(t.line, "%s %s: %v", what, strconv.Quote(t.text), err)
		return nil, false
	}
	return v, true
}

func (p *dhParser) bad(line int, format string, args ...any) {
	p.probs = append(p.probs, problem.At(p.name, line, format, args...))
}

// ParseHex decodes colon-separated hexadecimal bytes of one or two digits
// each ("1:52:54:0:12:34:56", as dhclient prints them, or
// "00:01:00:01:...", as dhcpcd does).
func ParseHex(s string) ([]byte, error) {
	if s == "" {
		return nil, fmt.Errorf("no bytes")
	}
	parts := strings.Split(s, ":")
	out := make([]byte, len(parts))
	for i, x := range parts {
		if len(x) == 0 || len(x) > 2 {
			return nil, fmt.Errorf("byte %d is not one or two hexadecimal digits", i+1)
		}
		n, err := strconv.ParseUint(x, 16, 8)
		if err != nil {
			return nil, fmt.Errorf("byte %d is not hexadecimal", i+1)
		}
		out[i] = byte(n)
	}
	return out, nil
}

// Hex writes b as lower-case hexadecimal bytes separated by colons, the
// one form guestcheck reports DHCP identities in.
func Hex(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.Grow(3 * len(b))
	for i, c := range b {
		if i > 0 {
			sb.WriteByte(':')
		}
		sb.WriteString(hex.EncodeToString([]byte{c}))
	}
	return sb.String()
}

package guestid

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	iofs "io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
	"github.com/guestcheck/guestcheck/internal/fact/netconf"
	"github.com/guestcheck/guestcheck/internal/parse/dhcplease"
	"github.com/guestcheck/guestcheck/internal/parse/netplan"
	"github.com/guestcheck/guestcheck/internal/parse/networkd"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Kinds of DHCPClient.
const (
	KindDUID     = "duid"
	KindClientID = "client-id"
)

// Where DHCP clients keep the identity they present, from the catalogue.
var (
	// DhclientDir holds ISC dhclient's dhclient*.leases (Debian's path).
	DhclientDir = catalogue.Lookup(catalogue.DhclientLeases).Dirs()[0].Path
	// NetworkdLeaseDir holds systemd-networkd's DHCPv4 leases, one file
	// per interface index (on the running system only).
	NetworkdLeaseDir = catalogue.Lookup(catalogue.NetworkdLeases).Dirs()[0].Path
	// NMLeaseDir holds NetworkManager's dhclient-*.lease and
	// internal-*.lease files.
	NMLeaseDir = catalogue.Lookup(catalogue.NMLeases).Dirs()[0].Path
	// WickedDUIDPath is wicked's DUID map (SUSE).
	WickedDUIDPath = catalogue.Lookup(catalogue.WickedDUID).Files()[0]
)

const sysClassNet = "/sys/class/net"

// DhcpcdDUIDPaths are dhcpcd's DUID files: /etc/dhcpcd.duid up to
// dhcpcd 6, DBDIR/duid since dhcpcd 7 (dhcpcd(8) FILES), DBDIR as the
// distributions build it and by default (identity.DhcpcdDUIDPaths).
var DhcpcdDUIDPaths = identity.DhcpcdDUIDPaths

// dhclientKnown are the lease files dhclient uses without an interface in
// their name: what Read tries when DhclientDir cannot be listed.
var dhclientKnown = []string{"dhclient.leases", "dhclient6.leases"}

// dhcpClients fills the DHCP client identities: from every client's
// state files, and the DUID systemd-networkd derives from the machine ID
// when it is configured to and has no lease to show yet.
func (rd *reader) dhcpClients(f netconf.Facts, machineID string, live bool) {
	rd.dhclientFiles()
	rd.dhcpcdDUID()
	rd.dhcpcdLeases()
	rd.wickedDUID()
	rd.wickedLeases()
	rd.nmLeases()
	if live && rd.networkdLeases() {
		return
	}
	rd.networkdDerived(f, machineID)
}

func (rd *reader) addDHCP(kind string, v []byte, source, iface string) {
	c := DHCPClient{Kind: kind, Value: dhcplease.Hex(v), Source: source, Interface: iface}
	for _, x := range rd.id.DHCPClients {
		if x.Kind == c.Kind && x.Value == c.Value && x.Interface == c.Interface {
			return
		}
	}
	rd.id.DHCPClients = append(rd.id.DHCPClients, c)
}

// problems notes a state file's parse problems: the first, and how many
// more there are.
func (rd *reader) problems(ps []problem.Problem) {
	if len(ps) == 0 {
		return
	}
	msg := ps[0].String()
	if len(ps) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(ps)-1)
	}
	rd.unread(ItemDHCPClient, msg)
}

// dhclientFiles reads dhclient's lease files in each of the catalogue's
// directories (Debian's, Red Hat's, the BSD default), or in DhclientDir
// the two known names when it cannot be listed.
func (rd *reader) dhclientFiles() {
	for _, pl := range catalogue.Lookup(catalogue.DhclientLeases).Dirs() {
		es, err := rd.r.ReadDir(pl.Path)
		var names []string
		switch {
		case err == nil:
			for _, e := range es {
				if ok, _ := path.Match(pl.Match, e.Name); !e.IsDir() && (pl.Match == "" || ok) {
					names = append(names, e.Name)
				}
			}
		case errors.Is(err, iofs.ErrNotExist):
			continue
		default:
			rd.unread(ItemDHCPClient, "cannot list "+fs.ErrorText(pl.Path, err))
			if pl.Path == DhclientDir {
				names = dhclientKnown
			}
		}
		for _, n := range names {
			rd.dhclientFile(path.Join(pl.Path, n), "")
		}
	}
}

// dhclientFile takes a dhclient lease file's DUID and, per interface and
// family, the client identifier of its newest lease. iface names the
// interface when the file's name does (NetworkManager's).
func (rd *reader) dhclientFile(p, iface string) {
	b, ok := rd.readFile(ItemDHCPClient, p, maxLeaseFile)
	if !ok {
		return
	}
	d, probs := dhcplease.ParseDhclient(p, b)
	rd.problems(probs)
	if d.DefaultDUID != nil {
		rd.addDHCP(KindDUID, d.DefaultDUID, at(p, d.DUIDLine), iface)
	}
	type key struct {
		iface string
		v6    bool
	}
	newest := map[key]dhcplease.Lease{}
	var order []key
	for _, l := range d.Leases {
		if l.ClientID == nil {
			continue
		}
		k := key{l.Interface, l.V6}
		if _, seen := newest[k]; !seen {
			order = append(order, k)
		}
		newest[k] = l
	}
	for _, k := range order {
		l := newest[k]
		if l.V6 && bytes.Equal(l.ClientID, d.DefaultDUID) {
			continue // the DUID again
		}
		kind := KindClientID
		if l.V6 {
			kind = KindDUID
		}
		rd.addDHCP(kind, l.ClientID, at(p, l.ClientIDLine), firstOf(l.Interface, iface))
	}
}

// dhcpcdDUID reads dhcpcd's DUID file.
func (rd *reader) dhcpcdDUID() {
	for _, p := range DhcpcdDUIDPaths {
		b, ok := rd.readFile(ItemDHCPClient, p, maxSmallFile)
		if !ok {
			continue
		}
		d, probs := dhcplease.ParseDUIDFile(p, b)
		rd.problems(probs)
		if d != nil {
			rd.addDHCP(KindDUID, d, p, "")
		}
	}
}

// dhcpcdLeases reads dhcpcd's lease files, in every directory the
// catalogue names: each is the server's last reply, which echoes the
// identifier the client presented (DHCPv6's client DUID; DHCPv4 option
// 61 only from a server that follows RFC 6842, which dnsmasq does not:
// dhcpcd's DUID file names such a client). A file that is no DHCP
// message is noted, not guessed at.
func (rd *reader) dhcpcdLeases() {
	for _, pl := range catalogue.Lookup(catalogue.DhcpcdLeases).Dirs() {
		for _, e := range rd.listDir(ItemDHCPClient, pl.Path) {
			if ok, _ := path.Match(pl.Match, e.Name); !ok || e.Kind != fs.KindRegular {
				continue
			}
			p := path.Join(pl.Path, e.Name)
			b, ok := rd.readFile(ItemDHCPClient, p, maxLeaseFile)
			if !ok {
				continue
			}
			v6 := strings.HasSuffix(e.Name, ".lease6")
			l, err := dhcplease.ParseDhcpcdLease(b, v6)
			switch {
			case err != nil:
				rd.unread(ItemDHCPClient, p+": not a dhcpcd lease: "+err.Error())
			case l.ClientID == nil:
			case v6:
				rd.addDHCP(KindDUID, l.ClientID, p, "")
			default:
				rd.addDHCP(KindClientID, l.ClientID, p, "")
			}
		}
	}
}

// duidToken is a DUID as wicked writes it in duid.xml: colon-separated
// hex bytes, at least the 2-byte type and a 2-byte value.
var duidToken = regexp.MustCompile(`\b[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){3,129}\b`)

// wickedDUID reads the DUIDs of wicked's duid.xml: its default and any
// per-device entry, whatever the element names, since each is a DUID
// wicked presents.
func (rd *reader) wickedDUID() {
	b, ok := rd.readFile(ItemDHCPClient, WickedDUIDPath, maxSmallFile)
	if !ok {
		return
	}
	for _, tok := range duidToken.FindAll(b, 8) {
		if v, err := hex.DecodeString(strings.ReplaceAll(string(tok), ":", "")); err == nil {
			rd.addDHCP(KindDUID, v, WickedDUIDPath, "")
		}
	}
}

// wickedClientID is a lease's <client-id> element as wicked writes it
// (lease-IFACE-dhcp-ipv4.xml, -ipv6.xml): colon-separated hex bytes, the
// DHCPv4 client ID or the DHCPv6 client DUID (wicked's
// __ni_dhcp4_lease_head_to_xml in src/dhcp4/lease.c and its dhcp6
// counterpart in src/dhcp6/lease.c, which print them with ni_print_hex
// and ni_duid_print_hex).
var wickedClientID = regexp.MustCompile(`<client-id>\s*([0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){1,129})\s*</client-id>`)

// wickedLeases reads the client identifiers of wicked's lease files: a
// DHCPv4 lease's client-id, a DHCPv6 lease's (its DUID).
func (rd *reader) wickedLeases() {
	for _, pl := range catalogue.Lookup(catalogue.WickedLeases).Dirs() {
		for _, e := range rd.listDir(ItemDHCPClient, pl.Path) {
			if ok, _ := path.Match(pl.Match, e.Name); !ok || e.Kind != fs.KindRegular || !strings.HasSuffix(e.Name, ".xml") {
				continue
			}
			p := path.Join(pl.Path, e.Name)
			b, ok := rd.readFile(ItemDHCPClient, p, maxLeaseFile)
			if !ok {
				continue
			}
			kind := KindClientID
			if strings.HasSuffix(e.Name, "-ipv6.xml") {
				kind = KindDUID
			}
			for _, m := range wickedClientID.FindAllSubmatch(b, 4) {
				if v, err := hex.DecodeString(strings.ReplaceAll(string(m[1]), ":", "")); err == nil {
					rd.addDHCP(kind, v, p, "")
				}
			}
		}
	}
}

// nmLeases reads NetworkManager's lease files: dhclient-UUID-IFACE.lease
// (and dhclient6-) in dhclient's format, internal-UUID-IFACE.lease in
// systemd-networkd's.
func (rd *reader) nmLeases() {
	for _, e := range rd.listDir(ItemDHCPClient, NMLeaseDir) {
		if e.IsDir() || !strings.HasSuffix(e.Name, ".lease") {
			continue
		}
		p := path.Join(NMLeaseDir, e.Name)
		switch {
		case strings.HasPrefix(e.Name, "dhclient"):
			rd.dhclientFile(p, nmLeaseIface(e.Name))
		case strings.HasPrefix(e.Name, "internal-"):
			rd.sdLease(p, nmLeaseIface(e.Name))
		}
	}
}

// nmLeaseIface is the interface in a NetworkManager lease file's name,
// CLIENT-UUID-IFACE.lease, "" when the name is not of that form.
func nmLeaseIface(name string) string {
	_, rest, ok := strings.Cut(strings.TrimSuffix(name, ".lease"), "-")
	if !ok || len(rest) < 38 || rest[36] != '-' {
		return ""
	}
	return rest[37:]
}

// networkdLeases reads systemd-networkd's leases, named by interface
// index, and reports whether one held a client identifier.
func (rd *reader) networkdLeases() bool {
	found := false
	var names map[string]string
	for _, e := range rd.listDir(ItemDHCPClient, NetworkdLeaseDir) {
		if e.IsDir() {
			continue
		}
		if names == nil {
			names = rd.ifaceNames()
		}
		if rd.sdLease(path.Join(NetworkdLeaseDir, e.Name), names[e.Name]) {
			found = true
		}
	}
	return found
}

// sdLease takes a lease file's CLIENTID=, and reports whether it had one.
func (rd *reader) sdLease(p, iface string) bool {
	b, ok := rd.readFile(ItemDHCPClient, p, maxSmallFile)
	if !ok {
		return false
	}
	l, probs := dhcplease.ParseSDLease(p, b)
	rd.problems(probs)
	if l.ClientID == nil {
		return false
	}
	rd.addDHCP(KindClientID, l.ClientID, at(p, l.ClientIDLine), iface)
	return true
}

// ifaceNames maps interface indexes to names from /sys/class/net, for
// networkd's lease files; empty when it cannot be listed.
func (rd *reader) ifaceNames() map[string]string {
	m := map[string]string{}
	es, _ := rd.r.ReadDir(sysClassNet)
	for _, e := range es {
		b, err := rd.r.ReadFileLimit(path.Join(sysClassNet, e.Name, "ifindex"), 64)
		if err != nil {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			m[strconv.Itoa(n)] = e.Name
		}
	}
	return m
}

// networkdDerived adds the DUID systemd-networkd presents when its
// configuration runs a DHCP client: a DUIDRawData= pinned in networkd.conf
// (every machine with the file presents it), else the DUID-EN it derives
// from the machine ID (see networkdVendorDUID).
func (rd *reader) networkdDerived(f netconf.Facts, machineID string) {
	var conf networkd.Conf
	for _, u := range f.NetworkdConf {
		if u.OK {
			conf.Apply(netconf.UnitOf(u.INI))
		}
	}
	if conf.DUIDRaw4 != "" || conf.DUIDRaw6 != "" {
		where, ok := networkdClient(f, func(netconf.INI) bool { return true })
		if !ok {
			return
		}
		for _, r := range [][2]string{{conf.DUIDType4, conf.DUIDRaw4}, {conf.DUIDType6, conf.DUIDRaw6}} {
			if d, ok := networkd.RawDUID(r[0], r[1]); ok {
				rd.addDHCP(KindDUID, d, "systemd-networkd: DUIDRawData= ("+conf.RawAt+"; "+where+")", "")
			}
		}
		return
	}
	if machineID == "" {
		return
	}
	where, ok := networkdVendorDUID(f)
	if !ok {
		return
	}
	if d, ok := NetworkdDUID(machineID); ok {
		rd.addDHCP(KindDUID, d, "systemd-networkd: DUID-EN from /etc/machine-id ("+where+")", "")
	}
}

// networkdVendorDUID reports whether systemd-networkd's configuration
// runs a DHCP client that presents a DUID (DHCPv6, or DHCPv4 without
// ClientIdentifier=mac) and derives it as systemd's DUID-EN: no
// DUIDType= but vendor and no DUIDRawData=, in networkd.conf or in the
// .network file. Any other setting makes the DUID something Read does
// not compute, so it reports none rather than a wrong one. where is the
// DHCP= (or netplan dhcp4/dhcp6) setting that runs the client.
func networkdVendorDUID(f netconf.Facts) (where string, ok bool) {
	for _, u := range f.NetworkdConf {
		if u.OK && !vendorOnly(u.INI) {
			return "", false
		}
	}
	return networkdClient(f, vendorOnly)
}

// networkdClient finds a DHCP client systemd-networkd runs that presents
// a DUID: in a .network file that unit accepts, or for a netplan device
// it renders. where is the setting that runs it.
func networkdClient(f netconf.Facts, unit func(netconf.INI) bool) (where string, ok bool) {
	for _, u := range f.Networkd {
		if !u.OK || !strings.HasSuffix(u.Path, ".network") {
			continue
		}
		n, _ := networkd.ParseNetwork(netconf.UnitOf(u.INI))
		if (n.DHCPv6() || n.DHCPv4() && n.ClientID != "mac") && unit(u.INI) {
			return n.DHCPAt, true
		}
	}
	var files []netplan.File
	for _, n := range f.Netplan {
		if n.OK {
			files = append(files, n.File)
		}
	}
	merged := netplan.Merge(files)
	for _, d := range merged.Devices {
		r := merged.Renderer
		if d.Renderer != nil {
			r = *d.Renderer
		}
		v4 := d.DHCP4 != nil && *d.DHCP4 && (d.DHCPIdentifier == nil || *d.DHCPIdentifier != "mac")
		v6 := d.DHCP6 != nil && *d.DHCP6
		if r == "networkd" && (v4 || v6) {
			return d.DHCPAt, true
		}
	}
	return "", false
}

// vendorOnly reports whether a networkd file sets no DUID but the
// default: DUIDType=vendor (or nothing) and no DUIDRawData=, in [DHCP]
// (the old name of [DHCPv4]), [DHCPv4] and [DHCPv6].
func vendorOnly(f netconf.INI) bool {
	for _, e := range f.Entries {
		if e.Section != "DHCP" && e.Section != "DHCPv4" && e.Section != "DHCPv6" {
			continue
		}
		switch e.Key {
		case "DUIDRawData":
			return false
		case "DUIDType":
			if v := strings.ToLower(strings.TrimSpace(e.Value)); v != "vendor" && v != "" {
				return false
			}
		}
	}
	return true
}

func at(p string, line int) string {
	if line <= 0 {
		return p
	}
	return p + ":" + strconv.Itoa(line)
}

func firstOf(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

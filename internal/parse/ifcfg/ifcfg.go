// Package ifcfg reads the network settings of a Red Hat or SUSE ifcfg
// file (ifcfg-NAME under /etc/sysconfig/network-scripts or
// /etc/sysconfig/network) as the network scripts and NetworkManager's
// ifcfg-rh plugin apply them: DEVICE= names the interface (else the file
// name), HWADDR= binds it to a NIC, BOOTPROTO=dhcp and DHCPV6C=yes run
// DHCP, IPADDRn with PREFIXn or NETMASKn give addresses, and VLAN=yes with
// PHYSDEV= or a "parent.ID" name makes a VLAN. It works on the file's
// variables, which the caller reads (the file is shell); parsing is pure.
package ifcfg

import (
	"fmt"
	"net"
	"net/netip"
	"path"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/netval"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Var is one variable of the file and the line that set it.
type Var struct {
	Value string
	Line  int
}

// Iface is the interface one ifcfg file configures.
type Iface struct {
	File string
	Name string      // DEVICE=, else the file name after "ifcfg-"
	At   string      // where the name is given
	MAC  *netval.MAC // HWADDR=
	// SetMAC is MACADDR=: the MAC the interface is given, whatever its own
	// ("clones" the address, ifcfg-rh); every copy of the file gives it.
	SetMAC *netval.MAC
	// Type is TYPE= in lower case ("ethernet", "bond", "bridge", "vlan"),
	// "vlan" also for VLAN=yes.
	Type      string
	VLANID    int // VLAN_ID=, else the number after the "." of the name
	VLANAt    string
	PhysDev   string // PHYSDEV=, else the name before the "."
	Master    string // MASTER= (a bond) or BRIDGE= (a bridge) this one is a port of
	DHCP4     bool   // BOOTPROTO=dhcp
	DHCP6     bool   // DHCPV6C=yes
	Addresses []netval.Prefix
	Gateways  []netval.Addr // GATEWAY=, IPV6_DEFAULTGW=
	DNS       []netval.Addr // DNS1= to DNS3=
	Domains   []netval.String
	MTU       int
	MTUAt     string
}

// Parse reads the variables of the file at file. ok is false for files
// that configure no interface of their own: loopback and aliases
// (ifcfg-eth0:1).
func Parse(file string, vars map[string]Var) (Iface, []problem.Problem, bool) {
	name := strings.TrimPrefix(path.Base(file), "ifcfg-")
	if strings.Contains(name, ":") || name == "lo" {
		return Iface{}, nil, false
	}
	r := &reader{file: file, vars: vars}
	d := Iface{File: file, Name: name, At: r.at(Var{Line: 1}), Type: "ethernet"}
	r.device(&d)
	r.vlan(&d)
	for _, k := range []string{"MASTER", "BRIDGE"} {
		if v, ok := r.val(k); ok {
			d.Master = v.Value
		}
	}
	if v, ok := r.val("BOOTPROTO"); ok && strings.EqualFold(v.Value, "dhcp") {
		d.DHCP4 = true
	}
	d.DHCP6 = yes(vars["DHCPV6C"].Value)
	r.addresses(&d)
	r.resolvers(&d)
	if v, ok := r.val("MTU"); ok {
		if n, err := strconv.Atoi(v.Value); err == nil && n >= 68 && n <= 65535 {
			d.MTU, d.MTUAt = n, r.at(v)
		} else {
			r.bad(v, "MTU "+netval.Quote(v.Value)+" is not an MTU")
		}
	}
	return d, r.probs, true
}

// reader holds one file's variables and the problems found in them.
type reader struct {
	file  string
	vars  map[string]Var
	probs []problem.Problem
}

func (r *reader) bad(v Var, msg string) {
	r.probs = append(r.probs, problem.Problem{File: r.file, Line: v.Line, Msg: msg})
}

// val returns k when it is set and not empty.
func (r *reader) val(k string) (Var, bool) { v, ok := r.vars[k]; return v, ok && v.Value != "" }

// at is "file:line" of v.
func (r *reader) at(v Var) string { return fmt.Sprintf("%s:%d", r.file, v.Line) }

// device reads the name, the MAC binding and the type.
func (r *reader) device(d *Iface) {
	if v, ok := r.val("DEVICE"); ok {
		d.Name, d.At = v.Value, r.at(v)
	}
	if v, ok := r.val("HWADDR"); ok {
		if m, err := net.ParseMAC(v.Value); err == nil {
			d.MAC = &netval.MAC{MAC: m, At: r.at(v)}
		} else {
			r.bad(v, "HWADDR "+netval.Quote(v.Value)+" is not a MAC address")
		}
	}
	if v, ok := r.val("MACADDR"); ok {
		if m, err := net.ParseMAC(v.Value); err == nil {
			d.SetMAC = &netval.MAC{MAC: m, At: r.at(v)}
		} else {
			r.bad(v, "MACADDR "+netval.Quote(v.Value)+" is not a MAC address")
		}
	}
	if v, ok := r.val("TYPE"); ok {
		d.Type = strings.ToLower(v.Value)
	}
	if yes(r.vars["VLAN"].Value) {
		d.Type = "vlan"
	}
}

// vlan reads a VLAN's parent and ID, from PHYSDEV= and VLAN_ID= or else
// from a "parent.ID" name.
func (r *reader) vlan(d *Iface) {
	if d.Type != "vlan" {
		return
	}
	if v, ok := r.val("PHYSDEV"); ok {
		d.PhysDev = v.Value
	}
	if v, ok := r.val("VLAN_ID"); ok {
		if n, err := strconv.Atoi(v.Value); err == nil && n >= 0 && n <= 4094 {
			d.VLANID, d.VLANAt = n, r.at(v)
		} else {
			r.bad(v, "VLAN_ID "+netval.Quote(v.Value)+" is not a VLAN ID (0-4094)")
		}
	} else if base, id, ok := strings.Cut(d.Name, "."); ok {
		if n, err := strconv.Atoi(id); err == nil && n >= 0 && n <= 4094 {
			d.VLANID, d.VLANAt = n, d.At
			if d.PhysDev == "" {
				d.PhysDev = base
			}
		}
	}
}

// addresses reads IPADDR, IPADDR0 to IPADDR9 (each with its PREFIX or
// NETMASK) and IPV6ADDR.
func (r *reader) addresses(d *Iface) {
	for i := -1; i < 10; i++ {
		suffix := ""
		if i >= 0 {
			suffix = strconv.Itoa(i)
		}
		a, ok := r.val("IPADDR" + suffix)
		if !ok {
			continue
		}
		bits := -1
		if v, ok := r.val("PREFIX" + suffix); ok {
			if n, err := strconv.Atoi(v.Value); err == nil && n >= 0 && n <= 32 {
				bits = n
			}
		} else if v, ok := r.val("NETMASK" + suffix); ok {
			bits = netmaskBits(v.Value)
		}
		ip, err := netip.ParseAddr(a.Value)
		if err != nil || !ip.Is4() || bits < 0 {
			r.bad(a, "IPADDR"+suffix+" "+netval.Quote(a.Value)+" has no valid address and PREFIX or NETMASK")
			continue
		}
		d.Addresses = append(d.Addresses, netval.Prefix{Prefix: netip.PrefixFrom(ip, bits), At: r.at(a)})
	}
	if v, ok := r.val("IPV6ADDR"); ok {
		if p, err := netip.ParsePrefix(v.Value); err == nil {
			d.Addresses = append(d.Addresses, netval.Prefix{Prefix: p, At: r.at(v)})
		} else {
			r.bad(v, "IPV6ADDR "+netval.Quote(v.Value)+" is not an address with a prefix length")
		}
	}
}

// resolvers reads the gateways, DNS1 to DNS3 and DOMAIN.
func (r *reader) resolvers(d *Iface) {
	for _, k := range []string{"GATEWAY", "IPV6_DEFAULTGW"} {
		if v, ok := r.val(k); ok {
			g, _, _ := strings.Cut(v.Value, "%")
			if a, err := netip.ParseAddr(g); err == nil {
				d.Gateways = append(d.Gateways, netval.Addr{Addr: a, At: r.at(v)})
			} else {
				r.bad(v, k+" "+netval.Quote(v.Value)+" is not an IP address")
			}
		}
	}
	for i := 1; i <= 3; i++ {
		k := "DNS" + strconv.Itoa(i)
		if v, ok := r.val(k); ok {
			if a, err := netip.ParseAddr(v.Value); err == nil {
				d.DNS = append(d.DNS, netval.Addr{Addr: a, At: r.at(v)})
			} else {
				r.bad(v, k+" "+netval.Quote(v.Value)+" is not an IP address")
			}
		}
	}
	if v, ok := r.val("DOMAIN"); ok {
		for _, w := range strings.Fields(v.Value) {
			d.Domains = append(d.Domains, netval.String{Value: w, At: r.at(v)})
		}
	}
}

// yes reads the scripts' booleans.
func yes(s string) bool {
	switch strings.ToLower(s) {
	case "yes", "y", "true", "on":
		return true
	}
	return false
}

// netmaskBits reads a dotted IPv4 netmask; -1 when it is none.
func netmaskBits(s string) int {
	if n, err := strconv.Atoi(s); err == nil {
		if n >= 0 && n <= 32 {
			return n
		}
		return -1
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return -1
	}
	ones, size := net.IPMask(a.AsSlice()).Size()
	if size != 32 {
		return -1
	}
	return ones
}

package netcheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v3"
)

// NetplanDevice is one device definition from netplan files. Pointer
// fields are nil when no file sets them, so that later files can be
// merged key by key, as netplan does.
type NetplanDevice struct {
	ID   string
	Kind string // "ethernets", "bonds", "bridges", "vlans", "wifis"
	// At locates the first definition ("file:line"); the *At fields
	// locate the file and line that set the key that won the merge.
	At string

	Renderer       *string
	DHCP4, DHCP6   *bool
	DHCPAt         string
	DHCPIdentifier *string
	DHCPIDAt       string
	MatchMAC       *string // match: {macaddress: ...}
	MatchMACAt     string
	MatchName      *string
	SetName        *string
}

// Name returns the interface name the device configures: set-name, else
// a literal match name, else its ID (netplan's convention without match).
func (d NetplanDevice) Name() string {
	switch {
	case d.SetName != nil:
		return *d.SetName
	case d.MatchName != nil && !strings.ContainsAny(*d.MatchName, "*?["):
		return *d.MatchName
	}
	return d.ID
}

// Netplan is one parsed netplan file.
type Netplan struct {
	File     string
	Renderer *string
	Devices  []NetplanDevice
}

var netplanDeviceKinds = []string{"ethernets", "bonds", "bridges", "vlans", "wifis", "modems", "tunnels", "vrfs"}

var yamlErrLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`) })

// ParseNetplan parses a netplan YAML file. Keys guestcheck does not judge
// are ignored; values of the wrong type, invalid YAML and a non-mapping
// "network" are problems carrying the file and line. A file with
// problems still yields the devices that could be read.
func ParseNetplan(name string, b []byte) (Netplan, []Problem) {
	np := Netplan{File: name}
	var probs []Problem
	bad := func(line int, format string, a ...any) {
		probs = append(probs, Problem{File: name, Line: line, Msg: fmt.Sprintf(format, a...)})
	}
	var doc yaml.Node
	err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&doc)
	if errors.Is(err, io.EOF) {
		return np, nil // an empty file is valid
	}
	if err != nil {
		n, msg := yamlErrorLine(b, err)
		bad(n, "invalid YAML: %s", msg)
		return np, probs
	}
	top := deref(&doc)
	if top.Kind == yaml.DocumentNode && len(top.Content) > 0 {
		top = deref(top.Content[0])
	}
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		return np, nil // a document holding only comments
	}
	if top.Kind != yaml.MappingNode {
		bad(top.Line, "top level is not a mapping")
		return np, probs
	}
	network := mapGet(top, "network")
	if network == nil {
		bad(top.Line, `no "network" key`)
		return np, probs
	}
	if network.Kind != yaml.MappingNode {
		bad(network.Line, `"network" is not a mapping`)
		return np, probs
	}
	if r := mapGet(network, "renderer"); r != nil {
		if s, ok := scalar(r); ok {
			np.Renderer = &s
		} else {
			bad(r.Line, `"renderer" is not a string`)
		}
	}
	for _, kind := range netplanDeviceKinds {
		devs := mapGet(network, kind)
		if devs == nil {
			continue
		}
		if devs.Kind != yaml.MappingNode {
			bad(devs.Line, "%q is not a mapping of devices", kind)
			continue
		}
		for i := 0; i+1 < len(devs.Content); i += 2 {
			id, val := devs.Content[i], deref(devs.Content[i+1])
			if val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
				np.Devices = append(np.Devices, NetplanDevice{ID: id.Value, Kind: kind, At: loc(name, id.Line)})
				continue
			}
			if val.Kind != yaml.MappingNode {
				bad(val.Line, "%s %q is not a mapping", kind, id.Value)
				continue
			}
			np.Devices = append(np.Devices, parseNetplanDevice(name, kind, id, val, bad))
		}
	}
	return np, probs
}

func parseNetplanDevice(file, kind string, id, n *yaml.Node, bad func(int, string, ...any)) NetplanDevice {
	d := NetplanDevice{ID: id.Value, Kind: kind, At: loc(file, id.Line)}
	str := func(key string) (*string, int) {
		v := mapGet(n, key)
		if v == nil {
			return nil, 0
		}
		s, ok := scalar(v)
		if !ok {
			bad(v.Line, "%s %q: %q is not a string", kind, id.Value, key)
			return nil, 0
		}
		return &s, v.Line
	}
	boolean := func(key string) *bool {
		v := mapGet(n, key)
		if v == nil {
			return nil
		}
		if d.DHCPAt == "" {
			d.DHCPAt = loc(file, v.Line)
		}
		s, _ := scalar(v)
		b, ok := netplanBool(s)
		if !ok || v.Kind != yaml.ScalarNode {
			bad(v.Line, "%s %q: %q must be true or false, not %s", kind, id.Value, key, quoteShort(s))
			return nil
		}
		return &b
	}
	d.Renderer, _ = str("renderer")
	d.DHCP4 = boolean("dhcp4")
	d.DHCP6 = boolean("dhcp6")
	var idLine int
	d.DHCPIdentifier, idLine = str("dhcp-identifier")
	if d.DHCPIdentifier != nil {
		d.DHCPIDAt = loc(file, idLine)
		if *d.DHCPIdentifier != "mac" && *d.DHCPIdentifier != "duid" {
			bad(idLine, "%s %q: dhcp-identifier must be mac or duid, not %s", kind, id.Value, quoteShort(*d.DHCPIdentifier))
		}
	}
	d.SetName, _ = str("set-name")
	if m := mapGet(n, "match"); m != nil {
		if m.Kind != yaml.MappingNode {
			bad(m.Line, "%s %q: \"match\" is not a mapping", kind, id.Value)
			return d
		}
		mm := &yaml.Node{Kind: yaml.MappingNode, Content: m.Content}
		if v := mapGet(mm, "macaddress"); v != nil {
			s, ok := scalar(v)
			if _, err := net.ParseMAC(s); !ok || err != nil {
				bad(v.Line, "%s %q: match macaddress %s is not a MAC address", kind, id.Value, quoteShort(s))
			} else {
				d.MatchMAC, d.MatchMACAt = &s, loc(file, v.Line)
			}
		}
		if v := mapGet(mm, "name"); v != nil {
			if s, ok := scalar(v); ok {
				d.MatchName = &s
			}
		}
	}
	return d
}

func loc(file string, line int) string { return fmt.Sprintf("%s:%d", file, line) }

// yamlErrorLine locates a YAML syntax error. The YAML library reports the
// line where the enclosing block starts, which can be far above the
// mistake; the first prefix of the file that fails with the same problem
// ends at the line that broke it, so that line is reported instead
// (small files only; larger ones keep the library's line).
func yamlErrorLine(b []byte, err error) (int, string) {
	n, msg := splitYAMLError(err)
	ls := lines(b)
	if len(ls) > maxYAMLRescan || len(b) > maxYAMLRescanBytes {
		return n, msg
	}
	var prefix []byte
	for i, l := range ls {
		prefix = append(append(prefix, l...), '\n')
		if i+1 < n {
			continue // the error cannot come before the block it is in
		}
		var doc yaml.Node
		perr := yaml.NewDecoder(bytes.NewReader(prefix)).Decode(&doc)
		if perr == nil || errors.Is(perr, io.EOF) {
			continue
		}
		if _, pmsg := splitYAMLError(perr); pmsg == msg {
			return i + 1, msg
		}
	}
	return n, msg
}

// Bounds of the rescan, which parses up to one prefix per line: real
// netplan files are a few dozen lines.
const (
	maxYAMLRescan      = 500
	maxYAMLRescanBytes = 64 << 10
)

func splitYAMLError(err error) (int, string) {
	msg := strings.ReplaceAll(strings.TrimPrefix(err.Error(), "yaml: "), "\n", " ")
	if m := yamlErrLine().FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, m[2]
	}
	return 0, msg
}

// netplanBool accepts the boolean spellings netplan accepts.
func netplanBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true", "yes", "on", "y":
		return true, true
	case "false", "no", "off", "n":
		return false, true
	}
	return false, false
}

// deref follows YAML aliases (bounded, so that a cycle cannot hang us).
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < 16; i++ {
		n = n.Alias
	}
	return n
}

// mapGet returns the value of key in mapping m, or nil; the last
// occurrence wins, as in netplan's parser.
func mapGet(m *yaml.Node, key string) *yaml.Node {
	var v *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v = deref(m.Content[i+1])
		}
	}
	return v
}

func scalar(n *yaml.Node) (string, bool) {
	if n == nil || n.Kind != yaml.ScalarNode {
		return "", false
	}
	return n.Value, true
}

// MergeNetplan merges files in netplan's order (callers pass them sorted):
// a device defined in several files takes each key from the last file
// that sets it; the last network-level renderer wins.
func MergeNetplan(files []Netplan) (renderer string, devices []NetplanDevice) {
	idx := map[string]int{}
	for _, f := range files {
		if f.Renderer != nil {
			renderer = *f.Renderer
		}
		for _, d := range f.Devices {
			k := d.Kind + "/" + d.ID
			i, ok := idx[k]
			if !ok {
				idx[k] = len(devices)
				devices = append(devices, d)
				continue
			}
			m := &devices[i]
			if d.Renderer != nil {
				m.Renderer = d.Renderer
			}
			if d.DHCP4 != nil {
				m.DHCP4 = d.DHCP4
			}
			if d.DHCP6 != nil {
				m.DHCP6 = d.DHCP6
			}
			if d.DHCPAt != "" {
				m.DHCPAt = d.DHCPAt
			}
			if d.DHCPIdentifier != nil {
				m.DHCPIdentifier, m.DHCPIDAt = d.DHCPIdentifier, d.DHCPIDAt
			}
			if d.MatchMAC != nil {
				m.MatchMAC, m.MatchMACAt = d.MatchMAC, d.MatchMACAt
			}
			if d.MatchName != nil {
				m.MatchName = d.MatchName
			}
			if d.SetName != nil {
				m.SetName = d.SetName
			}
		}
	}
	if renderer == "" {
		renderer = "networkd"
	}
	return renderer, devices
}

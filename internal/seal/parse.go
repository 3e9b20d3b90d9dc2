package seal

import (
	"bytes"
	"errors"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/envfile"
	"github.com/guestcheck/guestcheck/internal/parse/hosts"
	"github.com/guestcheck/guestcheck/internal/parse/ini"
	"github.com/guestcheck/guestcheck/internal/parse/nmconn"
	accounts "github.com/guestcheck/guestcheck/internal/parse/passwd"
)

// passwdHomes returns "/root" and then every home directory named in an
// /etc/passwd, cleaned, without duplicates. Homes that are "/" or not
// absolute are skipped: they hold no user's history. Lines getpwent(3)
// skips are skipped.
func passwdHomes(b []byte) []string {
	seen := map[string]bool{"/root": true}
	out := []string{"/root"}
	users, _ := accounts.ParsePasswd("/etc/passwd", b)
	for _, u := range users {
		if !strings.HasPrefix(u.Home, "/") {
			continue
		}
		h := path.Clean(u.Home)
		if h == "/" || seen[h] {
			continue
		}
		seen[h] = true
		out = append(out, h)
	}
	return out
}

// stripKeys removes the assignments of keys from a file that sh sources
// (an ifcfg file, /etc/sysconfig/network): every assignment envfile's
// Shell dialect finds, so also an exported one, one of several on a line
// and one whose quoted value spans lines. It is how ifcfg files lose
// their MAC and UUID pins. A line left with nothing but blanks, ';' or a
// comment goes whole; every other byte stays as it was.
func stripKeys(b []byte, keys ...string) []byte {
	as, _ := envfile.Assignments("", b)
	var cuts []span
	for i := 0; i < len(as); {
		j := i
		for j < len(as) && as[j].CmdStart == as[i].CmdStart {
			j++
		}
		cuts = append(cuts, commandCuts(b, as[i:j], keys)...)
		i = j
	}
	if len(cuts) == 0 {
		return b
	}
	var out bytes.Buffer
	done := 0
	for i := 0; i < len(cuts); {
		// The region is the whole lines the cuts touch; cuts on the same
		// or adjacent lines share one.
		from, to := lineStart(b, cuts[i].from), lineEnd(b, cuts[i].to)
		j := i + 1
		for j < len(cuts) && cuts[j].from < to {
			to = max(to, lineEnd(b, cuts[j].to))
			j++
		}
		out.Write(b[done:from])
		rest := cut(b[from:to], cuts[i:j], from)
		if t := strings.TrimLeft(strings.TrimSuffix(rest, "\n"), " \t;"); t != "" && t[0] != '#' {
			out.WriteString(rest)
		}
		done, i = to, j
	}
	out.Write(b[done:])
	return out.Bytes()
}

// span is a byte range [from, to) of a file.
type span struct{ from, to int }

// commandCuts returns what to remove of one command (its assignments,
// in order): the assignments of keys with the blanks after them, or the
// whole command when nothing but "export" would be left of it.
func commandCuts(b []byte, cmd []envfile.Assignment, keys []string) []span {
	var cuts []span
	for _, a := range cmd {
		if slices.Contains(keys, a.Name) {
			end := a.End
			for end < len(b) && (b[end] == ' ' || b[end] == '\t') {
				end++
			}
			cuts = append(cuts, span{a.Start, min(end, a.CmdEnd)})
		}
	}
	if len(cuts) == 0 {
		return nil
	}
	c := cmd[0]
	if left := strings.Trim(cut(b[c.CmdStart:c.CmdEnd], cuts, c.CmdStart), " \t;"); left == "" || left == "export" {
		return []span{{c.CmdStart, c.CmdEnd}}
	}
	return cuts
}

// cut returns b, which starts at offset base of the file, without the
// cuts (file offsets, in order, inside b).
func cut(b []byte, cuts []span, base int) string {
	var sb strings.Builder
	at := 0
	for _, c := range cuts {
		sb.Write(b[at : c.from-base])
		at = c.to - base
	}
	sb.Write(b[at:])
	return sb.String()
}

// lineStart is the offset of the start of the line holding offset i.
func lineStart(b []byte, i int) int { return bytes.LastIndexByte(b[:i], '\n') + 1 }

// lineEnd is the offset just past the newline that ends the line holding
// the byte before offset i (or the file's end).
func lineEnd(b []byte, i int) int {
	if i > 0 {
		i--
	}
	if j := bytes.IndexByte(b[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(b)
}

// splitKeepNL splits b into lines, each with its newline.
func splitKeepNL(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}

// nmMACSections are the keyfile sections whose mac-address= binds a
// NetworkManager profile to one NIC.
var nmMACSections = map[string]bool{
	"ethernet": true, "802-3-ethernet": true, "wifi": true, "802-11-wireless": true,
	"infiniband": true, "wimax": true,
}

// stripNMKeyfile drops uuid= from [connection] and mac-address= from the
// device sections of a NetworkManager keyfile. Without a uuid NM derives a
// stable one from the file name; without mac-address the profile applies
// to the clone's NIC. cloned-mac-address goes when it is an address (every
// clone would take it), and stays when it is a policy ("stable", "random").
// Everything else stays.
func stripNMKeyfile(b []byte) []byte {
	// The keyfile is read as NetworkManager reads it (GLib's key-file
	// rules: group names are case-sensitive, one assignment per line), and
	// only the lines of the identity assignments are dropped, so the rest
	// of the file stays byte for byte.
	f, _ := ini.Parse("", b, ini.GLib)
	drop := map[int]bool{}
	for _, e := range f.Entries {
		_, macErr := nmconn.ParseMAC(e.Value)
		cloned := nmMACSections[e.Section] && e.Key == "cloned-mac-address" && macErr == nil
		if (e.Section == "connection" && e.Key == "uuid") || (nmMACSections[e.Section] && e.Key == "mac-address") || cloned {
			drop[e.Line] = true
		}
	}
	var out bytes.Buffer
	for i, line := range splitKeepNL(b) {
		if !drop[i+1] {
			out.Write(line)
		}
	}
	return out.Bytes()
}

var sharedLib = regexp.MustCompile(`^libsystemd-shared-([0-9]+)(?:[.~-].*)?\.so$`)

// systemdVersion returns the systemd major version from the name of its
// private shared library ("libsystemd-shared-252.so"), or 0.
func systemdVersion(names []string) int {
	best := 0
	for _, n := range names {
		m := sharedLib.FindStringSubmatch(n)
		if m == nil {
			continue
		}
		if v, err := strconv.Atoi(m[1]); err == nil && v > best {
			best = v
		}
	}
	return best
}

// rotatedLog matches the names logrotate and friends give old logs.
var rotatedLog = regexp.MustCompile(`(\.[0-9]+(\.(gz|xz|bz2|zst|lz4))?|\.(gz|xz|bz2|zst|lz4|old)|-[0-9]{8}(\.(gz|xz|bz2|zst|lz4))?)$`)

// hostsMentions returns the lines of an /etc/hosts that name host (or a
// name under it), trimmed, lines resolvers skip included: a broken line
// meant for the template is worth pointing at too.
func hostsMentions(b []byte, host string) []string {
	if host == "" || host == "localhost" {
		return nil
	}
	entries, err := hosts.Parse(b)
	lines := map[int][]string{}
	for _, e := range entries {
		lines[e.Line] = e.Names
	}
	var he *hosts.Error
	if errors.As(err, &he) {
		for _, p := range he.Problems {
			lines[p.Line] = p.Fields[1:]
		}
	}
	raw := strings.Split(string(b), "\n")
	var out []string
	for i := range raw {
		for _, name := range lines[i+1] {
			if name == host || strings.HasPrefix(name, host+".") {
				out = append(out, strings.TrimSpace(raw[i]))
				break
			}
		}
	}
	return out
}

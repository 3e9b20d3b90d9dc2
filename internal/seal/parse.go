package seal

import (
	"bytes"
	"errors"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/guestfile/hosts"
	"github.com/guestcheck/guestcheck/internal/guestfile/ini"
	accounts "github.com/guestcheck/guestcheck/internal/guestfile/passwd"
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

// stripKeys drops shell-style KEY=value lines (optionally indented or
// exported) whose key is in keys. It is how ifcfg files lose their MAC and
// UUID pins; every other byte stays as it was.
func stripKeys(b []byte, keys ...string) []byte {
	var out bytes.Buffer
	for _, line := range splitKeepNL(b) {
		t := strings.TrimLeft(string(line), " \t")
		t = strings.TrimPrefix(t, "export ")
		drop := false
		for _, k := range keys {
			if strings.HasPrefix(t, k+"=") {
				drop = true
				break
			}
		}
		if !drop {
			out.Write(line)
		}
	}
	return out.Bytes()
}

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
// to the clone's NIC. cloned-mac-address and everything else stays.
func stripNMKeyfile(b []byte) []byte {
	// The keyfile is read as NetworkManager reads it (GLib's key-file
	// rules: group names are case-sensitive, one assignment per line), and
	// only the lines of the identity assignments are dropped, so the rest
	// of the file stays byte for byte.
	f, _ := ini.Parse("", b, ini.GLib)
	drop := map[int]bool{}
	for _, e := range f.Entries {
		if (e.Section == "connection" && e.Key == "uuid") || (nmMACSections[e.Section] && e.Key == "mac-address") {
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

package ini

import (
	"strings"
	"testing"
)

// TestParse came from netcheck's TestParseINI when the parser moved here.
func TestParse(t *testing.T) {
	in := "# networkd unit\n[Match]\nMACAddress=52:54:00:12:34:56 \\\n  52:54:00:ab:cd:ef\nName=eth0\n\n[Network]\nDHCP=yes\n; comment\nnot a pair\n[Broken\n=novalue\n[DHCPv4]\nClientIdentifier = mac\n"
	f, probs := Parse("/etc/systemd/network/20-wired.network", []byte(in), Systemd)
	want := []string{"10: expected key=value", "11: malformed section header", "12: expected key=value"}
	if len(probs) != len(want) {
		t.Fatalf("problems = %v", probs)
	}
	for i, w := range want {
		line, sub, _ := strings.Cut(w, ": ")
		if s := probs[i].String(); !strings.HasPrefix(s, "/etc/systemd/network/20-wired.network:"+line+": ") || !strings.Contains(s, sub) {
			t.Errorf("problem %q, want line %s %q", s, line, sub)
		}
	}
	// systemd turns the backslash into a space and appends the next line
	// as written (systemd-analyze verify shows "a    b" for Type=a \ + "  b").
	if e, ok := f.Get("Match", "MACAddress"); !ok || e.Value != "52:54:00:12:34:56    52:54:00:ab:cd:ef" || e.Line != 3 {
		t.Errorf("continued MACAddress = %+v", e)
	}
	if e, _ := f.Get("DHCPv4", "ClientIdentifier"); e.Value != "mac" {
		t.Errorf("ClientIdentifier = %+v", e)
	}
	if _, ok := f.Get("Network", "Nope"); ok {
		t.Error("found a key that is not there")
	}
	// GLib key files (NetworkManager, qemu-ga) have no continuation.
	f, _ = Parse("k", []byte("[a]\nx=1\\\ny=2\n"), GLib)
	if e, _ := f.Get("a", "x"); e.Value != "1\\" {
		t.Errorf("x = %q", e.Value)
	}
	_, probs = Parse("k", []byte("x=1\n"), GLib)
	if len(probs) != 1 || !strings.Contains(probs[0].Msg, "outside any [group]") {
		t.Errorf("problems = %v", probs)
	}
}

func TestSystemd(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []Entry // Section, Key, Value, Line
		probs    []int   // lines
	}{
		{name: "comment inside a continuation is skipped",
			in:   "[S]\nA=1 \\\n# no\n; no\n  2\n",
			want: []Entry{{Section: "S", Key: "A", Value: "1    2", Line: 2}}},
		{name: "comment ending in a backslash does not continue",
			in:   "[S]\n# c \\\nA=1\n",
			want: []Entry{{Section: "S", Key: "A", Value: "1", Line: 3}}},
		{name: "escaped backslash does not continue",
			in:   "[S]\nA=x\\\\\nB=y\n",
			want: []Entry{{Section: "S", Key: "A", Value: `x\\`, Line: 2}, {Section: "S", Key: "B", Value: "y", Line: 3}}},
		{name: "continuation at the end of the file",
			in:   "[S]\nA=x\\",
			want: []Entry{{Section: "S", Key: "A", Value: "x", Line: 2}}},
		{name: "empty line ends a continuation",
			in:   "[S]\nA=x\\\n\nB=y\n",
			want: []Entry{{Section: "S", Key: "A", Value: "x", Line: 2}, {Section: "S", Key: "B", Value: "y", Line: 4}}},
		{name: "byte order mark and CRLF",
			in:   "\uFEFF[S]\r\nA = b c \r\n",
			want: []Entry{{Section: "S", Key: "A", Value: "b c", Line: 2}}},
		{name: "semicolon comment, value with =",
			in:   "[S]\n;A=1\nB==x=\n",
			want: []Entry{{Section: "S", Key: "B", Value: "=x=", Line: 3}}},
		{name: "binary line", in: "[S]\nA=\x00\nB=\xff\n", probs: []int{2, 3}},
		{name: "empty section name", in: "[]\nA=1\n", probs: []int{1, 2}},
	} {
		f, probs := Parse("u", []byte(c.in), Systemd)
		if len(f.Entries) != len(c.want) {
			t.Errorf("%s: entries = %+v", c.name, f.Entries)
			continue
		}
		for i, w := range c.want {
			if e := f.Entries[i]; e.Section != w.Section || e.Key != w.Key || e.Value != w.Value || e.Line != w.Line {
				t.Errorf("%s: entry %d = %+v, want %+v", c.name, i, e, w)
			}
		}
		if len(probs) != len(c.probs) {
			t.Errorf("%s: problems = %v", c.name, probs)
			continue
		}
		for i, n := range c.probs {
			if probs[i].Line != n {
				t.Errorf("%s: problem %v, want line %d", c.name, probs[i], n)
			}
		}
	}
}

func TestGLib(t *testing.T) {
	in := "# c\n[general]\nblock-rpcs = guest-exec , guest-ping \nstatedir=/a\n  [general]  \nstatedir=/b\nhook=\\sx\\\\y\nName[de_DE.UTF-8]=x\n;k=v\n"
	f, probs := Parse("qemu-ga.conf", []byte(in), GLib)
	if len(probs) != 0 {
		t.Fatalf("problems = %v", probs)
	}
	if e, _ := f.Get("general", "block-rpcs"); e.Value != "guest-exec , guest-ping " {
		t.Errorf("value = %q (GKeyFile strips leading whitespace only)", e.Value)
	}
	if e, _ := f.Get("general", "statedir"); e.Value != "/b" || e.Line != 6 {
		t.Errorf("statedir = %+v, want the last value of the merged group", e)
	}
	if e, _ := f.Get("general", "hook"); e.Value != `\sx\\y` {
		t.Errorf("raw value = %q", e.Value)
	} else if s, err := Unescape(e.Value); err != nil || s != ` x\y` {
		t.Errorf("Unescape = %q, %v", s, err)
	}
	if _, ok := f.Get("general", "Name[de_DE.UTF-8]"); !ok {
		t.Error("locale key lost")
	}
	if _, ok := f.Get("general", ";k"); !ok {
		t.Error("';' is not a comment in GLib: ;k is a key")
	}
	for _, bad := range []string{
		"garbage\n", "key=v\n[general]\n", "[general\n", "[general]\n=x\n", "[general] x\n",
		"[]\n", "[a[b]\n", "[g]\na]=1\n", "[g]\na[b]c=1\n", "[g]\nk=\xff\n", "[g]\n;c\n",
	} {
		if _, probs := Parse("f", []byte(bad), GLib); len(probs) == 0 {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	for raw, want := range map[string]string{`a\tb\nc\rd`: "a\tb\nc\rd", `x\`: "", `\q`: "", "plain": "plain"} {
		got, err := Unescape(raw)
		if (want == "") != (err != nil) || got != want {
			t.Errorf("Unescape(%q) = %q, %v", raw, got, err)
		}
	}
}

func TestList(t *testing.T) {
	f, _ := Parse("u", []byte("[Unit]\nAfter=a\nAfter=\nAfter=b c\nAfter=d\n"), Systemd)
	l := f.List("Unit", "After")
	if len(l) != 2 || l[0].Value != "b c" || l[1].Value != "d" {
		t.Errorf("List = %+v", l)
	}
	if len(f.All("Unit", "After")) != 4 {
		t.Error("All drops entries")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("[Match]\nMACAddress=52:54:00:12:34:56 \\\n x\n[Network]\nDHCP=yes\n"), true)
	f.Add([]byte("[ethernet]\nmac-address=82;84;0;18;52;86;\n[ipv4]\nmethod=auto\n"), false)
	f.Add([]byte("[\n]\n=\\"), true)
	f.Add([]byte("[g]\nk[x]=\\s\\q\n"), false)
	f.Fuzz(func(t *testing.T, b []byte, systemd bool) {
		d := GLib
		if systemd {
			d = Systemd
		}
		file, probs := Parse("f", b, d)
		n := len(splitLines(b))
		for _, p := range probs {
			if p.Line < 1 || p.Line > n || p.File != "f" {
				t.Fatalf("problem %q outside the %d-line input", p, n)
			}
		}
		for _, e := range file.Entries {
			if e.Line < 1 || e.Line > n || e.SectionLine < 1 || e.SectionLine > e.Line || e.Key == "" || e.Section == "" {
				t.Fatalf("bad entry %+v", e)
			}
			if got, ok := file.Get(e.Section, e.Key); !ok || got.Line < e.Line {
				t.Fatalf("Get(%q, %q) = %+v, not the last", e.Section, e.Key, got)
			}
			if d == GLib {
				Unescape(e.Value)
			}
		}
	})
}

package dpkgstatus

import (
	"strings"
	"testing"
)

const status = `Package: qemu-guest-agent
Status: install ok installed
Priority: optional
Architecture: amd64
Version: 1:7.2+dfsg-7+deb12u7
Description: Guest-side qemu-system agent
 qemu-guest-agent is a daemon.

Package: tmux
Status: deinstall ok config-files
Architecture: amd64
Version: 3.3a-3

Package: mawk
Status: install ok installed
Architecture: amd64
Version: 1.3.4.20200120-3.1
Provides: awk
`

func TestParse(t *testing.T) {
	ps, probs := Parse([]byte(status))
	if len(probs) != 0 || len(ps) != 3 {
		t.Fatalf("got %d packages, problems %v", len(ps), probs)
	}
	q := Find(ps, "qemu-guest-agent")
	if len(q) != 1 || !q[0].Installed() || q[0].Version != "1:7.2+dfsg-7+deb12u7" || q[0].Line != 1 {
		t.Errorf("qemu-guest-agent = %+v", q)
	}
	if tm := Find(ps, "tmux"); len(tm) != 1 || tm[0].Installed() || tm[0].Status() != "deinstall ok config-files" {
		t.Errorf("tmux = %+v", tm)
	}
	if m := Find(ps, "mawk:amd64"); len(m) != 1 || m[0].Provides[0] != "awk" {
		t.Errorf("mawk = %+v", m)
	}
	if len(Find(ps, "mawk:arm64")) != 0 {
		t.Error("arch filter ignored")
	}
}

func TestProblems(t *testing.T) {
	_, probs := Parse([]byte("Version: 1\n\nPackage: x\nStatus: install ok\njunk\n"))
	if len(probs) != 3 || !strings.HasPrefix(probs[0].Error(), Path+":1:") {
		t.Errorf("problems = %v", probs)
	}
}

func TestVersionMatches(t *testing.T) {
	for _, tc := range []struct {
		inst, pin string
		want      bool
	}{{"1.2-1", "1.2-1", true}, {"1.2-1", "1.2-2", false}, {"1.2-1", "1.2*", true}, {"1:1.2", "1.2", false}} {
		if got := VersionMatches(tc.inst, tc.pin); got != tc.want {
			t.Errorf("VersionMatches(%q,%q) = %v", tc.inst, tc.pin, got)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(status)
	f.Add("Package: a\n b\n\n\nStatus: x y z\n")
	f.Fuzz(func(t *testing.T, s string) {
		ps, probs := Parse([]byte(s))
		for _, p := range ps {
			if p.Name == "" || p.Line < 1 {
				t.Fatalf("bad package %+v", p)
			}
		}
		for _, p := range probs {
			if strings.Contains(p.Error(), "\n") {
				t.Fatalf("multi-line problem")
			}
		}
	})
}

func TestUpstream(t *testing.T) {
	for v, want := range map[string]string{
		"1:7.2+dfsg-7+deb12u7": "7.2+dfsg", "7.2": "7.2", "2:1.0-rc1-3": "1.0-rc1", "1:2:3-4": "2:3", "": "",
	} {
		if got := (Package{Version: v}).Upstream(); got != want {
			t.Errorf("Upstream(%q) = %q, want %q", v, got, want)
		}
	}
}

package cgroup

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	in := "12:pids:/x\n4:cpu,cpuacct:/y\n1:name=systemd:/system.slice/ssh.service\n0::/a:b\n\nbad\nx::/z\n"
	got, probs := Parse([]byte(in))
	want := []Entry{
		{ID: 12, Controllers: []string{"pids"}, Path: "/x", Line: 1},
		{ID: 4, Controllers: []string{"cpu", "cpuacct"}, Path: "/y", Line: 2},
		{ID: 1, Controllers: []string{"name=systemd"}, Path: "/system.slice/ssh.service", Line: 3},
		{ID: 0, Path: "/a:b", Line: 4},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse = %+v", got)
	}
	if len(probs) != 2 || probs[0].Line != 6 || probs[1].Line != 7 {
		t.Errorf("problems = %+v", probs)
	}
}

func TestUnit(t *testing.T) {
	for in, want := range map[string]string{
		"0::/system.slice/guestcheck.service\n":                        "guestcheck.service",
		"0::/system.slice/cloud-final.service\n":                       "cloud-final.service",
		"0::/user.slice/user-0.slice/session-3.scope\n":                "session-3.scope",
		"12:pids:/x\n1:name=systemd:/system.slice/ssh.service\n0::/\n": "ssh.service",
		"12:pids:/a.service\n0::/\n":                                   "",
		"0::/system.slice/docker-0123.scope/init.scope\n":              "init.scope",
		"0::/\n":  "",
		"garbage": "",
		"0::/system.slice/system-getty.slice/getty@tty1.service/payload/extra.dir\n": "getty@tty1.service",
	} {
		es, _ := Parse([]byte(in))
		if got := Unit(es); got != want {
			t.Errorf("Unit(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("0::/system.slice/guestcheck.service\n"))
	f.Add([]byte("12:pids:/x\n1:name=systemd:/system.slice/ssh.service\n0::/\nbad\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		es, probs := Parse(b)
		lines := strings.Split(string(b), "\n")
		if len(es)+len(probs) > len(lines) {
			t.Fatalf("%d entries and %d problems from %d lines", len(es), len(probs), len(lines))
		}
		for _, p := range probs {
			if p.Line < 1 || p.Line > len(lines) || strings.Contains(p.Error(), "\n") {
				t.Fatalf("bad problem %+v", p)
			}
		}
		if u := Unit(es); u != "" && !strings.HasSuffix(u, ".service") && !strings.HasSuffix(u, ".scope") {
			t.Fatalf("Unit = %q", u)
		}
	})
}

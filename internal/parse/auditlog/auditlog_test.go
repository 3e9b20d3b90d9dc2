package auditlog

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

func TestParseLine(t *testing.T) {
	for _, c := range []struct {
		name, line string
		ok         bool
		want       AVC
	}{
		{"quoted path with a blank", `type=AVC msg=audit(1767225600.123:456): avc:  denied  { open read } for  pid=812 comm="qemu-ga" path="/my data" dev="vdb" scontext=system_u:system_r:virt_qemu_ga_t:s0 tcontext=u:o:t:s0 tclass=dir permissive=0`,
			true, AVC{Time: time.Unix(1767225600, 123000000).UTC(), Perms: []string{"open", "read"}, Comm: "qemu-ga", Path: "/my data",
				SContext: "system_u:system_r:virt_qemu_ga_t:s0", TContext: "u:o:t:s0", TClass: "dir"}},
		{"name when no path", `type=AVC msg=audit(1.5:2): avc: denied { write } for comm="x" name="y" permissive=1`,
			true, AVC{Time: time.Unix(1, 500000000).UTC(), Perms: []string{"write"}, Comm: "x", Path: "y", Permissive: true}},
		{"other record", `type=SYSCALL msg=audit(1.0:1): arch=c000003e`, false, AVC{}},
		{"granted", `type=AVC msg=audit(1.0:1): avc: granted { setenforce } for pid=1`, false, AVC{}},
		{"no timestamp", `type=AVC avc: denied { read } for comm="a"`, true, AVC{Perms: []string{"read"}, Comm: "a"}},
	} {
		got, ok := ParseLine(c.line)
		if ok != c.ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: ParseLine = %+v, %v; want %+v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestParse(t *testing.T) {
	log := "type=USER_AUTH msg=audit(1.0:1): pid=1\n" +
		`type=AVC msg=audit(2.0:2): avc: denied { open } for comm="qemu-ga" path="/x" permissive=0` + "\n" +
		`type=AVC msg=audit(bogus:3): avc: denied { read } for comm="a"` + "\n" +
		`type=AVC msg=audit(4.0:4): avc: denied for comm="b"` + "\n"
	avcs, probs := Parse([]byte(log))
	var lines []int
	for _, a := range avcs {
		lines = append(lines, a.Line)
	}
	if !slices.Equal(lines, []int{2, 3, 4}) || avcs[0].Path != "/x" || !avcs[1].Time.IsZero() {
		t.Errorf("Parse = %+v", avcs)
	}
	want := []problem.Problem{
		{Line: 3, Msg: "AVC denial without a readable msg=audit(SECONDS:SERIAL) timestamp"},
		{Line: 4, Msg: "AVC denial without a { permissions } set"},
	}
	if !reflect.DeepEqual(probs, want) {
		t.Errorf("problems %+v, want %+v", probs, want)
	}
}

func FuzzParseLine(f *testing.F) {
	f.Add(`type=AVC msg=audit(1700000000.123:42): avc:  denied  { open read } for  pid=1 comm="qemu-ga" path="/a b" dev="vda1" scontext=system_u:system_r:virt_qemu_ga_t:s0 tcontext=u:o:t:s0 tclass=file permissive=1`)
	f.Add(`type=AVC msg=audit(1.5:2): avc: denied { write } for comm="x" name="y" permissive=0`)
	f.Add(`type=SYSCALL msg=audit(1.5:2): denied `)
	f.Fuzz(func(t *testing.T, line string) {
		a, ok := ParseLine(line)
		if b, ok2 := ParseLine(line); ok != ok2 || !reflect.DeepEqual(a, b) {
			t.Fatal("not deterministic")
		}
		if !ok {
			return
		}
		if !strings.HasPrefix(line, "type=AVC ") {
			t.Fatalf("accepted a %q record", line)
		}
		// Every field is text of the line, not invented.
		for _, v := range append([]string{a.Comm, a.Path, a.SContext, a.TContext, a.TClass}, a.Perms...) {
			if !strings.Contains(line, v) {
				t.Fatalf("field %q is not in %q", v, line)
			}
		}
		for _, p := range a.Perms {
			if p == "" || strings.ContainsAny(p, " \t\n") {
				t.Fatalf("bad permission %q", p)
			}
		}
		if !a.Time.IsZero() && (a.Time.Unix() < 0 || a.Time.Unix() >= 1e12) {
			t.Fatalf("time %v out of range", a.Time)
		}
		// The log reader finds the same denial on a line of its own.
		if strings.Contains(line, "\n") {
			return
		}
		log, _ := Parse([]byte("type=USER_AUTH msg=x\n" + line + "\n"))
		a.Line = 2
		if len(log) != 1 || !reflect.DeepEqual(log[0], a) {
			t.Fatalf("Parse = %+v, ParseLine = %+v", log, a)
		}
	})
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`type=AVC msg=audit(1.5:2): avc:  denied  { open } for comm="qemu-ga" path="/x" permissive=0`))
	f.Fuzz(func(t *testing.T, b []byte) {
		avcs, probs := Parse(b)
		n := strings.Count(string(b), "\n") + 1
		for _, p := range probs {
			if p.Line < 1 || p.Line > n || !slices.ContainsFunc(avcs, func(a AVC) bool { return a.Line == p.Line }) {
				t.Fatalf("problem %+v is on no denial's line", p)
			}
		}
	})
}

package swaps

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/guestcheck/guestcheck/internal/parse/fstab"
)

func TestParse(t *testing.T) {
	in := "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/vdb                                partition\t2097148\t\t0\t\t-2\n/swap\\040file file 1024 0 -3\nbad\n/dev/x partition many 0 0\n"
	got, errs := Parse([]byte(in))
	want := []Area{{Filename: "/dev/vdb", Type: "partition", Size: 2097148}, {Filename: "/swap file", Type: "file", Size: 1024}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse = %+v", got)
	}
	if len(errs) != 2 || errs[0].Line != 4 || errs[1].Line != 5 {
		t.Errorf("errors = %+v", errs)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/vda2                               partition\t1048572\t\t0\t\t-2\n/swap\\040file file 4096 0 -3\n"))
	f.Add([]byte("/dev/x partition\n/dev/y partition 12k 0 0\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		areas, errs := Parse(b)
		lines := strings.Split(string(b), "\n")
		if len(areas)+len(errs) > len(lines) {
			t.Fatalf("%d areas and %d errors from %d lines", len(areas), len(errs), len(lines))
		}
		last := 0
		for _, e := range errs {
			if e.Line <= last || e.Line > len(lines) || strings.Contains(e.Error(), "\n") {
				t.Fatalf("bad error %+v (after line %d of %d)", e, last, len(lines))
			}
			last = e.Line
		}
		for _, a := range areas {
			if a.Type == "" || strings.ContainsFunc(a.Type, unicode.IsSpace) {
				t.Fatalf("bad type in %+v", a)
			}
			// Written back the way the kernel writes it, the area reads
			// the same (names a field split would break are left out).
			esc := fstab.Escape(a.Filename)
			if esc == "" || strings.ContainsFunc(esc, unicode.IsSpace) {
				continue
			}
			line := "Filename\tType\tSize\tUsed\tPriority\n" + esc + "\t" + a.Type + "\t" + strconv.FormatInt(a.Size, 10) + "\t0\t-2\n"
			back, errs := Parse([]byte(line))
			if len(back) != 1 || len(errs) != 0 || back[0] != a {
				t.Fatalf("%+v written as %q reads %+v, %v", a, line, back, errs)
			}
		}
	})
}

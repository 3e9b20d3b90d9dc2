package blocktest

import (
	"reflect"
	"sort"
	"strings"
	"testing"
)

// FuzzParseExport: what ParseExport reads, printed back the way blkid -o
// export prints it (specials backslash-escaped), reads the same.
func FuzzParseExport(f *testing.F) {
	f.Add("DEVNAME=/dev/loop0\nLABEL=my\\ disk\nUUID=1234-ABCD\nTYPE=vfat\n")
	f.Add("x\n=\nA=B=C\\")
	f.Fuzz(func(t *testing.T, s string) {
		m := ParseExport(s)
		keys := make([]string, 0, len(m))
		for k := range m {
			if strings.ContainsAny(k, "=\n\r") {
				return // not a name blkid prints
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			v := m[k]
			if strings.ContainsAny(v, "\n\r") {
				return
			}
			b.WriteString(k + "=")
			for i := 0; i < len(v); i++ {
				if strings.IndexByte(" \\\"'$`", v[i]) >= 0 {
					b.WriteByte('\\')
				}
				b.WriteByte(v[i])
			}
			b.WriteByte('\n')
		}
		if back := ParseExport(b.String()); !reflect.DeepEqual(back, m) {
			t.Fatalf("%v printed as %q reads %v", m, b.String(), back)
		}
	})
}

// FuzzParsePartx: one map a line that has pairs, every value as quoted.
func FuzzParsePartx(f *testing.F) {
	f.Add(`NR="1" START="2048" SECTORS="204800" TYPE="0x83" NAME="" UUID="ab-01"` + "\n" + `NR="2" START="206848"`)
	f.Add(`A="x`)
	f.Fuzz(func(t *testing.T, s string) {
		parts := ParsePartx(s)
		if len(parts) > strings.Count(s, "\n")+1 {
			t.Fatalf("%d partitions from %d lines", len(parts), strings.Count(s, "\n")+1)
		}
		for _, p := range parts {
			if len(p) == 0 {
				t.Fatal("empty partition")
			}
			for k, v := range p {
				if strings.Contains(v, `"`) || strings.Contains(v, "\n") || strings.Contains(k, "\n") || !strings.Contains(s, k) || !strings.Contains(s, `="`+v) {
					t.Fatalf("pair %q=%q is not quoted text of the input", k, v)
				}
			}
		}
	})
}

package kmod

import "testing"

// FuzzIndex: any bytes as each index file: no panic, every path kept is
// relative and stays inside the modules directory, and Resolve ends.
func FuzzIndex(f *testing.F) {
	f.Add([]byte(dep), []byte("softdep btrfs pre: crypto-crc32c\n"), []byte("alias crypto-crc32c crc32c-intel\n"))
	f.Add([]byte("a.ko: b.ko\nb.ko: a.ko\n"), []byte("softdep a pre: a\n"), []byte("alias a a\n"))
	f.Fuzz(func(t *testing.T, d, s, a []byte) {
		idx := &Index{}
		idx.ParseDep(d)
		idx.ParseSoftdep(s)
		idx.ParseAlias(a)
		idx.ParseBuiltin(d)
		for _, p := range idx.Path {
			if !validPath(p) {
				t.Fatalf("kept path %q", p)
			}
		}
		var want []string
		for n := range idx.Path {
			want = append(want, n)
		}
		for n := range idx.Alias {
			want = append(want, n)
		}
		order, _ := idx.Resolve(want)
		seen := map[string]bool{}
		for _, m := range order {
			if seen[m] {
				t.Fatalf("%s loaded twice", m)
			}
			seen[m] = true
			for _, dep := range idx.Deps[m] {
				if _, ok := idx.Path[dep]; ok && !seen[dep] && !cyclic(idx, dep, m) {
					t.Fatalf("%s before its dependency %s", m, dep)
				}
			}
		}
	})
}

// cyclic says whether dep needs m back (a cycle depmod refuses).
func cyclic(idx *Index, dep, m string) bool {
	seen := map[string]bool{}
	var walk func(n string) bool
	walk = func(n string) bool {
		if n == m {
			return true
		}
		if seen[n] {
			return false
		}
		seen[n] = true
		for _, d := range idx.Deps[n] {
			if walk(d) {
				return true
			}
		}
		return false
	}
	return walk(dep)
}

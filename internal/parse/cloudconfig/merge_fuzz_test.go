package cloudconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzMerge holds MergeMany and System to cloud-init's default merger:
// the first source wins every key it has (except that a later mapping
// replaces a string or a list), dictionaries merge key by key, a source's
// keys missing from earlier ones are added, and no input is modified.
func FuzzMerge(f *testing.F) {
	f.Add("network: {config: disabled}\nl: [a]\n", "network: {version: 2}\nl: [b]\nx: 1\n")
	f.Add("a: &x {b: {c: 1}}\nd: *x\n", "a: {b: {e: 2}, f: 3}\nd: 5\n")
	f.Add("k: ~\n", "k: {a: 1}\n")
	f.Fuzz(func(t *testing.T, sa, sb string) {
		da, err1 := Parse("a", []byte(sa))
		db, err2 := Parse("b", []byte(sb))
		if err1 != nil || err2 != nil {
			return
		}
		a, b := da.Value, db.Value
		for _, m := range []map[string]any{a, b} {
			if _, ok := m["merge_how"]; ok {
				return // a file's own merge rules; TestMergers covers them
			}
			if _, ok := m["merge_type"]; ok {
				return
			}
		}
		eq := cmpopts.EquateNaNs()
		ca, cb := deepCopy(a), deepCopy(b)
		m := MergeMany(a, b)
		if !cmp.Equal(ca, a, eq) || !cmp.Equal(cb, b, eq) {
			t.Fatal("MergeMany modified an input")
		}
		if !cmp.Equal(MergeMany(a), a, eq) || !cmp.Equal(MergeMany(a, a), a, eq) {
			t.Fatal("merging a document with itself changed it")
		}
		checkFirstWins(t, m, a, b, eq)
		// System puts the drop-in over cloud.cfg.
		if s := System(b, []map[string]any{a}); !cmp.Equal(s, m, eq) {
			t.Fatalf("System(b, [a]) = %v, MergeMany(a, b) = %v", s, m)
		}
	})
}

func checkFirstWins(t *testing.T, m, a, b map[string]any, eq cmp.Option) {
	t.Helper()
	for k, bv := range b {
		if _, ok := a[k]; !ok && !cmp.Equal(m[k], bv, eq) {
			t.Fatalf("key %q only in the second source: %v, want %v", k, m[k], bv)
		}
	}
	for k, av := range a {
		am, ok1 := av.(map[string]any)
		if bm, ok2 := b[k].(map[string]any); ok1 && ok2 {
			mm, ok := m[k].(map[string]any)
			if !ok {
				t.Fatalf("key %q: two mappings merged into %T", k, m[k])
			}
			checkFirstWins(t, mm, am, bm, eq)
			continue
		}
		want := av
		if bm, ok := b[k].(map[string]any); ok {
			switch av.(type) {
			case string, []any:
				want = bm // cloud-init's string and list mergers take a dict merged in
			}
		}
		if !cmp.Equal(m[k], want, eq) {
			t.Fatalf("key %q: %v, want %v", k, m[k], want)
		}
	}
}

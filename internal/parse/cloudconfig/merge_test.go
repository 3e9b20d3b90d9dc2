package cloudconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMergers pins a source's own merge rules (merge_how, merge_type) to
// what cloud-init 22.4's util.mergemanydict gives for the same sources.
func TestMergers(t *testing.T) {
	type m = map[string]any
	type l = []any
	for _, tc := range []struct {
		name       string
		first, add m
		want       m
	}{
		{"replace and append", m{"l": l{"b"}, "d": m{"x": 1, "l": l{"b"}}, "s": "head"},
			m{"merge_how": "dict(replace)+list(append)+str()", "l": l{"x"}, "d": m{"y": 2}},
			m{"l": l{"x"}, "d": m{"y": 2}, "s": "head"}},
		{"merge_type, recursing into strings and lists", m{"l": l{"b"}, "s": "head", "d": m{"s": "a"}},
			m{"merge_type": "list(append)+dict(recurse_str,recurse_list)+str(append)", "l": l{"x"}, "s": "tail", "d": m{"s": "b"}},
			m{"l": l{"b", "x"}, "s": "headtail", "d": m{"s": "ab"}}},
		{"allow_delete", m{"a": 1, "h": "x"}, m{"merge_how": "dict(allow_delete,no_replace)", "h": nil}, m{"a": 1}},
		{"no dict merger ignores the source", m{"a": 1}, m{"merge_how": "list(append)", "a": 2, "b": 3}, m{"a": 1}},
		{"list form", m{"l": l{m{"a": 1}, "s"}}, m{"merge_how": l{l{"dict", "replace"}, l{"list", "recurse_dict"}}, "l": l{m{"b": 2}, "t", "u"}},
			m{"l": l{m{"b": 2}, "t", "u"}}},
		{"mapping form, prepend", m{"l": l{"b"}},
			m{"merge_how": l{m{"name": "list", "settings": l{"prepend"}}, m{"name": "dict", "settings": l{"no_replace", "recurse_array"}}}, "l": l{"p"}},
			m{"l": l{"p", "b"}}},
	} {
		if d := cmp.Diff(tc.want, MergeMany(tc.first, tc.add)); d != "" {
			t.Errorf("%s (-cloud-init +MergeMany):\n%s", tc.name, d)
		}
	}
}

// FuzzMergers: whatever a source's merge rules say, no input is changed
// and the rules' own key is not kept.
func FuzzMergers(f *testing.F) {
	f.Add("l: [a]\nd: {x: 1}\ns: a\n", "merge_how: 'dict(replace)+list(append)+str(append)'\nl: [b]\ns: b\n")
	f.Add("l: [a, b]\n", "merge_how: [[list, no_replace], [dict, recurse_list]]\nl: x\n")
	f.Add("l: [a]\n", "merge_how: 'list(prepend)+dict(recurse_array)'\nl: {k: 1}\n")
	f.Fuzz(func(t *testing.T, sa, sb string) {
		da, err1 := Parse("a", []byte(sa))
		db, err2 := Parse("b", []byte(sb))
		if err1 != nil || err2 != nil {
			return
		}
		ca, cb := deepCopy(da.Value), deepCopy(db.Value)
		out := MergeMany(da.Value, db.Value)
		if !cmp.Equal(ca, any(da.Value)) || !cmp.Equal(cb, any(db.Value)) {
			t.Fatal("MergeMany modified an input")
		}
		if _, ok := out["merge_how"]; ok {
			t.Fatalf("merge_how kept: %v", out)
		}
	})
}

package runner

import "testing"

func TestDetail(t *testing.T) {
	base := map[string]string{"a": "1"}
	d := Detail(base, "b", "2", "c", "", "a", "3")
	if len(base) != 1 || base["a"] != "1" {
		t.Fatalf("base changed: %v", base)
	}
	if len(d) != 2 || d["a"] != "3" || d["b"] != "2" {
		t.Fatalf("Detail = %v", d)
	}
	if d := Detail(nil); d == nil || len(d) != 0 {
		t.Fatalf("Detail(nil) = %v", d)
	}
}

// codesOf declares codes by ID alone, for checks made up by tests.
func codesOf(ids ...string) []Code {
	out := make([]Code, len(ids))
	for i, id := range ids {
		out[i] = Code{ID: id}
	}
	return out
}

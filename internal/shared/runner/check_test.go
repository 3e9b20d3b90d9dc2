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

// TestCodeFix: placeholders fill, show as metavariables, match back, and
// braces of udev, shell and YAML in a fix stay as written.
func TestCodeFix(t *testing.T) {
	c := Code{ID: "x-bad", Fix: "Add `ATTR{online}=\"1\"` for ${USER} to {path} at line {line}: `{to: default}`.", RootFix: "Edit {path} in the image."}
	if got := c.Fixf("path", "/etc/x", "line", "3"); got != "Add `ATTR{online}=\"1\"` for ${USER} to /etc/x at line 3: `{to: default}`." {
		t.Errorf("Fixf = %q", got)
	}
	if got := Metavars(c.Fix); got != "Add `ATTR{online}=\"1\"` for ${USER} to PATH at line LINE: `{to: default}`." {
		t.Errorf("Metavars = %q", got)
	}
	if got := Placeholders(c.Fix); len(got) != 2 || got[0] != "path" || got[1] != "line" {
		t.Errorf("Placeholders = %q", got)
	}
	if !c.Matches(c.FixOn(false, "path", "/a b")) || !c.Matches(c.Fixf("path", "p", "line", "9")) || c.Matches("Edit it.") {
		t.Error("Matches")
	}
	if got := (Code{Fix: "{a}{b_c}"}).Fixf("a", "1"); got != "1B-C" {
		t.Errorf("adjacent placeholders: %q", got)
	}
}

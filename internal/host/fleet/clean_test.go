package fleet

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/guestcheck/guestcheck/internal/shared/clean"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// dirtyStrings lists the strings v holds that CleanText would change,
// and counts them all.
func dirtyStrings(v reflect.Value, dirty *[]string) int {
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); clean.Text(s) != s {
			*dirty = append(*dirty, s)
		}
		return 1
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return 0
		}
		return dirtyStrings(v.Elem(), dirty)
	case reflect.Struct:
		n := 0
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				n += dirtyStrings(v.Field(i), dirty)
			}
		}
		return n
	case reflect.Slice, reflect.Array:
		n := 0
		for i := range v.Len() {
			n += dirtyStrings(v.Index(i), dirty)
		}
		return n
	case reflect.Map:
		n := 0
		for it := v.MapRange(); it.Next(); {
			n += dirtyStrings(it.Key(), dirty) + dirtyStrings(it.Value(), dirty)
		}
		return n
	}
	return 0
}

// checkShown fails t for what out, a renderer's output, would show on a
// terminal: a byte that is not UTF-8, a control character but the
// line ends, a bidi character, a line break that came with the text, or
// a character reference XML would turn back into a control character.
func checkShown(t *testing.T, format string, out []byte) {
	t.Helper()
	if !utf8.Valid(out) {
		t.Errorf("%s: not UTF-8", format)
	}
	for _, r := range string(out) {
		if r != '\n' && clean.Rune(r) != r {
			t.Errorf("%s: %U in the output", format, r)
			break
		}
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "INJECTED") {
			t.Errorf("%s: a line break from the input reached the output: %q", format, line)
			break
		}
	}
	for _, esc := range []string{`\n`, `\r`, `\t`, `\u`, `&#x`, `&#1`, `&#2`, `&#3`, `&#9`} {
		if bytes.Contains(out, []byte(esc)) {
			t.Errorf("%s: %s in the output: an escaped control character", format, esc)
		}
	}
	if !bytes.Contains(out, []byte("INJECTED")) {
		t.Errorf("%s: the hostile text is not in the output at all: nothing was tested", format)
	}
}

// TestEveryStringIsCleaned: a survey whose every string field, every VM
// report's included, carries escapes, C0 and C1 controls, bidi
// overrides and line breaks, renders in every format with none of them;
// the JSON output decodes to as many strings as were set, all clean.
func TestEveryStringIsCleaned(t *testing.T) {
	var r Result
	n := testenv.FillHostile(&r)
	if n < 50 {
		t.Fatalf("only %d strings set: the walk missed the report", n)
	}
	for _, format := range Formats {
		var b bytes.Buffer
		if err := Render(&b, r, format); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		checkShown(t, format, b.Bytes())
		if format != FormatJSON {
			continue
		}
		var back Result
		if err := json.Unmarshal(b.Bytes(), &back); err != nil {
			t.Fatal(err)
		}
		var dirty []string
		if got := dirtyStrings(reflect.ValueOf(back), &dirty); got != n || len(dirty) > 0 {
			t.Errorf("JSON: %d strings back of %d set; not clean: %q", got, n, dirty)
		}
	}
	// The survey itself is not written: it may be rendered again.
	var dirty []string
	if dirtyStrings(reflect.ValueOf(r), &dirty); len(dirty) != n {
		t.Errorf("rendering changed the survey: %d of %d strings still as set", len(dirty), n)
	}
}

// TestMergedNamesAreCleaned: the names, hosts and reports of a survey
// file reach every output of a merge cleaned, the text of the
// collisions they make ("shares machine-id with NAME") included, and
// each report copied from its file too.
func TestMergedNamesAreCleaned(t *testing.T) {
	a, b := twoHosts(t)
	raw, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	esc, _ := json.Marshal(testenv.Hostile)
	in := strings.TrimSuffix(strings.TrimPrefix(string(esc), `"`), `"`)
	for _, field := range []string{`"vm-bravo`, `"hv-b`, `"hostname is ` + string(runner.Pass)} {
		if !bytes.Contains(raw, []byte(field)) {
			t.Fatalf("%s not in the survey", field)
		}
		raw = bytes.ReplaceAll(raw, []byte(field), []byte(field+in))
	}
	if err := os.WriteFile(b, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Merge([]string{a, b}, MergeOptions{HostName: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range Formats {
		var out bytes.Buffer
		if err := Render(&out, r, format); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		checkShown(t, format, out.Bytes())
		if format == FormatText && !strings.Contains(out.String(), "shares machine-id with vm-bravo"+clean.Text(testenv.Hostile)) {
			t.Errorf("text: no collision naming the cleaned VM:\n%s", out.String())
		}
	}
}

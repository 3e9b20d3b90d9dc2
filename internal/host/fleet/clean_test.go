package fleet

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// hostile holds what a guest, an API or a survey file could send to an
// operator's terminal: CSI and OSC escapes, a bell, NUL, DEL, a C1 CSI,
// NEL, line and paragraph separators, bidi overrides and isolates, line
// breaks and a byte that is not UTF-8. "INJECTED" would start a line of
// its own if a line break got through.
const hostile = "a\x1b[2Jb\x1b]8;;https://example.com/\x07c\nINJECTED\rd\x00e\x7ff\u0085g\u009b31mh\u2028i\u2029j\u202ek\u2066l\u200fm\xffn\tend"

// fillHostile sets every string v holds, at any depth, to hostile: each
// slice gets one element, each map one entry (its key hostile too when
// a string), each nil pointer a value. It returns how many strings it
// set; a field added later is filled without a change here.
func fillHostile(v reflect.Value, depth int) int {
	if depth > 12 {
		return 0
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(hostile)
		return 1
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return fillHostile(v.Elem(), depth+1)
	case reflect.Struct:
		n := 0
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				n += fillHostile(v.Field(i), depth+1)
			}
		}
		return n
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		return fillHostile(v.Index(0), depth+1)
	case reflect.Map:
		k := reflect.New(v.Type().Key()).Elem()
		e := reflect.New(v.Type().Elem()).Elem()
		n := fillHostile(k, depth+1) + fillHostile(e, depth+1)
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(k, e)
		return n
	}
	return 0
}

// dirtyStrings lists the strings v holds that CleanText would change,
// and counts them all.
func dirtyStrings(v reflect.Value, dirty *[]string) int {
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); CleanText(s) != s {
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
		if r != '\n' && cleanRune(r) != r {
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
	n := fillHostile(reflect.ValueOf(&r), 0)
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
	esc, _ := json.Marshal(hostile)
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
		if format == FormatText && !strings.Contains(out.String(), "shares machine-id with vm-bravo"+CleanText(hostile)) {
			t.Errorf("text: no collision naming the cleaned VM:\n%s", out.String())
		}
	}
}

// TestCleanText: what is kept, what becomes a space and what U+FFFD.
func TestCleanText(t *testing.T) {
	for in, want := range map[string]string{
		"web-1 ünïcode 名前":            "web-1 ünïcode 名前",
		"a\nb\r\nc\td":                "a b  c d",
		"\x1b[31mred":                 "\uFFFD[31mred",
		"\u009b31m \u0085":            "\uFFFD31m  ",
		"\u202eevil\u202c \u2067x":    "\uFFFDevil\uFFFD \uFFFDx",
		"bad\xffutf8":                 "bad\uFFFDutf8",
		"line\u2028sep\u2029par\x00n": "line sep par\uFFFDn",
	} {
		if got := CleanText(in); got != want {
			t.Errorf("CleanText(%q) = %q, want %q", in, got, want)
		}
		if got := CleanText(in); !isClean(got) {
			t.Errorf("CleanText(%q) = %q, which is not clean", in, got)
		}
	}
}

package config

import (
	"bytes"
	"errors"
	"io"
	"os"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
)

// yamlSaysEmpty is the oracle for commentOnly: the decoder finds no
// document in b (and no error).
func yamlSaysEmpty(b []byte) bool {
	var n yaml.Node
	return errors.Is(yaml.NewDecoder(bytes.NewReader(b)).Decode(&n), io.EOF)
}

// TestShippedConfigSkipsDecoder: the configuration the package installs
// is all comments, so Parse takes the shortcut, and gets what the decoder
// gets: the defaults.
func TestShippedConfigSkipsDecoder(t *testing.T) {
	b, err := os.ReadFile("../../../packaging/etc/guestcheck/guestcheck.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !commentOnly(b) {
		t.Fatal("the shipped guestcheck.yaml is not comment-only: every run decodes it")
	}
	if !yamlSaysEmpty(b) {
		t.Fatal("yaml finds a document in the shipped guestcheck.yaml")
	}
	got, err := Parse("guestcheck.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Parse("guestcheck.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("shipped config = %+v, want the defaults %+v", got, want)
	}
}

func TestCommentOnly(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"", true},
		{"\n\n", true},
		{"# a\n", true},
		{"   # indented\r\n#\ttab inside\n  \n", true},
		{"#no newline at the end", true},
		{"\t# tab before", false},
		{"\ufeff# BOM", false},
		{"---\n# x\n", false},
		{"...\n", false},
		{"a: 1 # x\n", false},
		{"# é\n", false},
		{"# nul \x00\n", false},
		{"# del \x7f\n", false},
		{"# cr\rinside\n", false},
		{"  x\n", false},
	} {
		if got := commentOnly([]byte(tc.in)); got != tc.want {
			t.Errorf("commentOnly(%q) = %v, want %v", tc.in, got, tc.want)
		}
		if tc.want && !yamlSaysEmpty([]byte(tc.in)) {
			t.Errorf("commentOnly(%q): yaml finds a document or an error", tc.in)
		}
	}
}

// FuzzCommentOnly: whatever commentOnly accepts, the decoder finds empty,
// and Parse gives the defaults as for an empty file.
func FuzzCommentOnly(f *testing.F) {
	if b, err := os.ReadFile("../../../packaging/etc/guestcheck/guestcheck.yaml"); err == nil {
		f.Add(b)
	}
	for _, s := range []string{"", "# a\n", "  #\t\r\n", "\t#", "#\x85", "a: 1"} {
		f.Add([]byte(s))
	}
	want, err := Parse("f.yaml", nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !commentOnly(b) {
			return
		}
		if !yamlSaysEmpty(b) {
			t.Fatalf("commentOnly(%q) but yaml finds a document or an error", b)
		}
		got, err := Parse("f.yaml", b)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("Parse(%q) = %+v, %v, want the defaults", b, got, err)
		}
	})
}

package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/testenv"
	"github.com/guestcheck/guestcheck/internal/testenv/docgen"
)

// The configuration file's page and the file the packages ship, generated
// from its keys (the general ones and each check's own section) by
// referenceFiles; TestGenerated holds the committed copies to them.
const (
	configPage    = "../../packaging/man/guestcheck.yaml.5"
	shippedConfig = "../../packaging/etc/guestcheck/guestcheck.yaml"
)

// TestConfigPage: groff renders guestcheck.yaml(5) without a warning,
// and it names every key.
func TestConfigPage(t *testing.T) {
	page := referenceFiles(t)[configPage]
	groff := testenv.Tool(t, "groff", "groff-base")
	cmd := exec.Command(groff, "-man", "-ww", "-Tutf8", "-rLL=100n")
	cmd.Stdin = bytes.NewReader(page)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("groff -man -ww: %v\n%s", err, stderr.String())
	}
	// Strip overstriking (bold and underline) to read the text.
	text := string(out)
	for strings.Contains(text, "\b") {
		i := strings.Index(text, "\b")
		text = text[:i-1] + text[i+1:]
	}
	for _, k := range config.Describe(runner.Sections(checks.All)...) {
		if !strings.HasSuffix(k.Path, "[]") && !strings.Contains(text, k.Path) {
			t.Errorf("guestcheck.yaml(5) lacks %s", k.Path)
		}
	}
	for _, w := range []string{"check-config", "waivers[].expires", "1h30m", "ssh.baseline.permit_root_login"} {
		if !strings.Contains(text, w) {
			t.Errorf("guestcheck.yaml(5) lacks %q", w)
		}
	}
}

// TestConfigExample: the page's example is a valid file.
func TestConfigExample(t *testing.T) {
	var lines []string
	for _, l := range strings.Split(docgen.ConfigExample, "\n") {
		lines = append(lines, strings.TrimPrefix(l, "  "))
	}
	c, err := config.Parse("example.yaml", []byte(strings.Join(lines, "\n")), runner.Sections(checks.All)...)
	if err != nil || len(c.Waivers) != 1 || c.Waivers[0].ExpiresText() != "2027-03-01" || c.CheckEnabled("dns") {
		t.Errorf("the example of guestcheck.yaml(5): %+v, %v", c, err)
	}
}

// TestConfigKeysDescribed: every key has help, every value a type, and a
// default or an example for the shipped file.
func TestConfigKeysDescribed(t *testing.T) {
	for _, k := range config.Describe(runner.Sections(checks.All)...) {
		if k.Help == "" {
			t.Errorf("%s has no help", k.Path)
		}
		if k.Leaf() != (k.Type != "") {
			t.Errorf("%s: type %q, but holds a value: %v", k.Path, k.Type, k.Leaf())
		}
		if k.Leaf() && !strings.Contains(k.Path, "[]") && k.Default == "" && k.Example == "" {
			t.Errorf("%s has neither a default nor an example for the shipped file", k.Path)
		}
	}
}

// TestShippedExamplesParse: the settings the shipped file shows commented
// out ("#key: value", "#  nested: value") form, uncommented, a valid file
// holding every section.
func TestShippedExamplesParse(t *testing.T) {
	b := referenceFiles(t)[shippedConfig]
	var yamlLines []string
	for _, l := range strings.Split(string(b), "\n") {
		if prose := strings.HasPrefix(l, "# ") && !strings.HasPrefix(l, "#  "); strings.HasPrefix(l, "#") && !prose && l != "#" {
			yamlLines = append(yamlLines, l[1:])
		}
	}
	text := strings.Join(yamlLines, "\n")
	c, err := config.Parse("guestcheck.yaml", []byte(text), runner.Sections(checks.All)...)
	if err != nil {
		t.Fatalf("the shipped examples, uncommented: %v\n%s", err, text)
	}
	if len(c.Waivers) != 1 || !c.Probe.Declared {
		t.Errorf("the shipped examples lack a waiver or the probe section: %+v", c)
	}
	for _, k := range config.Describe(runner.Sections(checks.All)...) {
		top, _, _ := strings.Cut(strings.TrimSuffix(k.Path, "[]"), ".")
		if top, _, _ = strings.Cut(top, "[]"); !strings.Contains(text, "\n"+top+":") && !strings.HasPrefix(text, top+":") {
			t.Errorf("the shipped file does not show %s", top)
		}
	}
}

// Package config reads guestcheck's YAML configuration file. Decoding is
// strict and walks the YAML node tree against the keys: the general ones
// here, and each check's own section, which the check declares beside
// itself as a Settings. A mistake is an error that names the file, the
// line and the key path in the user's words (with the keys known there),
// so a typo never silently disables an expectation. The same keys
// generate guestcheck.yaml(5) (Describe). What only the registry can judge
// (check IDs, codes of waivers) is runner.Validate's.
package config

import (
	"bytes"
	"errors"
	"io"
	iofs "io/fs"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// DefaultPath is read when --config is not given; its absence is fine.
const DefaultPath = "/etc/guestcheck/guestcheck.yaml"

// Defaults applied when the file leaves a value unset.
const (
	DefaultTimeout      = 60 * time.Second
	DefaultCheckTimeout = 5 * time.Second
)

// Config is the whole file: the general keys, and the checks' own
// sections, which each check reads through its Settings.
type Config struct {
	// source is the file the configuration came from, and lines the line
	// of each key path in it (Source, Line); empty for the built-in
	// default.
	source string
	lines  map[string]int
	// sections holds, by name, a pointer to each check's section the
	// file holds (see Settings.Of).
	sections map[string]any

	// Timeout bounds the whole run.
	Timeout time.Duration `yaml:"timeout"`
	// CheckTimeout is the default deadline of each check.
	CheckTimeout time.Duration `yaml:"check_timeout"`
	// Checks holds per-check switches and deadlines, keyed by check ID.
	Checks map[string]CheckConfig `yaml:"checks"`
	// Probe configures `guestcheck probe`; its presence declares that the
	// platform runs exec probes (see ProbeConfig).
	Probe ProbeConfig `yaml:"probe"`
	// Waivers accept single findings (see Waiver).
	Waivers []Waiver `yaml:"waivers"`
}

// CheckConfig switches one check on or off and sets its deadline.
type CheckConfig struct {
	// Enabled defaults to true; false removes the check from default runs
	// (--only still runs it).
	Enabled *bool `yaml:"enabled"`
	// Timeout overrides check_timeout for this check.
	Timeout time.Duration `yaml:"timeout"`
}

// Default returns the configuration used when no file exists.
func Default() *Config {
	return &Config{Timeout: DefaultTimeout, CheckTimeout: DefaultCheckTimeout,
		Probe: ProbeConfig{Checks: slices.Clone(DefaultProbeChecks), Timeout: DefaultProbeTimeout}}
}

// Inspect reads path, with the checks' sections secs (a missing file at
// the default path yields Default(); a missing explicitly named file is
// an error), and returns what it could decode even when the file has
// mistakes, so that a later stage (the registry's check.Validate) can
// judge the rest in the same pass. The configuration
// is nil only when the file could not be read or is not YAML.
func Inspect(path string, explicit bool, secs ...Section) (*Config, Errors) {
	b, err := os.ReadFile(path)
	if err != nil {
		if !explicit && errors.Is(err, iofs.ErrNotExist) {
			return Default(), nil
		}
		var pe *iofs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is said once, first
		}
		return nil, Errors{problem.Problem{File: path, Msg: "cannot read the configuration: " + err.Error()}}
	}
	return Decode(path, b, secs...)
}

var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)^line (\d+): (.*)$`) })

// Parse decodes a configuration file's bytes strictly and validates it,
// against the general keys and the checks' sections secs (a section not
// among them is an unknown key). name is used in error messages, which
// are one line each: "name:LINE: key.path: reason"; the error is an
// Errors holding every problem found.
func Parse(name string, b []byte, secs ...Section) (*Config, error) {
	c, probs := Decode(name, b, secs...)
	if probs != nil {
		return nil, probs
	}
	return c, nil
}

// Decode is Parse that also returns what it could decode when the file
// has mistakes (a value at fault keeps its default): every structural
// problem and every section's Issues, in line order, nil when there are
// none. The configuration is nil only for a YAML syntax error.
func Decode(name string, b []byte, secs ...Section) (*Config, Errors) {
	c := Default()
	c.source, c.lines, c.sections = name, map[string]int{}, map[string]any{}
	c.Probe.file = name
	d := &decoder{file: name, s: newSchema(secs), c: c}
	if !commentOnly(b) {
		root, probs := parseDocument(name, b)
		if probs != nil {
			return nil, probs
		}
		if root != nil {
			d.section(root, "", "", nil)
			d.finishWaivers()
		}
	}
	// Judged before the defaults fill in, which would hide an empty list.
	d.validateSections()
	c.probeDefaults()
	return c, d.sorted()
}

// parseDocument parses b as one YAML document and returns its root node,
// nil when b holds none. Syntax errors name the line in words.
func parseDocument(name string, b []byte) (*yaml.Node, Errors) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, Errors{yamlProblem(name, b, strings.TrimPrefix(err.Error(), "yaml: "))}
	}
	// A second document would be silently ignored; refuse it.
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		if len(extra.Content) > 0 {
			line = extra.Content[0].Line
		}
		if err != nil {
			return nil, Errors{yamlProblem(name, b, strings.TrimPrefix(err.Error(), "yaml: "))}
		}
		return nil, Errors{problem.At(name, line, "a second YAML document (after ---); the file must hold one")}
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// commentOnly reports whether b holds, for YAML, no document at all: every
// line empty or spaces then a comment, in printable ASCII (tabs inside
// comments). The shipped configuration is such a file, and the decoder
// took longer to scan its comments than the rest of an exec probe's
// start under emulation. Anything else (a tab or BOM before "#", other
// bytes) goes to the decoder, which then says the same or finds fault.
func commentOnly(b []byte) bool {
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		t := bytes.TrimLeft(line, " ")
		if len(t) > 0 && t[0] != '#' {
			return false
		}
		for _, c := range t {
			if c != '\t' && (c < 0x20 || c > 0x7e) {
				return false
			}
		}
	}
	return true
}

// yamlProblem is one yaml.v3 syntax message, "line N: reason" or a bare
// reason, as a problem in file name, at the line at fault and in plain
// words: a tab in the indentation, then an unclosed or unmatched bracket
// or quote (flowProblem), then yaml.v3's reason at the first line where
// the file stops parsing with it (firstBadLine), since yaml.v3 names the
// line before for some and none for others.
func yamlProblem(name string, b []byte, msg string) problem.Problem {
	n := 0
	if m := yamlLine().FindStringSubmatch(msg); m != nil {
		n, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	lines := strings.Split(string(b), "\n")
	for i := max(0, n-2); i < min(n+1, len(lines)); i++ {
		l := lines[i]
		if strings.Contains(l[:len(l)-len(strings.TrimLeft(l, " \t"))], "\t") {
			return problem.At(name, i+1, "indented with a tab; YAML indents with spaces only")
		}
	}
	if line, words, ok := flowProblem(b); ok {
		return problem.At(name, line, "%s", words)
	}
	if k := firstBadLine(b, msg); k > 0 {
		n = k
	}
	return problem.Problem{File: name, Line: n, Msg: plainYAML(msg)}
}

// plainYAML says yaml.v3's commonest complaints in the user's words.
func plainYAML(msg string) string {
	switch {
	case msg == "did not find expected key" || strings.HasPrefix(msg, "did not find expected '-'"):
		return "this line does not line up with the keys or list entries above it; indent it as its neighbours are"
	case msg == "mapping values are not allowed in this context":
		return `a ": " where no key can start; put a value that holds ": " in quotes, or indent the line as its neighbours are`
	case msg == "found character that cannot start any token":
		return "a character that cannot start a value here (such as @ or `); put the value in quotes"
	case strings.HasPrefix(msg, "did not find expected ',' or "):
		return `inside [...] or {...}, entries are separated by ","; put a value that holds ": " or "," in quotes`
	case strings.HasPrefix(msg, "unknown anchor "):
		return "*" + strings.Trim(strings.TrimSuffix(strings.TrimPrefix(msg, "unknown anchor "), " referenced"), "'") + " names no anchor defined above it; define it first with &NAME"
	}
	return msg
}

// Line is the line of a key path in the file; 0 when it is not there.
func (c *Config) Line(keyPath string) int { return c.lines[keyPath] }

// Source is the name of the file the configuration came from; "" for the
// built-in default.
func (c *Config) Source() string { return c.source }

// CheckEnabled reports whether check id runs by default.
func (c *Config) CheckEnabled(id string) bool {
	cc, ok := c.Checks[id]
	return !ok || cc.Enabled == nil || *cc.Enabled
}

// CheckTimeoutFor returns the deadline of check id.
func (c *Config) CheckTimeoutFor(id string) time.Duration {
	if cc, ok := c.Checks[id]; ok && cc.Timeout > 0 {
		return cc.Timeout
	}
	return c.CheckTimeout
}

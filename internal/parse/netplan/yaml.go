package netplan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v3"

	"github.com/guestcheck/guestcheck/internal/parse/netval"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// parser collects the problems of one file.
type parser struct {
	file  string
	probs []problem.Problem
}

func (p *parser) bad(line int, format string, a ...any) {
	p.probs = append(p.probs, problem.Problem{File: p.file, Line: line, Msg: fmt.Sprintf(format, a...)})
}

func (p *parser) at(n *yaml.Node) string { return netval.Loc(p.file, n.Line) }

// document decodes b and returns its top mapping; nil with no problem for
// an empty file or one holding only comments.
func (p *parser) document(b []byte) *yaml.Node {
	var doc yaml.Node
	err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&doc)
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		n, msg := yamlErrorLine(b, err)
		p.bad(n, "invalid YAML: %s", msg)
		return nil
	}
	top := deref(&doc)
	if top.Kind == yaml.DocumentNode && len(top.Content) > 0 {
		top = deref(top.Content[0])
	}
	if isNull(top) {
		return nil
	}
	if top.Kind != yaml.MappingNode {
		p.bad(top.Line, "top level is not a mapping")
		return nil
	}
	return top
}

var yamlErrLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`) })

// yamlErrorLine locates a YAML syntax error. The YAML library reports the
// line where the enclosing block starts, which can be far above the
// mistake; the first prefix of the file that fails with the same problem
// ends at the line that broke it, so that line is reported instead
// (small files only; larger ones keep the library's line).
func yamlErrorLine(b []byte, err error) (int, string) {
	n, msg := splitYAMLError(err)
	ls := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(ls) > maxYAMLRescan || len(b) > maxYAMLRescanBytes {
		return n, msg
	}
	var prefix []byte
	for i, l := range ls {
		prefix = append(append(prefix, strings.TrimSuffix(l, "\r")...), '\n')
		if i+1 < n {
			continue // the error cannot come before the block it is in
		}
		var doc yaml.Node
		perr := yaml.NewDecoder(bytes.NewReader(prefix)).Decode(&doc)
		if perr == nil || errors.Is(perr, io.EOF) {
			continue
		}
		if _, pmsg := splitYAMLError(perr); pmsg == msg {
			return i + 1, msg
		}
	}
	return n, msg
}

// Bounds of the rescan, which parses up to one prefix per line: real
// netplan files are a few dozen lines.
const (
	maxYAMLRescan      = 500
	maxYAMLRescanBytes = 64 << 10
)

func splitYAMLError(err error) (int, string) {
	msg := strings.ReplaceAll(strings.TrimPrefix(err.Error(), "yaml: "), "\n", " ")
	if m := yamlErrLine().FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, m[2]
	}
	return 0, msg
}

// deref follows YAML aliases (bounded, so that a cycle cannot hang us).
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < 16; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// mapGet returns the value of key in mapping m, or nil; the last
// occurrence wins, as in netplan's parser.
func mapGet(m *yaml.Node, key string) *yaml.Node {
	var v *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v = deref(m.Content[i+1])
		}
	}
	return v
}

func scalar(n *yaml.Node) (string, bool) {
	if n == nil || n.Kind != yaml.ScalarNode {
		return "", false
	}
	return n.Value, true
}

// list returns the items of a sequence; a scalar counts as a list of its
// words (cloud-init accepts both for addresses and search domains).
func (p *parser) list(n *yaml.Node, what string) []*yaml.Node {
	switch {
	case n == nil:
		return nil
	case n.Kind == yaml.SequenceNode:
		out := make([]*yaml.Node, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, deref(c))
		}
		return out
	case n.Kind == yaml.ScalarNode && !isNull(n):
		var out []*yaml.Node
		for _, f := range strings.Fields(strings.ReplaceAll(n.Value, ",", " ")) {
			out = append(out, &yaml.Node{Kind: yaml.ScalarNode, Value: f, Line: n.Line, Tag: "!!str"})
		}
		return out
	case n.Kind == yaml.ScalarNode:
		return nil
	}
	p.bad(n.Line, "%s is not a list", what)
	return nil
}

// str returns a string value; a null or missing key gives nil.
func (p *parser) str(m *yaml.Node, key, what string) (string, *yaml.Node) {
	v := mapGet(m, key)
	if v == nil || isNull(v) {
		return "", nil
	}
	s, ok := scalar(v)
	if !ok {
		p.bad(v.Line, "%s: %q is not a string", what, key)
		return "", nil
	}
	return s, v
}

// boolean reads a boolean in netplan's spellings; nil when the key is
// missing or invalid.
func (p *parser) boolean(m *yaml.Node, key, what string) (*bool, *yaml.Node) {
	v := mapGet(m, key)
	if v == nil {
		return nil, nil
	}
	s, _ := scalar(v)
	b, ok := Bool(s)
	if !ok || v.Kind != yaml.ScalarNode {
		p.bad(v.Line, "%s: %q must be true or false, not %s", what, key, netval.Quote(s))
		return nil, v
	}
	return &b, v
}

func (p *parser) integer(m *yaml.Node, key, what string, lo, hi int) (int, string) {
	s, v := p.str(m, key, what)
	if v == nil {
		return 0, ""
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		p.bad(v.Line, "%s: %q must be a number from %d to %d, not %s", what, key, lo, hi, netval.Quote(s))
		return 0, ""
	}
	return n, p.at(v)
}

// Bool reads the boolean spellings netplan accepts (and cloud-init, and
// the ifcfg and keyfile values guestcheck reads the same way).
func Bool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true", "yes", "on", "y":
		return true, true
	case "false", "no", "off", "n":
		return false, true
	}
	return false, false
}

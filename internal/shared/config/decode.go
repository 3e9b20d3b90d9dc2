package config

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
	"github.com/guestcheck/guestcheck/internal/shared/suggest"
)

// Errors is every problem found in a configuration file, in line order.
// Its Error is the first, on one line, and how many more there are;
// guestcheck check-config prints each.
type Errors []problem.Problem

func (e Errors) Error() string {
	if len(e) == 0 {
		return "no problem"
	}
	s := e[0].String()
	if len(e) > 1 {
		s += fmt.Sprintf(" (and %d more; guestcheck check-config shows all)", len(e)-1)
	}
	return s
}

// leafFunc decodes the value n of the key shown (the path as the user
// wrote it: "checks.dns.timeout", "waivers[0].code"); at holds what the
// wildcard segments stood for (the check ID).
type leafFunc func(d *decoder, n *yaml.Node, shown string, at []string)

// decoder walks a YAML node tree against a schema's keys, filling c and
// collecting problems, each at the line of the key or value at fault.
type decoder struct {
	file  string
	s     *schema
	c     *Config
	probs Errors
}

func (d *decoder) add(line int, format string, args ...any) {
	d.probs = append(d.probs, problem.At(d.file, line, format, args...))
}

// sorted returns the problems in line order, nil when there are none.
func (d *decoder) sorted() Errors {
	if len(d.probs) == 0 {
		return nil
	}
	slices.SortStableFunc(d.probs, func(a, b problem.Problem) int { return cmp.Compare(a.Line, b.Line) })
	return d.probs
}

// resolve follows an alias to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 8; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// what names a node's kind for "got ..." in a message.
func what(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.MappingNode:
		return "keys and values"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case isNull(n):
		return "nothing"
	}
	return strconv.Quote(n.Value)
}

func join(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// knownHere is the " (known here: a, b)" of a message about a section.
func knownHere(names []string) string {
	return " (known here: " + strings.Join(names, ", ") + ")"
}

// section decodes n, the value of the section at path, against the keys
// the table lists under it.
func (d *decoder) section(n *yaml.Node, path, shown string, at []string) {
	n = resolve(n)
	if k := d.s.index[path]; k != nil && k.enter != nil {
		k.enter(d, n, shown, at)
	}
	if isNull(n) {
		return // an empty section: every key keeps its default
	}
	if _, ok := d.s.index[path+"[]"]; ok {
		d.list(n, path, shown, at)
		return
	}
	names := d.s.children(path)
	if n.Kind != yaml.MappingNode {
		if shown == "" {
			d.add(n.Line, "the file holds %s; it must hold keys and values, such as timeout: 60s", what(n))
			return
		}
		if len(names) == 1 && names[0] == "ID" {
			d.add(n.Line, "%s: want check IDs with their settings, such as dns: {timeout: 5s}, got %s", shown, what(n))
			return
		}
		d.add(n.Line, "%s: want keys and values, got %s%s", shown, what(n), knownHere(names))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := resolve(n.Content[i]), n.Content[i+1]
		if kn.Kind != yaml.ScalarNode || isNull(kn) {
			d.add(kn.Line, "%s: a key must be a name, got %s", cmp.Or(shown, "the file"), what(kn))
			continue
		}
		name, sub := kn.Value, join(shown, kn.Value)
		if first, dup := seen[name]; dup {
			d.add(kn.Line, "%s: given twice (first at line %d)", sub, first)
			continue
		}
		seen[name] = kn.Line
		d.c.lines[sub] = kn.Line
		child, subAt := name, at
		switch {
		case len(names) == 1 && names[0] == "ID":
			child, subAt = "ID", append(slices.Clone(at), name)
		case !slices.Contains(names, name):
			msg := sub + ": unknown key"
			if s := suggest.Suggest(name, names); s != "" {
				msg += "; did you mean " + s + "?"
			}
			d.add(kn.Line, "%s%s", msg, knownHere(names))
			continue
		}
		full := join(path, child)
		if k := d.s.index[full]; k.decode != nil {
			k.decode(d, resolve(vn), sub, subAt)
		} else {
			d.section(vn, full, sub, subAt)
		}
	}
}

// list decodes a list of sections, each entry against path[]'s keys.
func (d *decoder) list(n *yaml.Node, path, shown string, at []string) {
	if n.Kind != yaml.SequenceNode {
		d.add(n.Line, "%s: want a list of entries (each with %s), got %s", shown, strings.Join(d.s.children(path+"[]"), ", "), what(n))
		return
	}
	for i, e := range n.Content {
		sub := fmt.Sprintf("%s[%d]", shown, i)
		d.c.lines[sub] = e.Line
		d.section(e, path+"[]", sub, at)
	}
}

// scalar returns n's value, or adds "want WANT, got ..." when n is no
// single value.
func (d *decoder) scalar(n *yaml.Node, shown, want string) (string, bool) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		d.add(n.Line, "%s: want %s, got %s", shown, want, what(n))
		return "", false
	}
	return n.Value, true
}

// parser reads a key's value, or adds what is wrong with it and returns
// false.
type parser[V any] func(d *decoder, n *yaml.Node, shown string) (V, bool)

// leaf makes a general key's decoder from a parser of its value and a
// setter.
func leaf[V any](parse parser[V], set func(c *Config, at []string, v V)) leafFunc {
	return func(d *decoder, n *yaml.Node, shown string, at []string) {
		if v, ok := parse(d, n, shown); ok {
			set(d.c, at, v)
		}
	}
}

// parseDuration reads a duration with a unit; positive refuses 0.
func parseDuration(positive bool) parser[time.Duration] {
	return func(d *decoder, n *yaml.Node, shown string) (time.Duration, bool) {
		s, ok := d.scalar(n, shown, "a duration such as 5s or 2m")
		if !ok {
			return 0, false
		}
		v, err := time.ParseDuration(s)
		_, numErr := strconv.ParseFloat(s, 64)
		switch {
		case err != nil && numErr == nil:
			d.add(n.Line, "%s: %s has no unit; write a duration such as %ss or 2m", shown, s, s)
		case err != nil:
			d.add(n.Line, "%s: %q is not a duration; write one as 30s, 5m or 1h30m", shown, s)
		case positive && v <= 0:
			d.add(n.Line, "%s: must be more than 0, got %s", shown, s)
		case v < 0:
			d.add(n.Line, "%s: must not be negative, got %s", shown, s)
		default:
			return v, true
		}
		return 0, false
	}
}

func parseBool(d *decoder, n *yaml.Node, shown string) (bool, bool) {
	s, ok := d.scalar(n, shown, "true or false")
	if !ok {
		return false, false
	}
	// YAML 1.1 writers (and people) say yes and no too.
	switch strings.ToLower(s) {
	case "true", "yes", "on":
		return true, true
	case "false", "no", "off":
		return false, true
	}
	d.add(n.Line, "%s: want true or false, got %q", shown, s)
	return false, false
}

// parseInt reads a whole number from lo to hi, described as want.
func parseInt(lo, hi int, want string) parser[int] {
	return func(d *decoder, n *yaml.Node, shown string) (int, bool) {
		s, ok := d.scalar(n, shown, "a "+want)
		if !ok {
			return 0, false
		}
		v, err := strconv.Atoi(s)
		if err != nil || n.Tag != "!!int" || v < lo || v > hi {
			d.add(n.Line, "%s: want a %s, got %q", shown, want, s)
			return 0, false
		}
		return v, true
	}
}

func parseText(d *decoder, n *yaml.Node, shown string) (string, bool) {
	return d.scalar(n, shown, "a single value")
}

// names is a list of names and the line of each.
type names struct {
	vals  []string
	lines []int
}

func parseNames(d *decoder, n *yaml.Node, shown string) (names, bool) {
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		d.add(n.Line, "%s: want a list, got one value; write [%s]", shown, n.Value)
		return names{}, false
	}
	if n.Kind != yaml.SequenceNode {
		d.add(n.Line, "%s: want a list of names, such as [a, b], got %s", shown, what(n))
		return names{}, false
	}
	out := names{vals: []string{}}
	for i, e := range n.Content {
		e = resolve(e)
		if e.Kind != yaml.ScalarNode || isNull(e) {
			d.add(e.Line, "%s[%d]: want a name, got %s", shown, i, what(e))
			return names{}, false
		}
		out.vals, out.lines = append(out.vals, e.Value), append(out.lines, e.Line)
		d.c.lines[fmt.Sprintf("%s[%d]", shown, i)] = e.Line
	}
	return out, true
}

// parseOneOf reads a value or a non-empty list of valid (YAML booleans
// are yes and no).
func parseOneOf(valid []string) parser[[]string] {
	return func(d *decoder, n *yaml.Node, shown string) ([]string, bool) {
		var items []*yaml.Node
		switch n.Kind {
		case yaml.ScalarNode:
			items = []*yaml.Node{n}
		case yaml.SequenceNode:
			items = n.Content
		default:
			d.add(n.Line, "%s: want a value or a list of %s, got %s", shown, strings.Join(valid, ", "), what(n))
			return nil, false
		}
		out := []string{}
		for _, it := range items {
			it = resolve(it)
			v := strings.ToLower(it.Value)
			switch {
			case it.Kind == yaml.ScalarNode && it.Tag == "!!bool":
				// YAML 1.1 writers (and humans) put yes/no unquoted.
				if v == "true" || v == "yes" || v == "on" {
					v = "yes"
				} else {
					v = "no"
				}
			case it.Kind != yaml.ScalarNode:
				d.add(it.Line, "%s: want one of %s, got %s", shown, strings.Join(valid, ", "), what(it))
				return nil, false
			}
			if !slices.Contains(valid, v) {
				d.add(it.Line, "%s: %q is not one of %s", shown, it.Value, strings.Join(valid, ", "))
				return nil, false
			}
			out = append(out, v)
		}
		if len(out) == 0 {
			d.add(n.Line, "%s: empty list: name at least one accepted value", shown)
			return nil, false
		}
		return out, true
	}
}

// enterCheck registers a check ID under checks:, also when its settings
// are empty, so that the ID is validated against the registry.
func enterCheck(d *decoder, _ *yaml.Node, _ string, at []string) {
	if d.c.Checks == nil {
		d.c.Checks = map[string]CheckConfig{}
	}
	if _, ok := d.c.Checks[at[0]]; !ok {
		d.c.Checks[at[0]] = CheckConfig{}
	}
}

// enterProbe notes that the file declares exec probes.
func enterProbe(d *decoder, _ *yaml.Node, _ string, _ []string) {
	d.c.Probe.Declared = true
	d.c.Probe.line = d.c.lines["probe"]
}

// enterWaiver starts a waivers entry; its keys fill it in.
func enterWaiver(d *decoder, n *yaml.Node, shown string, _ []string) {
	d.c.Waivers = append(d.c.Waivers, Waiver{Path: shown, file: d.file, line: n.Line})
}

// lastWaiver is the entry enterWaiver started last.
func lastWaiver(set func(w *Waiver, s string)) leafFunc {
	return leaf(parseText, func(c *Config, _ []string, s string) { set(&c.Waivers[len(c.Waivers)-1], s) })
}

package lvm2

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Node is one value of LVM2's config syntax: a section (Children), a
// string, an integer, or an array of strings and integers.
type Node struct {
	Name     string
	Line     int
	Children []*Node
	Str      *string
	Int      *int64
	Array    []any // string or int64
	section  bool
}

// IsSection says whether the node is a section ("name { ... }").
func (n *Node) IsSection() bool { return n.section }

// Child is the first child named name, or nil.
func (n *Node) Child(name string) *Node {
	for _, c := range n.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Bounds of a metadata text.
const (
	maxDepth = 16
	maxNodes = 200000
)

type parser struct {
	b     []byte
	i     int
	line  int
	nodes int
}

// ParseConfig parses LVM2's config syntax: "name { ... }" sections,
// "key = value" with a value that is a number, a "string" or an array
// "[ ... ]" of them, and # comments. The first problem stops it: a
// metadata text lvm2 wrote has none.
func ParseConfig(b []byte) (*Node, error) {
	p := &parser{b: b, line: 1}
	root := &Node{section: true, Line: 1}
	if err := p.body(root, 0); err != nil {
		return nil, err
	}
	return root, nil
}

func (p *parser) errf(format string, args ...any) error {
	return problem.Problem{Line: p.line, Msg: fmt.Sprintf(format, args...)}
}

// skip passes blanks and comments.
func (p *parser) skip() {
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '\n':
			p.line++
			p.i++
		case c == ' ' || c == '\t' || c == '\r':
			p.i++
		case c == '#':
			for p.i < len(p.b) && p.b[p.i] != '\n' {
				p.i++
			}
		default:
			return
		}
	}
}

func identChar(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c == '+' || c == '/' ||
		(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func (p *parser) ident() string {
	s := p.i
	for p.i < len(p.b) && identChar(p.b[p.i]) {
		p.i++
	}
	return string(p.b[s:p.i])
}

// body parses a section's contents until "}" (or the end, at depth 0).
func (p *parser) body(n *Node, depth int) error {
	if depth > maxDepth {
		return p.errf("sections nested deeper than %d", maxDepth)
	}
	for {
		p.skip()
		if p.i >= len(p.b) {
			if depth > 0 {
				return p.errf("section %q is not closed", n.Name)
			}
			return nil
		}
		if p.b[p.i] == '}' {
			if depth == 0 {
				return p.errf("a } that closes nothing")
			}
			p.i++
			return nil
		}
		if p.nodes++; p.nodes > maxNodes {
			return p.errf("more than %d values", maxNodes)
		}
		line := p.line
		name := p.ident()
		if name == "" {
			return p.errf("%q where a name was expected", p.b[p.i])
		}
		p.skip()
		if p.i >= len(p.b) {
			return p.errf("%s: nothing after the name", name)
		}
		c := &Node{Name: name, Line: line}
		switch p.b[p.i] {
		case '{':
			p.i++
			c.section = true
			if err := p.body(c, depth+1); err != nil {
				return err
			}
		case '=':
			p.i++
			if err := p.value(c); err != nil {
				return err
			}
		default:
			return p.errf("%s: %q where { or = was expected", name, p.b[p.i])
		}
		n.Children = append(n.Children, c)
	}
}

// value parses a number, a string or an array into n.
func (p *parser) value(n *Node) error {
	p.skip()
	if p.i >= len(p.b) {
		return p.errf("%s: no value", n.Name)
	}
	if p.b[p.i] != '[' {
		v, err := p.scalar()
		if err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
		switch x := v.(type) {
		case string:
			n.Str = &x
		case int64:
			n.Int = &x
		}
		return nil
	}
	p.i++
	n.Array = []any{}
	for {
		p.skip()
		if p.i >= len(p.b) {
			return p.errf("%s: the array is not closed", n.Name)
		}
		if p.b[p.i] == ']' {
			p.i++
			return nil
		}
		if len(n.Array) > 0 {
			if p.b[p.i] != ',' {
				return p.errf("%s: %q between array values", n.Name, p.b[p.i])
			}
			p.i++
			p.skip()
		}
		if p.nodes++; p.nodes > maxNodes {
			return p.errf("more than %d values", maxNodes)
		}
		v, err := p.scalar()
		if err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
		n.Array = append(n.Array, v)
	}
}

// scalar parses a "string" (with \ escapes) or a number; a float is
// kept as its integer part (lvm2 writes none in VG metadata).
func (p *parser) scalar() (any, error) {
	if p.i >= len(p.b) {
		return nil, p.errf("no value")
	}
	if p.b[p.i] == '"' {
		p.i++
		var sb strings.Builder
		for {
			if p.i >= len(p.b) {
				return nil, p.errf("a string is not closed")
			}
			c := p.b[p.i]
			p.i++
			switch c {
			case '"':
				return sb.String(), nil
			case '\\':
				if p.i < len(p.b) {
					sb.WriteByte(p.b[p.i])
					p.i++
				}
			case '\n':
				p.line++
				sb.WriteByte(c)
			default:
				sb.WriteByte(c)
			}
		}
	}
	s := p.i
	if p.i < len(p.b) && (p.b[p.i] == '-' || p.b[p.i] == '+') {
		p.i++
	}
	for p.i < len(p.b) && ((p.b[p.i] >= '0' && p.b[p.i] <= '9') || p.b[p.i] == '.') {
		p.i++
	}
	word := string(p.b[s:p.i])
	whole, _, _ := strings.Cut(word, ".")
	v, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || word == "" {
		return nil, p.errf("%q is not a number or a string", clip(p.b[s:min(len(p.b), s+20)]))
	}
	return v, nil
}

func clip(b []byte) string { return strings.ToValidUTF8(string(b), "?") }

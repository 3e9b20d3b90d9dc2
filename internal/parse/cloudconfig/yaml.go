// Package cloudconfig parses cloud-config documents (user-data, cloud.cfg
// and cloud.cfg.d) the way cloud-init reads them: YAML 1.1 scalars as
// PyYAML's SafeLoader resolves them (yes/no/on/off are booleans, 0644 is
// octal), cloud-init's own truth rules (util.translate_bool), its
// first-wins dictionary merge (util.mergemanydict), the system
// configuration with its cloud.cfg.d drop-ins, and the normalisation of
// users and groups with the distribution's default_user
// (ug_util.normalize_users_groups). Everything here is pure.
package cloudconfig

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Doc is one parsed document. Value holds map[string]any, []any, string,
// bool, int64, float64 and nil, as json.Unmarshal would, so it can be
// validated against a JSON Schema.
type Doc struct {
	Name  string
	Value map[string]any
	// lines maps key paths ("users[0].name") to their 1-based line.
	lines map[string]int
}

// Line returns the line of key path p, or 0 when unknown.
func (d *Doc) Line(p string) int {
	if d == nil {
		return 0
	}
	return d.lines[p]
}

// Error is a document that cloud-init could not load, with its line: the
// shared problem.Problem, returned as a pointer so that errors.As with a
// *cloudconfig.Error finds it, as callers have always done.
type Error = problem.Problem

// maxNodes bounds alias expansion ("billion laughs").
const maxNodes = 200000

var lineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+)`) })

// Parse reads a cloud-config document. An empty document is an empty
// map. A document whose top level is not a mapping, or a file of more
// than one document, is an error: cloud-init ignores such a file with a
// warning.
func Parse(name string, b []byte) (*Doc, error) {
	d := &Doc{Name: name, Value: map[string]any{}, lines: map[string]int{}}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return d, nil
		}
		return nil, yamlError(name, err)
	}
	// cloud-init's safe_load refuses a second document and reads none of
	// the file, so judging the first one would judge what cloud-init
	// ignores.
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{File: name, Line: extra.Line, Msg: "more than one YAML document (cloud-init reads a single one)"}
	} else if !errors.Is(err, io.EOF) {
		return nil, yamlError(name, err)
	}
	n := &root
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return d, nil
		}
		n = n.Content[0]
	}
	c := &conv{lines: d.lines}
	v, err := c.value(n, "")
	if err != nil {
		return nil, &Error{File: name, Line: c.errLine, Msg: err.Error()}
	}
	switch m := v.(type) {
	case nil:
		return d, nil
	case map[string]any:
		d.Value = m
		return d, nil
	}
	return nil, &Error{File: name, Line: n.Line, Msg: fmt.Sprintf("top level is %s, not a mapping of cloud-config keys", article(TypeName(v)))}
}

// yamlError is a decoder error as an *Error with the line it names.
func yamlError(name string, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	ln := 0
	if m := lineRE().FindStringSubmatch(msg); m != nil {
		ln, _ = strconv.Atoi(m[1])
	}
	return &Error{File: name, Line: ln, Msg: "not valid YAML: " + msg}
}

type conv struct {
	lines   map[string]int
	nodes   int
	errLine int
	depth   int
}

// Join appends a map key to a key path.
func Join(p, key string) string {
	if p == "" {
		return key
	}
	return p + "." + key
}

// Index appends a list index to a key path.
func Index(p string, i int) string { return fmt.Sprintf("%s[%d]", p, i) }

func (c *conv) value(n *yaml.Node, p string) (any, error) {
	c.nodes++
	if c.nodes > maxNodes {
		c.errLine = n.Line
		return nil, errors.New("document too large (alias expansion)")
	}
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > 500 {
		c.errLine = n.Line
		return nil, errors.New("nested too deep")
	}
	if p != "" {
		if _, ok := c.lines[p]; !ok {
			c.lines[p] = n.Line
		}
	}
	switch n.Kind {
	case yaml.AliasNode:
		return c.value(n.Alias, p)
	case yaml.ScalarNode:
		return scalar(n)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, e := range n.Content {
			v, err := c.value(e, Index(p, i))
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := map[string]any{}
		var merges []map[string]any
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, vn := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
				mv, err := c.value(vn, p)
				if err != nil {
					return nil, err
				}
				switch m := mv.(type) {
				case map[string]any:
					merges = append(merges, m)
				case []any:
					for _, e := range m {
						if em, ok := e.(map[string]any); ok {
							merges = append(merges, em)
						}
					}
				}
				continue
			}
			kv, err := c.value(k, "")
			if err != nil {
				return nil, err
			}
			ks := keyString(kv)
			c.lines[Join(p, ks)] = k.Line
			v, err := c.value(vn, Join(p, ks))
			if err != nil {
				return nil, err
			}
			out[ks] = v // a repeated key: the last one wins, as in PyYAML
		}
		for _, m := range merges {
			for k, v := range m {
				if _, ok := out[k]; !ok {
					out[k] = v
				}
			}
		}
		return out, nil
	}
	return nil, nil
}

// keyString renders a non-string key the way Python's str() would.
func keyString(v any) string {
	switch k := v.(type) {
	case string:
		return k
	case bool:
		if k {
			return "True"
		}
		return "False"
	case nil:
		return "None"
	}
	return fmt.Sprint(v)
}

// YAML 1.1 implicit types, as PyYAML's resolver defines them.
var (
	boolRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	})
	intRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	})
	floatRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	})
	nullRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:~|null|Null|NULL|)$`) })
	timeRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$`)
	})
)

// Timestamp is a plain scalar PyYAML loads as a date or datetime (YAML
// 1.1 !!timestamp): cloud-init then sees an object that is not a string,
// which its schema rejects where it wants one. Raw is the text.
type Timestamp struct{ Raw string }

// MarshalJSON renders the timestamp as its text.
func (t Timestamp) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(t.Raw)), nil }

func scalar(n *yaml.Node) (any, error) {
	s := n.Value
	quoted := n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0
	tag := n.Tag
	if n.Style&yaml.TaggedStyle == 0 {
		if quoted {
			return s, nil
		}
		tag = resolve11(s)
	}
	switch tag {
	case "!!null":
		return nil, nil
	case "!!bool":
		switch strings.ToLower(s) {
		case "yes", "true", "on":
			return true, nil
		}
		return false, nil
	case "!!int":
		if v, ok := parseInt11(s); ok {
			return v, nil
		}
		if v, ok := parseFloat11(s); ok {
			return v, nil
		}
		return s, nil
	case "!!float":
		if v, ok := parseFloat11(s); ok {
			return v, nil
		}
		return s, nil
	case "!!binary":
		b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
		if err != nil {
			return nil, fmt.Errorf("line %d: !!binary value is not base64", n.Line)
		}
		return string(b), nil
	case "!!timestamp":
		return Timestamp{Raw: s}, nil
	}
	return s, nil
}

func resolve11(s string) string {
	// Bools and nulls are a fixed set of words (boolRE, nullRE), matched
	// here without compiling or running those regexps. Ints, floats and
	// timestamps start with a sign, a digit or a dot; other scalars, most
	// of them (names, paths, commands), never reach a regexp: under
	// emulation compiling them cost more than parsing a cloud.cfg.
	switch s {
	case "yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF":
		return "!!bool"
	}
	if s == "" || !strings.ContainsRune("-+.0123456789", rune(s[0])) {
		switch s {
		case "", "~", "null", "Null", "NULL":
			return "!!null"
		}
		return "!!str"
	}
	switch {
	case intRE().MatchString(s):
		return "!!int"
	case floatRE().MatchString(s):
		return "!!float"
	case timeRE().MatchString(s):
		return "!!timestamp"
	}
	return "!!str"
}

// parseInt11 constructs a YAML 1.1 int as PyYAML does.
func parseInt11(s string) (any, bool) {
	v := strings.ReplaceAll(s, "_", "")
	sign := int64(1)
	if strings.HasPrefix(v, "-") {
		sign, v = -1, v[1:]
	} else {
		v = strings.TrimPrefix(v, "+")
	}
	var u uint64
	var err error
	switch {
	case v == "0":
		return int64(0), true
	case strings.HasPrefix(v, "0b"):
		u, err = strconv.ParseUint(v[2:], 2, 63)
	case strings.HasPrefix(v, "0x"):
		u, err = strconv.ParseUint(v[2:], 16, 63)
	case strings.HasPrefix(v, "0"):
		u, err = strconv.ParseUint(v[1:], 8, 63)
	case strings.Contains(v, ":"):
		var total uint64
		for _, part := range strings.Split(v, ":") {
			d, e := strconv.ParseUint(part, 10, 63)
			if e != nil {
				return nil, false
			}
			total = total*60 + d
		}
		u = total
	default:
		u, err = strconv.ParseUint(v, 10, 63)
	}
	if err != nil {
		// Larger than int64: keep it as a float, as JSON would.
		if f, ferr := strconv.ParseFloat(v, 64); ferr == nil {
			return float64(sign) * f, true
		}
		return nil, false
	}
	return sign * int64(u), true
}

func parseFloat11(s string) (float64, bool) {
	v := strings.ToLower(strings.ReplaceAll(s, "_", ""))
	sign := 1.0
	if strings.HasPrefix(v, "-") {
		sign, v = -1, v[1:]
	} else {
		v = strings.TrimPrefix(v, "+")
	}
	switch v {
	case ".inf":
		return sign * math.Inf(1), true
	case ".nan":
		return math.NaN(), true
	}
	if strings.Contains(v, ":") {
		parts := strings.Split(v, ":")
		total := 0.0
		for _, p := range parts {
			f, err := strconv.ParseFloat(p, 64)
			if err != nil {
				return 0, false
			}
			total = total*60 + f
		}
		return sign * total, true
	}
	f, err := strconv.ParseFloat(v, 64)
	return sign * f, err == nil
}

// article puts "a" or "an" before a type name.
func article(t string) string {
	if strings.IndexByte("aeiou", t[0]) >= 0 {
		return "an " + t
	}
	return "a " + t
}

// TypeName names a value's type the way JSON Schema and cloud-init's
// messages do.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case int64, int:
		return "integer"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case Timestamp:
		return "timestamp"
	}
	return fmt.Sprintf("%T", v)
}

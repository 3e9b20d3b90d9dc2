package cloudconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	cc "github.com/guestcheck/guestcheck/internal/parse/cloudconfig"
)

// SchemaRel is where cloud-init's package ships its cloud-config schema,
// below a python dist-packages or site-packages directory.
const SchemaRel = "cloudinit/config/schemas/schema-cloud-config-v1.json"

// outsideSchema are top-level keys cloud-init reads from a cloud-config
// outside the module schemas (stages.py, helpers.py, settings.py), so
// they are not unknown keys although the schema does not list them.
var outsideSchema = []string{
	"merge_how", "merge_type", "datasource", "datasource_list", "system_info", "network",
	"def_log_file", "log_cfgs", "output", "syslog_fix_perms", "manual_cache_clean",
	"vendor_data2", "_log", "mount_default_fields",
}

// Schema is the guest's own cloud-config schema, compiled.
type Schema struct {
	File     string
	root     *jsonschema.Schema
	raw      map[string]any
	url      string
	known    []string
	rawCache map[string]map[string]any
}

// SchemaProblem is one finding of schema validation.
type SchemaProblem struct {
	// Kind is "error", "deprecation" or "unknown-key".
	Kind string
	// Path is the key path in this package's form ("users[0].groups").
	Path string
	// CIPath is the path as cloud-init prints it ("users.0.groups").
	CIPath string
	Line   int
	Msg    string
	// Suggest is the closest known key, for unknown keys.
	Suggest string
}

// CompileSchema compiles a schema file's bytes.
func CompileSchema(file string, b []byte) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: not JSON: %w", file, err)
	}
	raw, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: not a JSON object", file)
	}
	// cloud-init builds its validator with jsonschema.validators.create()
	// and no ignore_ref_siblings, so keywords beside a $ref apply too,
	// unlike in plain draft 4; spell that as an allOf for the library.
	raw = refSiblings(raw).(map[string]any)
	s := &Schema{File: file, raw: raw, url: "file:///guest/schema-cloud-config-v1.json", rawCache: map[string]map[string]any{}}
	s.known = s.topKeys()
	return s, nil
}

// compileFor compiles the schema for one document. Branches of the
// top-level allOf that can only constrain keys the document does not have
// (an object schema with properties and nothing else) accept it whatever
// they say, so they are left out: that is most of the schema, and most of
// the time compiling it would take.
func (s *Schema) compileFor(doc map[string]any) error {
	top := map[string]any{}
	for k, v := range s.raw {
		top[k] = v
	}
	if all, ok := s.raw["allOf"].([]any); ok {
		var keep []any
		for _, b := range all {
			if s.relevant(b, doc, 0) {
				keep = append(keep, b)
			}
		}
		top["allOf"] = keep
		if len(keep) == 0 {
			delete(top, "allOf")
		}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft4)
	if err := c.AddResource(s.url, top); err != nil {
		return fmt.Errorf("%s: %w", s.File, err)
	}
	sch, err := c.Compile(s.url)
	if err != nil {
		return fmt.Errorf("%s: %s", s.File, oneLine(err.Error()))
	}
	s.root = sch
	return nil
}

// inert are keywords that never reject an object lacking the properties.
var inert = map[string]bool{"type": true, "properties": true, "description": true, "title": true, "$comment": true,
	"label": true, "hidden": true, "deprecated": true}

func (s *Schema) relevant(b any, doc map[string]any, depth int) bool {
	n, ok := b.(map[string]any)
	if !ok || depth > 8 {
		return true
	}
	if ref, ok := n["$ref"].(string); ok && len(n) == 1 {
		t := s.resolve(ref)
		if t == nil {
			return true
		}
		return s.relevant(t, doc, depth+1)
	}
	for k, v := range n {
		if !inert[k] {
			return true
		}
		if k == "type" && v != "object" {
			return true
		}
	}
	props, _ := n["properties"].(map[string]any)
	for k := range props {
		if _, ok := doc[k]; ok {
			return true
		}
	}
	return false
}

// refSiblings rewrites {"$ref": R, k: v...} as {"allOf": [{"$ref": R},
// {k: v...}]}, keeping annotations (description, deprecated) beside both.
func refSiblings(v any) any {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			x[i] = refSiblings(e)
		}
		return x
	case map[string]any:
		for k, e := range x {
			if k != "enum" && k != "const" && k != "default" && k != "examples" {
				x[k] = refSiblings(e)
			}
		}
		ref, ok := x["$ref"]
		if !ok || len(x) == 1 {
			return x
		}
		rest := map[string]any{}
		out := map[string]any{}
		for k, e := range x {
			switch k {
			case "$ref":
			case "description", "deprecated", "deprecated_version", "deprecated_description", "label", "hidden", "title":
				out[k] = e
			default:
				rest[k] = e
			}
		}
		if len(rest) == 0 {
			return x
		}
		out["allOf"] = []any{map[string]any{"$ref": ref}, rest}
		return out
	}
	return v
}

// Known lists the top-level keys the schema (and cloud-init outside it)
// knows, sorted.
func (s *Schema) Known() []string { return s.known }

// topKeys collects the property names of the top level and of every
// allOf branch, following local $refs.
func (s *Schema) topKeys() []string {
	seen := map[string]bool{}
	var walk func(n map[string]any, depth int)
	walk = func(n map[string]any, depth int) {
		if depth > 8 || n == nil {
			return
		}
		if ref, ok := n["$ref"].(string); ok {
			walk(s.resolve(ref), depth+1)
		}
		if props, ok := n["properties"].(map[string]any); ok {
			for k := range props {
				seen[k] = true
			}
		}
		for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
			if l, ok := n[kw].([]any); ok {
				for _, e := range l {
					m, _ := e.(map[string]any)
					walk(m, depth+1)
				}
			}
		}
	}
	walk(s.raw, 0)
	for _, k := range outsideSchema {
		seen[k] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// resolve follows a local JSON pointer ("#/$defs/cc_ntp").
func (s *Schema) resolve(ref string) map[string]any {
	if !strings.HasPrefix(ref, "#/") {
		return nil
	}
	var cur any = s.raw
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	m, _ := cur.(map[string]any)
	return m
}

// Validate checks a document as `cloud-init schema --annotate` does:
// errors and deprecations by key path, plus top-level keys the schema does
// not know. Messages never carry the offending value, which may be secret.
func (s *Schema) Validate(doc *cc.Doc) []SchemaProblem {
	inst := jsonable(doc.Value)
	var out []SchemaProblem
	if err := s.compileFor(doc.Value); err != nil {
		return []SchemaProblem{{Kind: "error", Msg: "the schema does not compile: " + err.Error()}}
	}
	if err := s.root.Validate(inst); err != nil {
		if ve, ok := err.(*jsonschema.ValidationError); ok {
			s.collect(ve, inst, doc, &out)
		} else {
			out = append(out, SchemaProblem{Kind: "error", Msg: oneLine(err.Error())})
		}
	}
	s.deprecations(s.root, inst, nil, doc, &out, 0)
	unknown := map[string]bool{}
	for _, k := range sortedKeys(doc.Value) {
		if !contains(s.known, k) {
			unknown[k] = true
			p := SchemaProblem{Kind: "unknown-key", Path: k, CIPath: k, Line: doc.Line(k),
				Msg: "not a cloud-config key known to this cloud-init; cloud-init ignores it"}
			if sug := closest(k, s.known); sug != "" {
				p.Suggest = sug
				p.Msg = fmt.Sprintf("not a cloud-config key; did you mean %s?", sug)
			}
			out = append(out, p)
		}
	}
	// A top-level key the schema rejects as extra (25.x forbids them) is
	// reported once, as an unknown key with its suggestion.
	kept := out[:0]
	for _, p := range out {
		if !(p.Kind == "error" && unknown[p.Path]) {
			kept = append(kept, p)
		}
	}
	out = kept
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Path < out[j].Path
	})
	return dedupe(out)
}

func dedupe(ps []SchemaProblem) []SchemaProblem {
	var out []SchemaProblem
	seen := map[string]bool{}
	for _, p := range ps {
		k := p.Kind + "\x00" + p.Path + "\x00" + p.Msg
		if !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	return out
}

// collect turns the error tree into cloud-init's top-level errors: a
// failed anyOf or oneOf is one error at its location (as Python's
// jsonschema reports it), other wrappers are descended into.
func (s *Schema) collect(ve *jsonschema.ValidationError, inst any, doc *cc.Doc, out *[]SchemaProblem) {
	switch ve.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.AllOf, *kind.Reference:
		for _, c := range ve.Causes {
			s.collect(c, inst, doc, out)
		}
		if len(ve.Causes) > 0 {
			return
		}
	}
	p, ci := paths(inst, ve.InstanceLocation)
	if ap, ok := ve.ErrorKind.(*kind.AdditionalProperties); ok && p == "" {
		// Top-level keys the schema forbids (25.x): one problem per key,
		// at the key itself. Deeper down, cloud-init reports the parent.
		for _, k := range ap.Properties {
			kp, kci := cc.Join(p, k), strings.TrimPrefix(ci+"."+k, ".")
			*out = append(*out, SchemaProblem{Kind: "error", Path: kp, CIPath: kci, Line: doc.Line(kp), Msg: "is not allowed here by the schema"})
		}
		return
	}
	*out = append(*out, SchemaProblem{Kind: "error", Path: p, CIPath: ci, Line: doc.Line(p), Msg: message(ve)})
}

// message describes an error without the instance's value.
func message(ve *jsonschema.ValidationError) string {
	switch k := ve.ErrorKind.(type) {
	case *kind.Type:
		return fmt.Sprintf("is a %s, not %s", k.Got, strings.Join(k.Want, " or "))
	case *kind.Enum:
		var w []string
		for _, v := range k.Want {
			b, _ := json.Marshal(v)
			w = append(w, string(b))
		}
		return "is not one of " + strings.Join(w, ", ")
	case *kind.Const:
		b, _ := json.Marshal(k.Want)
		return "is not " + string(b)
	case *kind.Pattern:
		return "does not match the pattern " + k.Want
	case *kind.Format:
		return "is not a valid " + k.Want
	case *kind.AdditionalProperties:
		return "has keys the schema does not allow: " + strings.Join(k.Properties, ", ")
	case *kind.Required:
		return "is missing required keys: " + strings.Join(k.Missing, ", ")
	case *kind.MinItems:
		return fmt.Sprintf("has %d items, fewer than %d", k.Got, k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("has %d items, more than %d", k.Got, k.Want)
	case *kind.MinLength:
		return fmt.Sprintf("is %d characters long, shorter than %d", k.Got, k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("is %d characters long, longer than %d", k.Got, k.Want)
	case *kind.MinProperties:
		return fmt.Sprintf("has %d keys, fewer than %d", k.Got, k.Want)
	case *kind.UniqueItems:
		return fmt.Sprintf("items %d and %d are the same", k.Duplicates[0], k.Duplicates[1])
	case *kind.AnyOf, *kind.OneOf:
		return "is not valid under any of the given schemas" + causeHint(ve)
	case *kind.Minimum, *kind.Maximum, *kind.ExclusiveMinimum, *kind.ExclusiveMaximum, *kind.MultipleOf:
		kw := ve.ErrorKind.KeywordPath()
		return "is out of range (" + strings.Join(kw, "/") + ")"
	case *kind.InvalidJsonValue:
		return "is a YAML date or time, not a string (quote it)"
	case *kind.Not:
		return "matches a schema it must not match"
	case *kind.FalseSchema:
		return "is not allowed here"
	}
	return "does not satisfy " + strings.Join(ve.ErrorKind.KeywordPath(), "/")
}

// causeHint names the types the branches of an anyOf or oneOf want, when
// that is what they all disagree about.
func causeHint(ve *jsonschema.ValidationError) string {
	var want []string
	for _, c := range ve.Causes {
		t, ok := c.ErrorKind.(*kind.Type)
		if !ok {
			return ""
		}
		want = append(want, t.Want...)
	}
	if len(want) == 0 {
		return ""
	}
	return " (want " + strings.Join(uniq(want), " or ") + ")"
}

func uniq(l []string) []string {
	var out []string
	for _, s := range l {
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// paths renders an instance location in this package's form and in
// cloud-init's dotted form.
func paths(inst any, loc []string) (string, string) {
	p := ""
	cur := inst
	for _, tok := range loc {
		switch c := cur.(type) {
		case []any:
			i, _ := strconv.Atoi(tok)
			p = cc.Index(p, i)
			if i >= 0 && i < len(c) {
				cur = c[i]
			}
		case map[string]any:
			p = cc.Join(p, tok)
			cur = c[tok]
		default:
			p = cc.Join(p, tok)
		}
	}
	return p, strings.Join(loc, ".")
}

// deprecations walks the compiled schema and the instance together and
// reports each value that lands on a subschema marked deprecated, with
// cloud-init's anyOf and oneOf rule: only the first branch the value is
// valid under counts (for oneOf, only when it is the only one). Validity
// is the library's verdict on that branch; this walk only finds the
// annotations, which draft 4 does not compile.
func (s *Schema) deprecations(sch *jsonschema.Schema, v any, loc []string, doc *cc.Doc, out *[]SchemaProblem, depth int) {
	if sch == nil || depth > 64 {
		return
	}
	if n := s.rawAt(sch.Location); n != nil {
		if d, ok := n["deprecated"].(bool); ok && d {
			p, ci := paths(doc.Value, loc)
			msg := "deprecated"
			if ver, ok := n["deprecated_version"].(string); ok {
				msg += " in version " + ver
			}
			desc, _ := n["deprecated_description"].(string)
			if desc == "" {
				desc, _ = n["description"].(string)
			}
			if desc != "" {
				msg += ": " + oneLine(desc)
			}
			*out = append(*out, SchemaProblem{Kind: "deprecation", Path: p, CIPath: ci, Line: doc.Line(p), Msg: msg})
		}
	}
	s.deprecations(sch.Ref, v, loc, doc, out, depth+1)
	for _, a := range sch.AllOf {
		s.deprecations(a, v, loc, doc, out, depth+1)
	}
	for _, a := range sch.AnyOf {
		if a.Validate(v) == nil {
			s.deprecations(a, v, loc, doc, out, depth+1)
			break
		}
	}
	var only *jsonschema.Schema
	count := 0
	for _, a := range sch.OneOf {
		if a.Validate(v) == nil {
			count++
			only = a
		}
	}
	if count == 1 {
		s.deprecations(only, v, loc, doc, out, depth+1)
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			kloc := append(append([]string{}, loc...), k)
			matched := false
			if ps, ok := sch.Properties[k]; ok {
				matched = true
				s.deprecations(ps, x[k], kloc, doc, out, depth+1)
			}
			for re, ps := range sch.PatternProperties {
				if re.MatchString(k) {
					matched = true
					s.deprecations(ps, x[k], kloc, doc, out, depth+1)
				}
			}
			if ap, ok := sch.AdditionalProperties.(*jsonschema.Schema); ok && !matched {
				s.deprecations(ap, x[k], kloc, doc, out, depth+1)
			}
		}
	case []any:
		switch it := sch.Items.(type) {
		case *jsonschema.Schema:
			for i, e := range x {
				s.deprecations(it, e, append(append([]string{}, loc...), strconv.Itoa(i)), doc, out, depth+1)
			}
		case []*jsonschema.Schema:
			for i, e := range x {
				if i < len(it) {
					s.deprecations(it[i], e, append(append([]string{}, loc...), strconv.Itoa(i)), doc, out, depth+1)
				}
			}
		}
	}
}

// rawAt returns the schema document's node at a compiled schema's location.
func (s *Schema) rawAt(loc string) map[string]any {
	if n, ok := s.rawCache[loc]; ok {
		return n
	}
	var n map[string]any
	if _, frag, ok := strings.Cut(loc, "#"); ok {
		if frag == "" {
			n = s.raw
		} else {
			n = s.resolve("#" + frag)
		}
	}
	s.rawCache[loc] = n
	return n
}

// jsonable is the document as the validator sees it; the parser's
// values are already the JSON types the library takes.
func jsonable(v map[string]any) any { return v }

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

// closest returns the known key nearest to k by optimal string alignment
// distance (a transposition counts as one edit), when near enough to be
// a likely typo.
func closest(k string, known []string) string {
	best, bestD := "", 1<<30
	for _, c := range known {
		d := osa(strings.ToLower(k), strings.ToLower(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	limit := 2
	if len(k) <= 4 {
		limit = 1
	}
	if bestD <= limit || strings.EqualFold(strings.ReplaceAll(k, "-", "_"), strings.ReplaceAll(best, "-", "_")) {
		return best
	}
	return ""
}

func osa(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

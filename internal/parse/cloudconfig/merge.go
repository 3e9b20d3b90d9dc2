package cloudconfig

import (
	"regexp"
	"sort"
	"strings"
	"sync"
)

// mergers is one source's merge rules, cloud-init's mergers package: the
// type mergers it names (m_dict, m_list, m_str) with their options, from
// its merge_how (or merge_type) key, else the default
// "list()+dict()+str()". A merge dispatches on the type of the value
// merged into; a type without a merger keeps that value.
type mergers struct {
	dict, list, str bool

	dictReplace, dictRecurseStr, dictRecurseArray, dictAllowDelete bool

	listMethod                                        string // append, prepend, replace, no_replace
	listRecurseStr, listRecurseDict, listRecurseArray bool

	strAppend bool
}

// defaultMergers is mergers.default_mergers().
var defaultMergers = mergers{dict: true, list: true, str: true, listMethod: "replace"}

var mergerRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([a-zA-Z_][A-Za-z0-9_]*)\((.*?)\)$`) })

// extractMergers is mergers.dict_extract_mergers: it returns src's merge
// rules and src without the key that named them. A specification
// cloud-init would stop on (a malformed string, an unknown merger) reads
// as the default here.
func extractMergers(src map[string]any) (mergers, map[string]any) {
	_, hasHow := src["merge_how"]
	_, hasType := src["merge_type"]
	if !hasHow && !hasType {
		return defaultMergers, src
	}
	// merge_how is popped; merge_type only when merge_how is absent or
	// null, and then it is the specification.
	raw, popType := src["merge_how"], false
	if raw == nil {
		raw, popType = src["merge_type"], true
	}
	body := make(map[string]any, len(src))
	for k, v := range src {
		if k != "merge_how" && !(k == "merge_type" && popType) {
			body[k] = v
		}
	}
	specs, ok := mergerSpecs(raw)
	if !ok {
		return defaultMergers, body
	}
	var ms mergers
	for _, s := range specs {
		if !ms.add(s.name, s.opts) {
			return defaultMergers, body
		}
	}
	if !ms.dict && !ms.list && !ms.str {
		return defaultMergers, body
	}
	return ms, body
}

// mergerSpec is one merger a specification names, with its options.
type mergerSpec struct {
	name string
	opts any
}

// mergerSpecs reads a merge_how value: "dict(replace)+list(append)", or a
// list of {name, settings} mappings or [name, option...] lists. ok is
// false for a string cloud-init refuses.
func mergerSpecs(raw any) (specs []mergerSpec, ok bool) {
	switch x := raw.(type) {
	case string:
		for _, part := range strings.Split(x, "+") {
			part = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(part)), "-", "_")
			if part == "" {
				continue
			}
			m := mergerRE().FindStringSubmatch(part)
			if m == nil {
				return nil, false
			}
			var opts []any
			for _, o := range strings.Split(m[2], ",") {
				if o = strings.ToLower(strings.TrimSpace(o)); o != "" {
					opts = append(opts, o)
				}
			}
			specs = append(specs, mergerSpec{m[1], opts})
		}
	case []any:
		for _, e := range x {
			switch m := e.(type) {
			case map[string]any:
				name, _ := m["name"].(string)
				specs = append(specs, mergerSpec{strings.TrimSpace(strings.ReplaceAll(name, "-", "_")), m["settings"]})
			case []any:
				if len(m) > 0 {
					name, _ := m[0].(string)
					specs = append(specs, mergerSpec{name, m[1:]})
				}
			}
		}
	}
	return specs, true
}

// add adds the type merger name with options opts; the first merger of a
// type wins, as LookupMerger asks them in order. An unknown name is false.
func (ms *mergers) add(name string, opts any) bool {
	switch name {
	case "":
		return true
	case "dict":
		if !ms.dict {
			ms.dict = true
			ms.dictReplace = hasOpt(opts, "replace")
			ms.dictRecurseStr = hasOpt(opts, "recurse_str")
			ms.dictRecurseArray = hasOpt(opts, "recurse_array") || hasOpt(opts, "recurse_list")
			ms.dictAllowDelete = hasOpt(opts, "allow_delete")
		}
	case "list":
		if !ms.list {
			ms.list, ms.listMethod = true, "replace"
			for _, m := range []string{"append", "prepend", "replace", "no_replace"} {
				if hasOpt(opts, m) {
					ms.listMethod = m
					break
				}
			}
			ms.listRecurseStr = hasOpt(opts, "recurse_str")
			ms.listRecurseDict = hasOpt(opts, "recurse_dict")
			ms.listRecurseArray = hasOpt(opts, "recurse_array") || hasOpt(opts, "recurse_list")
		}
	case "str":
		if !ms.str {
			ms.str, ms.strAppend = true, hasOpt(opts, "append")
		}
	default:
		return false
	}
	return true
}

// hasOpt is Python's `o in opts`: membership in a list, a substring of a
// string.
func hasOpt(opts any, o string) bool {
	switch x := opts.(type) {
	case string:
		return strings.Contains(x, o)
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok && s == o {
				return true
			}
		}
	}
	return false
}

// merge merges b into a (LookupMerger.merge): the merger of a's type
// decides, and a type without one keeps a.
func (ms mergers) merge(a, b any) any {
	switch x := a.(type) {
	case map[string]any:
		if ms.dict {
			return ms.onDict(x, b)
		}
	case []any:
		if ms.list {
			return ms.onList(x, b)
		}
	case string:
		if ms.str {
			return ms.onStr(x, b)
		}
	}
	return a
}

// onDict is m_dict: keys b lacks stay, new keys are added, and a key both
// have is replaced (replace) or merged further when the new value is a
// mapping (or, with recurse_str and recurse_array, a string or a list).
func (ms mergers) onDict(a map[string]any, b any) any {
	bm, ok := b.(map[string]any)
	if !ok {
		return a
	}
	out := make(map[string]any, len(a)+len(bm))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range bm {
		old, ok := out[k]
		switch {
		case !ok:
			out[k] = deepCopy(v)
		case v == nil && ms.dictAllowDelete:
			delete(out, k)
		default:
			out[k] = ms.dictSameKey(old, v)
		}
	}
	return out
}

func (ms mergers) dictSameKey(old, v any) any {
	if ms.dictReplace {
		return deepCopy(v)
	}
	switch v.(type) {
	case []any:
		if ms.dictRecurseArray {
			return ms.merge(old, v)
		}
	case string:
		if ms.dictRecurseStr {
			return ms.merge(old, v)
		}
	case map[string]any:
		return ms.merge(old, v)
	}
	return old
}

// onList is m_list: replace takes a value that is not a list whole,
// append and prepend join, and otherwise the items at common indexes are
// replaced (or, with no_replace, kept).
func (ms mergers) onList(a []any, b any) any {
	bl, isList := b.([]any)
	if ms.listMethod == "replace" && !isList {
		return deepCopy(b)
	}
	if !isList {
		// Python would iterate the value (a string's characters, a
		// mapping's keys) or fail; only those two are iterable here.
		bl = iterable(b)
	}
	switch ms.listMethod {
	case "prepend":
		return append(deepCopy(bl).([]any), a...)
	case "append":
		return append(append([]any{}, a...), deepCopy(bl).([]any)...)
	}
	out := append([]any{}, a...)
	for i := 0; i < len(out) && i < len(bl); i++ {
		out[i] = ms.listSameIndex(out[i], bl[i])
	}
	return out
}

func (ms mergers) listSameIndex(old, v any) any {
	if ms.listMethod == "no_replace" {
		return old
	}
	switch v.(type) {
	case []any:
		if ms.listRecurseArray {
			return ms.merge(old, v)
		}
	case string:
		if ms.listRecurseStr {
			return ms.merge(old, v)
		}
	case map[string]any:
		if ms.listRecurseDict {
			return ms.merge(old, v)
		}
	}
	return deepCopy(v)
}

// iterable is what Python's list.extend takes from a value that is not a
// list: a string's characters, a mapping's keys (sorted: the order of
// the document is not kept), nothing from the rest.
func iterable(v any) []any {
	var out []any
	switch x := v.(type) {
	case string:
		for _, r := range x {
			out = append(out, string(r))
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, k)
		}
	}
	return out
}

// onStr is m_str: the value merged in replaces the string, or is appended
// to it with append.
func (ms mergers) onStr(a string, b any) any {
	if s, ok := b.(string); ok && ms.strAppend {
		return a + s
	}
	return deepCopy(b)
}

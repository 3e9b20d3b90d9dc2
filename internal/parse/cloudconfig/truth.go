package cloudconfig

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
)

// trueStrings and falseStrings are util.TRUE_STRINGS and FALSE_STRINGS.
var (
	trueStrings  = []string{"true", "1", "on", "yes"}
	falseStrings = []string{"off", "0", "no", "false"}
)

// PyStr renders a value the way Python's str() does, for the places
// where cloud-init compares str(value).
func PyStr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case Timestamp:
		return x.Raw
	case float64:
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		return s
	}
	return fmt.Sprint(v)
}

// IsTrue is util.is_true.
func IsTrue(v any) bool {
	if b, ok := v.(bool); ok {
		return b
	}
	s := strings.ToLower(strings.TrimSpace(PyStr(v)))
	for _, t := range trueStrings {
		if s == t {
			return true
		}
	}
	return false
}

// IsFalse is util.is_false.
func IsFalse(v any) bool {
	if b, ok := v.(bool); ok {
		return !b
	}
	s := strings.ToLower(strings.TrimSpace(PyStr(v)))
	for _, t := range falseStrings {
		if s == t {
			return true
		}
	}
	return false
}

// Truthy is Python's bool(v), the test cloud-init's modules apply with a
// plain `if value:`.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case int64:
		return x != 0
	case float64:
		return x != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// TranslateBool is util.translate_bool: falsy values are false, booleans
// are themselves, anything else is true only if is_true says so.
func TranslateBool(v any) bool {
	if !Truthy(v) {
		return false
	}
	if b, ok := v.(bool); ok {
		return b
	}
	return IsTrue(v)
}

// GetBool is util.get_cfg_option_bool.
func GetBool(cfg map[string]any, key string, def bool) bool {
	v, ok := cfg[key]
	if !ok {
		return def
	}
	return TranslateBool(v)
}

// GetString is util.get_cfg_option_str: a missing key gives def, a
// non-string is converted with str().
func GetString(cfg map[string]any, key, def string) string {
	v, ok := cfg[key]
	if !ok {
		return def
	}
	return PyStr(v)
}

// GetList is util.get_cfg_option_list: a string becomes a one-item list,
// None an empty one.
func GetList(cfg map[string]any, key string, def []string) []string {
	v, ok := cfg[key]
	if !ok {
		return def
	}
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return []string{x}
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			out = append(out, PyStr(e))
		}
		return out
	}
	return []string{PyStr(v)}
}

// MergeMany is util.mergemanydict: earlier sources win. Each source is
// merged in by its own merge rules (its merge_how or merge_type key,
// which is not kept) or by cloud-init's default mergers
// ("list()+dict()+str()"): dictionaries merge key by key recursively, a
// key already set keeps its value, except that a later dictionary
// replaces an earlier string or list (m_str and m_list hand back the
// value merged in when it is not of their own type). Empty sources are
// skipped. Inputs are not modified.
func MergeMany(srcs ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, s := range srcs {
		if len(s) == 0 {
			continue
		}
		ms, body := extractMergers(s)
		if m, ok := ms.merge(out, body).(map[string]any); ok {
			out = m
		}
	}
	return out
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopy(e)
		}
		return l
	}
	return v
}

// SystemPath is cloud-init's system configuration; its drop-ins are in
// SystemPath+".d".
const SystemPath = "/etc/cloud/cloud.cfg"

// ConfD picks the drop-ins cloud-init reads from a cloud.cfg.d listing:
// regular files ending in ".cfg", in the order that makes later names win.
func ConfD(names []string) []string {
	var out []string
	for _, n := range names {
		if strings.HasSuffix(n, ".cfg") {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// System merges cloud.cfg with its drop-ins (given in ConfD order): a
// later drop-in wins over an earlier one, and every drop-in wins over
// cloud.cfg, as util.read_conf_with_confd does.
func System(base map[string]any, dropins []map[string]any) map[string]any {
	srcs := make([]map[string]any, 0, len(dropins)+1)
	for i := len(dropins) - 1; i >= 0; i-- {
		srcs = append(srcs, dropins[i])
	}
	return MergeMany(append(srcs, base)...)
}

// Effective is the configuration cloud-init's modules see: the
// instance's user-data cloud-config over the system configuration.
func Effective(userData, system map[string]any) map[string]any {
	return MergeMany(userData, system)
}

// DefaultUser returns system_info.default_user of a configuration.
func DefaultUser(cfg map[string]any) map[string]any {
	si, _ := cfg["system_info"].(map[string]any)
	du, _ := si["default_user"].(map[string]any)
	return du
}

// ConfDNames filters a directory listing to cloud.cfg.d drop-in paths.
func ConfDNames(dir string, names []string) []string {
	var out []string
	for _, n := range ConfD(names) {
		out = append(out, path.Join(dir, n))
	}
	return out
}

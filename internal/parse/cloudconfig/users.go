package cloudconfig

import (
	"fmt"
	"sort"
	"strings"
)

// User is one user cloud-init's users-groups module creates or updates,
// after ug_util.normalize_users_groups.
type User struct {
	Name string
	// Config holds the user's keys with "-" turned into "_" (name removed).
	Config map[string]any
	// Default is true for the distribution's default user.
	Default bool
	// Path is the key path the entry came from ("users[0]"); the default
	// user also names system_info.default_user.
	Path string
}

// Group is one group of the top-level groups key.
type Group struct {
	Name    string
	Members []string
	Path    string
}

// uniqMergeSorted is util.uniq_merge_sorted for strings and lists of them.
func uniqMerge(vals ...any) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, v := range vals {
		switch x := v.(type) {
		case string:
			for _, p := range strings.Split(x, ",") {
				add(p)
			}
		case []any:
			for _, e := range x {
				add(PyStr(e))
			}
		case []string:
			for _, e := range x {
				add(e)
			}
		case nil:
		default:
			add(PyStr(x))
		}
	}
	return out
}

func uniqMergeSorted(vals ...any) []string {
	out := uniqMerge(vals...)
	sort.Strings(out)
	return out
}

// NormalizeUsers is ug_util.normalize_users_groups over an effective
// configuration: the users key (list, or the deprecated dict and string
// forms), the deprecated user key, and "default" expanded to the
// distribution's default user. Problems are the TypeErrors and warnings
// cloud-init would log; a user it would skip is left out.
func NormalizeUsers(cfg map[string]any) ([]User, []string) {
	oldUser, probs := deprecatedUser(cfg)
	defCfg := MergeMany(oldUser, DefaultUser(cfg))
	entries, paths, eprobs := userEntries(cfg)
	probs = append(probs, eprobs...)
	if oldUser != nil {
		entries = append(entries, map[string]any{"name": "default"})
		paths = append(paths, "user")
	}
	s := &userSet{users: map[string]map[string]any{}, from: map[string]string{}}
	probs = append(probs, s.add(entries, paths)...)
	s.normalizeKeys()
	defName, dprobs := s.expandDefault(defCfg)
	probs = append(probs, dprobs...)
	out := make([]User, 0, len(s.order))
	for _, n := range s.order {
		out = append(out, User{Name: n, Config: s.users[n], Default: defName != "" && n == defName, Path: s.from[n]})
	}
	return out, probs
}

// deprecatedUser reads the old user key: a name, or a user's mapping.
func deprecatedUser(cfg map[string]any) (map[string]any, []string) {
	v, ok := cfg["user"]
	if !ok || !Truthy(v) {
		return nil, nil
	}
	switch x := v.(type) {
	case string:
		return map[string]any{"name": x}, nil
	case map[string]any:
		return x, nil
	}
	return nil, []string{fmt.Sprintf("user: must be a string or a mapping, not %s", TypeName(v))}
}

// userEntries lists the users key's entries (names, lists of names or
// mappings) with their key paths, from its list, dict or string form.
func userEntries(cfg map[string]any) (entries []any, paths []string, probs []string) {
	base, hasUsers := cfg["users"]
	if !hasUsers {
		base = []any{}
	}
	switch x := base.(type) {
	case []any:
		entries = append(entries, x...)
		for i := range x {
			paths = append(paths, Index("users", i))
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			switch v := x[k].(type) {
			case bool, int64, float64, string:
				if IsTrue(v) {
					entries = append(entries, k)
					paths = append(paths, Join("users", k))
				}
			case map[string]any:
				m := MergeMany(v)
				m["name"] = k
				entries = append(entries, m)
				paths = append(paths, Join("users", k))
			default:
				probs = append(probs, fmt.Sprintf("users.%s: unmappable user value of type %s", k, TypeName(v)))
			}
		}
	case string:
		for _, u := range uniqMergeSorted(x) {
			entries = append(entries, u)
			paths = append(paths, "users")
		}
	case nil:
	default:
		probs = append(probs, fmt.Sprintf("users: must be a list, not %s", TypeName(base)))
	}
	return entries, paths, probs
}

// userSet is the users normalize_users_groups builds, in first-seen
// order, with the key path each came from.
type userSet struct {
	order []string
	users map[string]map[string]any
	from  map[string]string
}

// put sets n's configuration; a new user keeps its place and path.
func (s *userSet) put(n string, c map[string]any, p string) {
	if _, ok := s.users[n]; !ok {
		s.order = append(s.order, n)
		s.from[n] = p
	}
	s.users[n] = c
}

// add merges the entries: a name adds a user once, a mapping merges into
// the user it names ("default" when it names none).
func (s *userSet) add(entries []any, paths []string) []string {
	var probs []string
	for i, e := range entries {
		switch x := e.(type) {
		case string, []any:
			for _, u := range uniqMerge(x) {
				if _, ok := s.users[u]; !ok {
					s.put(u, map[string]any{}, paths[i])
				}
			}
		case map[string]any:
			c := MergeMany(x)
			n := "default"
			if v, ok := c["name"]; ok {
				n = PyStr(v)
				delete(c, "name")
			}
			s.put(n, MergeMany(s.users[n], c), paths[i])
		default:
			probs = append(probs, fmt.Sprintf("%s: a user must be a mapping or a string, not %s", paths[i], TypeName(e)))
		}
	}
	return probs
}

// normalizeKeys turns "-" into "_" in every user's keys and drops blank
// ones, as _normalize_users does.
func (s *userSet) normalizeKeys() {
	for _, n := range s.order {
		c := map[string]any{}
		for k, v := range s.users[n] {
			k = strings.TrimSpace(strings.ReplaceAll(k, "-", "_"))
			if k != "" {
				c[k] = v
			}
		}
		s.users[n] = c
	}
}

// expandDefault replaces the "default" user by the distribution's default
// user (defCfg), merged under what the entries said of either, and
// returns its name ("" when there is none).
func (s *userSet) expandDefault(defCfg map[string]any) (string, []string) {
	dc, ok := s.users["default"]
	if !ok {
		return "", nil
	}
	dpath := s.from["default"]
	s.order = remove(s.order, "default")
	delete(s.users, "default")
	if len(defCfg) == 0 {
		return "", []string{dpath + ": \"default\" names no user: the system configuration has no system_info.default_user"}
	}
	du := MergeMany(defCfg)
	defName := PyStr(du["name"])
	delete(du, "name")
	defGroups := du["groups"]
	delete(du, "groups")
	parsed := s.users[defName]
	if parsed == nil {
		parsed = map[string]any{}
	}
	s.order = remove(s.order, defName)
	delete(s.users, defName)
	parsed["groups"] = strings.Join(uniqMergeSorted(parsed["groups"], defGroups), ",")
	s.put(defName, MergeMany(du, dc, parsed), dpath)
	return defName, nil
}

func remove(list []string, s string) []string {
	out := list[:0:0]
	for _, e := range list {
		if e != s {
			out = append(out, e)
		}
	}
	return out
}

// NormalizeGroups is ug_util._normalize_groups over the groups key.
func NormalizeGroups(cfg map[string]any) ([]Group, []string) {
	v, ok := cfg["groups"]
	if !ok {
		return nil, nil
	}
	var out []Group
	idx := map[string]int{}
	add := func(name, p string, members ...any) {
		i, ok := idx[name]
		if !ok {
			idx[name] = len(out)
			out = append(out, Group{Name: name, Path: p})
			i = len(out) - 1
		}
		out[i].Members = uniqMergeSorted(append([]any{out[i].Members}, members...)...)
	}
	switch x := v.(type) {
	case string:
		for _, g := range strings.Split(strings.TrimSpace(x), ",") {
			add(g, "groups")
		}
	case []any:
		for i, e := range x {
			switch g := e.(type) {
			case string:
				add(g, Index("groups", i))
			case map[string]any:
				keys := make([]string, 0, len(g))
				for k := range g {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					switch m := g[k].(type) {
					case string, []any:
						add(k, Index("groups", i), m)
					default:
						return nil, []string{fmt.Sprintf("%s.%s: bad group member type %s", Index("groups", i), k, TypeName(m))}
					}
				}
			default:
				return nil, []string{fmt.Sprintf("%s: unknown group name type %s", Index("groups", i), TypeName(e))}
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			add(k, Join("groups", k), x[k])
		}
	default:
		return nil, []string{fmt.Sprintf("groups: must be a list, mapping or string, not %s", TypeName(v))}
	}
	return out, nil
}

// Package kmod parses the index files depmod(8) writes beside a kernel's
// modules in /lib/modules/VERSION: modules.dep (each module's path and the
// modules it needs), modules.softdep (modules to load before or after
// another, by name or alias), modules.alias (exact aliases only; device
// patterns are for udev) and modules.builtin (modules compiled into the
// kernel). The sealing appliance reads them to put into its initramfs only
// the modules an image needs, with their dependencies, in load order.
package kmod

import (
	"fmt"
	"path"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Name is a module's canonical name from its path or a name as written:
// the base name without .ko and its compression suffix, with '-' as '_'
// (the kernel treats both alike).
func Name(p string) string {
	b := path.Base(p)
	for _, suf := range []string{".xz", ".zst", ".gz"} {
		b = strings.TrimSuffix(b, suf)
	}
	b = strings.TrimSuffix(b, ".ko")
	return strings.ReplaceAll(b, "-", "_")
}

// Index is what depmod says of a kernel's modules.
type Index struct {
	// Path maps a module's name to its path relative to the modules
	// directory ("kernel/fs/xfs/xfs.ko").
	Path map[string]string
	// Deps maps a module's name to the names of the modules it needs,
	// as modules.dep lists them (deepest last).
	Deps map[string][]string
	// Pre maps a module's name to the names or aliases modules.softdep
	// loads before it.
	Pre map[string][]string
	// Alias maps an exact alias ("crypto-crc32c") to module names.
	Alias map[string][]string
	// Builtin holds the names of the modules compiled into the kernel.
	Builtin map[string]bool
}

// maxLine bounds one line of an index file; depmod's lines are short.
const maxLine = 64 << 10

func lines(b []byte, fn func(n int, line string) *problem.Problem) []problem.Problem {
	var out []problem.Problem
	for i, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || l[0] == '#' {
			continue
		}
		if len(l) > maxLine {
			out = append(out, problem.Problem{Line: i + 1, Msg: fmt.Sprintf("a line of %d bytes, longer than any depmod writes", len(l))})
			continue
		}
		if p := fn(i+1, l); p != nil {
			out = append(out, *p)
		}
	}
	return out
}

func validPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || !strings.Contains(path.Base(p), ".ko") {
		return false
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." || c == "." || c == "" {
			return false
		}
	}
	return true
}

// ParseDep reads modules.dep ("path: dep dep ...") into idx.Path and
// idx.Deps. A line that is not one is a problem, and skipped.
func (idx *Index) ParseDep(b []byte) []problem.Problem {
	if idx.Path == nil {
		idx.Path, idx.Deps = map[string]string{}, map[string][]string{}
	}
	return lines(b, func(n int, l string) *problem.Problem {
		mod, deps, ok := strings.Cut(l, ":")
		mod = strings.TrimSpace(mod)
		if !ok || !validPath(mod) {
			return &problem.Problem{Line: n, Msg: fmt.Sprintf("not a \"module.ko: dependencies\" line: %.80q", l)}
		}
		var names []string
		for _, d := range strings.Fields(deps) {
			if !validPath(d) {
				return &problem.Problem{Line: n, Msg: fmt.Sprintf("%s: %.80q is not a module path", mod, d)}
			}
			names = append(names, Name(d))
			if _, seen := idx.Path[Name(d)]; !seen {
				idx.Path[Name(d)] = d
			}
		}
		idx.Path[Name(mod)] = mod
		idx.Deps[Name(mod)] = names
		return nil
	})
}

// ParseSoftdep reads modules.softdep ("softdep MOD pre: a b post: c")
// into idx.Pre; post: dependencies are not needed to use a module.
func (idx *Index) ParseSoftdep(b []byte) []problem.Problem {
	if idx.Pre == nil {
		idx.Pre = map[string][]string{}
	}
	return lines(b, func(n int, l string) *problem.Problem {
		f := strings.Fields(l)
		if len(f) < 2 || f[0] != "softdep" {
			return &problem.Problem{Line: n, Msg: fmt.Sprintf("not a \"softdep MODULE pre: ...\" line: %.80q", l)}
		}
		mod, pre := Name(f[1]), false
		for _, w := range f[2:] {
			switch w {
			case "pre:":
				pre = true
			case "post:":
				pre = false
			default:
				if pre {
					idx.Pre[mod] = append(idx.Pre[mod], w)
				}
			}
		}
		return nil
	})
}

// ParseAlias reads modules.alias ("alias NAME MODULE") into idx.Alias,
// keeping only exact aliases: a pattern (with *, ? or [) names devices,
// not what a softdep asks for.
func (idx *Index) ParseAlias(b []byte) []problem.Problem {
	if idx.Alias == nil {
		idx.Alias = map[string][]string{}
	}
	return lines(b, func(n int, l string) *problem.Problem {
		f := strings.Fields(l)
		if len(f) != 3 || f[0] != "alias" {
			return &problem.Problem{Line: n, Msg: fmt.Sprintf("not an \"alias NAME MODULE\" line: %.80q", l)}
		}
		if strings.ContainsAny(f[1], "*?[") {
			return nil
		}
		idx.Alias[f[1]] = append(idx.Alias[f[1]], Name(f[2]))
		return nil
	})
}

// ParseBuiltin reads modules.builtin (one path a line) into idx.Builtin.
func (idx *Index) ParseBuiltin(b []byte) []problem.Problem {
	if idx.Builtin == nil {
		idx.Builtin = map[string]bool{}
	}
	return lines(b, func(n int, l string) *problem.Problem {
		if !validPath(l) {
			return &problem.Problem{Line: n, Msg: fmt.Sprintf("not a module path: %.80q", l)}
		}
		idx.Builtin[Name(l)] = true
		return nil
	})
}

// Resolve returns the modules to load, in order (each after everything
// it needs), for the modules or aliases wanted: their modules.dep
// dependencies and softdep pre: modules, resolved through aliases. A
// built-in module needs no loading. A wanted name that is neither a
// module, an alias nor built in is returned in missing; a softdep that
// resolves to nothing is skipped, as modprobe skips it.
func (idx *Index) Resolve(want []string) (order []string, missing []string) {
	done := map[string]bool{}
	var visit func(name string, soft bool)
	visit = func(name string, soft bool) {
		n := Name(name)
		if done[n] || done["alias:"+name] {
			return
		}
		if _, ok := idx.Path[n]; !ok {
			if idx.Builtin[n] {
				done[n] = true
				// A built-in module's softdeps still have to be there.
				for _, p := range idx.Pre[n] {
					visit(p, true)
				}
				return
			}
			if mods, ok := idx.Alias[name]; ok {
				// Marked first: a hostile alias may name itself.
				done["alias:"+name] = true
				for _, m := range mods {
					visit(m, soft)
				}
				return
			}
			if !soft {
				missing = append(missing, name)
			}
			done[n] = true
			return
		}
		done[n] = true // before the recursion: depmod refuses cycles, a hostile file may not
		for _, p := range idx.Pre[n] {
			visit(p, true)
		}
		// modules.dep lists the deepest dependency last: load from the end.
		deps := idx.Deps[n]
		for i := len(deps) - 1; i >= 0; i-- {
			visit(deps[i], false)
		}
		order = append(order, n)
	}
	for _, w := range want {
		visit(w, false)
	}
	return order, missing
}

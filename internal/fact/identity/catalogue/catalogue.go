// Package catalogue is the one list of what makes a Linux guest one
// machine rather than another: for each identity item, where it lives on
// each stack, what a template must hold of it, which sealprep operation
// handles it and how clones are compared on it. sealprep's plan and
// verify, the template record, guestcheck's template and leak
// judgements and guestid's comparison all take their paths from here;
// test/arch fails a package that spells one of them itself.
//
// It holds data and the one generic reader (Find) and imports no other
// fact, so that every reader can use it.
package catalogue

import (
	"path"
	"slices"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

// Rule is what a sealed template holds of an item.
type Rule string

// The rules a template is held to.
const (
	// Absent: no such file; nothing regenerates it because nothing needs
	// one before the service that writes it runs.
	Absent Rule = "absent"
	// Empty: present and empty, so that systemd fills it at first boot
	// (machine-id(5): an empty file, not a missing one, on a read-only
	// root).
	Empty Rule = "empty"
	// Regenerated: absent, and something in the template makes a new one
	// at first boot (sshd-keygen, cloud-init's ssh module, dpkg-reconfigure).
	Regenerated Rule = "regenerated"
	// Unpinned: the file stays, without the per-machine part (a MAC
	// match, a machine ID on the kernel command line).
	Unpinned Rule = "unpinned"
)

// Place is one location of an item on one stack: a file, or the files
// of a directory whose names match Match (path.Match; "" for every file).
type Place struct {
	Stack string
	Path  string
	// Dir makes Path a directory and Match a pattern for its entries.
	Dir   bool
	Match string
}

// Item is one entry of the catalogue.
type Item struct {
	// Name is the item's stable name, as the template record and reports
	// give it.
	Name string
	// What says in a few words what the item is, as a finding names it.
	What string
	// Places are where it lives, per stack and distribution family.
	Places []Place
	// Rule is what a sealed template holds.
	Rule Rule
	// Op is the sealprep operation that brings the template to Rule.
	Op string
	// Compare is the guestid item clones are compared on ("" when clones
	// are not compared on it: a secret nobody can read from outside).
	Compare string
	// Shared says what clones that keep the item share, for a warning
	// about an item kept by choice.
	Shared string
	// Reader names the one function that reads the item when its content
	// decides (a MAC match, a word on a command line); "" means Find.
	Reader string
	// Source is where the entry comes from: manual pages, the upstream
	// source, the competing tool that clears it.
	Source string
}

// Found is one place of an item that a root holds.
type Found struct {
	Item string
	Path string
	// Kind is what Path is: a regular file or a symlink.
	Kind fs.Kind
}

// Find lists the places of it that r holds: the file itself for a file
// place (a link counts: it would be cloned too), and each matching
// regular file or link of a directory place. Sorted by place order, then
// name. It is the reader of every item whose Reader is "".
func (it Item) Find(r fs.Reader) []Found {
	var out []Found
	for _, pl := range it.Places {
		if !pl.Dir {
			if e, err := r.Lstat(pl.Path); err == nil && (e.Kind == fs.KindRegular || e.Kind == fs.KindSymlink) {
				out = append(out, Found{Item: it.Name, Path: pl.Path, Kind: e.Kind})
			}
			continue
		}
		ents, err := r.ReadDir(pl.Path)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if e.Kind != fs.KindRegular && e.Kind != fs.KindSymlink {
				continue
			}
			if ok, _ := path.Match(pl.Match, e.Name); pl.Match == "" || ok {
				out = append(out, Found{Item: it.Name, Path: path.Join(pl.Path, e.Name), Kind: e.Kind})
			}
		}
	}
	return out
}

// Paths lists the item's places as paths: a file's path, or a directory's
// path with its pattern joined ("/var/lib/dhcp/dhclient*.leases").
func (it Item) Paths() []string {
	out := make([]string, 0, len(it.Places))
	for _, pl := range it.Places {
		p := pl.Path
		if pl.Dir {
			p = path.Join(p, cmpOr(pl.Match, "*"))
		}
		out = append(out, p)
	}
	return out
}

// Files lists the item's file places, without directories.
func (it Item) Files() []string {
	var out []string
	for _, pl := range it.Places {
		if !pl.Dir {
			out = append(out, pl.Path)
		}
	}
	return out
}

// Dirs lists the item's directory places.
func (it Item) Dirs() []Place {
	var out []Place
	for _, pl := range it.Places {
		if pl.Dir {
			out = append(out, pl)
		}
	}
	return out
}

// OnStack lists the item's places on one stack.
func (it Item) OnStack(stack string) []Place {
	var out []Place
	for _, pl := range it.Places {
		if pl.Stack == stack {
			out = append(out, pl)
		}
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Lookup returns the item called name. The names are constants of this
// package; an unknown one is a programming error and panics, so that a
// renamed item cannot leave a reader silently looking nowhere.
func Lookup(name string) Item {
	i := slices.IndexFunc(Items, func(it Item) bool { return it.Name == name })
	if i < 0 {
		panic("catalogue: no identity item " + name)
	}
	return Items[i]
}

// ForOp lists the items an operation handles.
func ForOp(op string) []Item {
	var out []Item
	for _, it := range Items {
		if it.Op == op {
			out = append(out, it)
		}
	}
	return out
}

// ForCompare lists the items clones are compared on as one guestid item.
func ForCompare(item string) []Item {
	var out []Item
	for _, it := range Items {
		if it.Compare == item {
			out = append(out, it)
		}
	}
	return out
}

// Where finds the item a guest path belongs to, for a report that has a
// path and wants the item's words: the first item with a place that is
// the path or the directory holding it.
func Where(p string) (Item, bool) {
	for _, it := range Items {
		for _, pl := range it.Places {
			if p == pl.Path {
				return it, true
			}
			if pl.Dir && path.Dir(p) == pl.Path {
				if ok, _ := path.Match(pl.Match, path.Base(p)); pl.Match == "" || ok {
					return it, true
				}
			}
		}
	}
	return Item{}, false
}

// IsIdentityPath reports whether s, a string of some program, is one of
// the catalogue's places (a file, or a directory of such files); test/arch
// uses it to keep them here.
func IsIdentityPath(s string) bool {
	for _, it := range Items {
		for _, pl := range it.Places {
			if s == pl.Path {
				return true
			}
		}
	}
	return false
}

// DirPaths lists the paths of the item's directory places on one stack,
// in the catalogue's order (each stack's order of priority).
func (it Item) DirPaths(stack string) []string {
	var out []string
	for _, pl := range it.OnStack(stack) {
		if pl.Dir {
			out = append(out, pl.Path)
		}
	}
	return out
}

// FilePaths lists the paths of the item's file places on one stack.
func (it Item) FilePaths(stack string) []string {
	var out []string
	for _, pl := range it.OnStack(stack) {
		if !pl.Dir {
			out = append(out, pl.Path)
		}
	}
	return out
}

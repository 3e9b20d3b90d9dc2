package seal

import (
	"context"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

var opPackageCache = Operation{
	ID:      "package-cache",
	Default: true,
	Summary: "remove cached package files (apt archives and pkgcache, dnf, yum, zypp); directories stay",
	Kept:    keptMany("cached package files"),
	Doc: Doc{
		What: "removes regular files under `/var/cache/apt/archives` (not `lock`), " +
			"`/var/cache/apt/*pkgcache.bin`, `/var/cache/dnf`, `/var/cache/yum`, `/var/cache/zypp*`; " +
			"directories stay",
		Why: "size, and what the template downloaded",
	},
	Plan: planPackageCache,
}

func planPackageCache(ctx context.Context, p *Planner) ([]Action, error) {
	const why = "downloaded packages and indexes: size, and a record of what the template fetched"
	var out []Action
	visit := func(name string, e fs.Entry) {
		// apt's lock file is apt's, not cache; dirs stay so tools find them.
		if e.Kind == fs.KindRegular && e.Name != "lock" {
			out = append(out, Action{Kind: Remove, Path: name, Kinds: regular, Reason: why})
		}
	}
	dirs := []string{"/var/cache/apt/archives", "/var/cache/dnf", "/var/cache/yum"}
	if ents, err := p.readDir("/var/cache"); err != nil {
		return nil, err
	} else {
		for _, e := range ents {
			if strings.HasPrefix(e.Name, "zypp") && e.Kind == fs.KindDir {
				dirs = append(dirs, "/var/cache/"+e.Name)
			}
		}
	}
	for _, d := range dirs {
		if err := p.walk(d, nil, visit); err != nil {
			return nil, err
		}
	}
	acts, err := p.removePaths([]string{"/var/cache/apt/pkgcache.bin", "/var/cache/apt/srcpkgcache.bin"}, regular, why)
	if err != nil {
		return nil, err
	}
	return append(out, acts...), nil
}

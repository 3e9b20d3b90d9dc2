package identity

import (
	"errors"
	iofs "io/fs"
	"path"
	"sort"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
	"github.com/guestcheck/guestcheck/internal/parse/sshdconfig"
)

// DefaultHostKeys are the host keys sshd loads when its configuration
// names none.
var DefaultHostKeys = catalogue.Lookup(catalogue.SSHHostKeys).Files()

// SSHDSource lets sshdconfig.Load read sshd_config and its Include files
// through a guest root.
func SSHDSource(r fs.Reader) sshdconfig.Source { return sshdSource{r} }

type sshdSource struct{ r fs.Reader }

// ReadFile reads a guest file through the root.
func (s sshdSource) ReadFile(name string) ([]byte, error) { return s.r.ReadFile(name) }

// Glob expands pattern one path component at a time through the root,
// sorted as glob(3) sorts. A directory that cannot be listed matches
// nothing, as glob(3) without GLOB_ERR has it.
func (s sshdSource) Glob(pattern string) ([]string, error) {
	parts := strings.Split(strings.TrimPrefix(path.Clean(pattern), "/"), "/")
	cur := []string{"/"}
	for _, p := range parts {
		var next []string
		for _, dir := range cur {
			if !strings.ContainsAny(p, "*?[") {
				if _, err := s.r.Stat(path.Join(dir, p)); err == nil || !errors.Is(err, iofs.ErrNotExist) {
					next = append(next, path.Join(dir, p))
				}
				continue
			}
			ents, err := s.r.ReadDir(dir)
			if err != nil {
				continue
			}
			for _, e := range ents {
				if strings.HasPrefix(e.Name, ".") && !strings.HasPrefix(p, ".") {
					continue
				}
				if ok, err := path.Match(p, e.Name); err != nil {
					return nil, err
				} else if ok {
					next = append(next, path.Join(dir, e.Name))
				}
			}
		}
		cur = next
	}
	sort.Strings(cur)
	return cur, nil
}

// SSHDHostKeys lists the host key files sshd loads under configuration
// c: its global HostKey lines in order, each once, or DefaultHostKeys
// when there are none. def reports the latter.
func SSHDHostKeys(c sshdconfig.Config) (paths []string, def bool) {
	places, def := SSHDHostKeyPlaces(c)
	for _, p := range places {
		paths = append(paths, p.Path)
	}
	return paths, def
}

// HostKeyPlace is a host key file sshd loads and where that is said: the
// HostKey line ("file:line"), or "default".
type HostKeyPlace struct{ Path, At string }

// SSHDHostKeyPlaces is SSHDHostKeys with where each path comes from: the
// one list of host keys that sealprep's ssh-host-keys, guestid and the
// ssh check read.
func SSHDHostKeyPlaces(c sshdconfig.Config) (places []HostKeyPlace, def bool) {
	seen := map[string]bool{}
	for _, d := range c.All("HostKey") {
		p := d.Value()
		if p == "" {
			continue
		}
		if !path.IsAbs(p) {
			p = "/" + p
		}
		if p = path.Clean(p); !seen[p] {
			seen[p] = true
			places = append(places, HostKeyPlace{p, d.At()})
		}
	}
	if len(places) == 0 {
		for _, p := range DefaultHostKeys {
			places = append(places, HostKeyPlace{p, "default"})
		}
		return places, true
	}
	return places, false
}

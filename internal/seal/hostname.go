package seal

import (
	"context"
	"path"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/hostnamefile"
)

var opHostname = Operation{
	ID:      "hostname",
	Default: true,
	Summary: "empty /etc/hostname in place; drop HOSTNAME=/DHCP_HOSTNAME= from RH ifcfg files; report /etc/hosts lines",
	Kept:    keptOne("the hostname"),
	Doc: Doc{
		What: "truncates `/etc/hostname` (and a regular `/etc/HOSTNAME`, SUSE) in place; drops " +
			"`HOSTNAME=`/`DHCP_HOSTNAME=` from `/etc/sysconfig/network-scripts/ifcfg-*` and " +
			"`HOSTNAME=` from `/etc/sysconfig/network` (RHEL); reports, without editing, `/etc/hosts` " +
			"lines naming the old host. A file of blank lines names no host: emptying it is a tidy " +
			"change (verify warns, the template is sealed)",
		Why: "an empty hostname lets DHCP or cloud-init name the clone; sealprep never writes " +
			"`localhost.localdomain`",
	},
	Plan: planHostname,
}

func planHostname(ctx context.Context, p *Planner) ([]Action, error) {
	// The template's name, for the /etc/hosts lines that still carry it.
	static := hostnamefile.ReadStatic(p.Root)
	if err := static.ReadErr; err != nil && !skippedRead(err) {
		return nil, err
	}
	old := static.Name
	// Empty, not "localhost.localdomain": systemd then takes the name from
	// DHCP or cloud-init, and clones do not all resolve to one fixed name.
	const why = "a fixed hostname makes every clone claim the template's name"
	var out []Action
	for _, f := range hostnameFiles {
		e, ok, err := p.lstat(f)
		if err != nil {
			return nil, err
		}
		if !ok || e.Kind == fs.KindSymlink {
			continue // SUSE links /etc/HOSTNAME to /etc/hostname
		}
		acts := p.truncateEntry(f, e, -1, why)
		if len(acts) > 0 {
			// Only blank lines: systemd and hostnamectl read no name from
			// it, so the template is sealed already.
			if b, ok, err := p.readFile(f); err == nil && ok && strings.TrimSpace(string(b)) == "" {
				acts[0].Tidy = "it holds only blank space, which names no host"
			}
		}
		out = append(out, acts...)
	}
	ents, err := p.readDir(ifcfgDirs[0])
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name, "ifcfg-") {
			continue
		}
		acts, err := p.rewritePath(path.Join(ifcfgDirs[0], e.Name), why, func(b []byte) []byte {
			return stripKeys(b, "HOSTNAME", "DHCP_HOSTNAME")
		})
		if err != nil {
			return nil, err
		}
		out = append(out, acts...)
	}
	acts, err := p.rewritePath(ifcfgDirs[1], why, func(b []byte) []byte { return stripKeys(b, "HOSTNAME") })
	if err != nil {
		return nil, err
	}
	out = append(out, acts...)
	if b, ok, err := p.readFile("/etc/hosts"); err == nil && ok {
		for _, l := range hostsMentions(b, old) {
			p.Note("/etc/hosts", "names the template's hostname, not edited: %q", l)
		}
	}
	return out, nil
}

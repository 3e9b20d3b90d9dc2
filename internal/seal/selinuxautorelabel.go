package seal

import (
	"context"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

var opSELinuxAutorelabel = Operation{
	ID:      "selinux-autorelabel",
	Default: false,
	Summary: "on an image with SELinux enforcing or permissive, create /.autorelabel: the first boot relabels every file (--autorelabel)",
	Doc: Doc{
		Tag: "`--autorelabel`",
		What: "creates an empty `/.autorelabel` when `/etc/selinux/config` says `SELINUX=enforcing` or " +
			"`permissive`. See [SELinux labels](#selinux-labels-offline)",
		Why: "the first boot then relabels every file and reboots: on a large image that has cost " +
			"users hours",
	},
	Plan: planSELinuxAutorelabel,
}

func planSELinuxAutorelabel(ctx context.Context, p *Planner) ([]Action, error) {
	b, ok, err := p.readFile("/etc/selinux/config")
	if err != nil || !ok {
		return nil, err
	}
	if mode, _ := ParseSELinuxConfig(b); mode != "enforcing" && mode != "permissive" {
		p.Note("/etc/selinux/config", "SELinux is %q on this image: no relabel needed", mode)
		return nil, nil
	}
	if _, ok, err := p.lstat("/.autorelabel"); err != nil || ok {
		return nil, err
	}
	return []Action{{Kind: WriteFile, Path: "/.autorelabel", Mode: 0o644, Expect: fs.SHA256(nil),
		Reason: "files created offline carry no SELinux label; the first boot relabels the whole filesystem (this can take long on a large image), then reboots"}}, nil
}

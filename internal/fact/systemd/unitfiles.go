package systemd

import (
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

// Enablement is `systemctl is-enabled` reduced to what an image root
// shows without a running manager: "masked" when /etc/systemd/system/UNIT
// (or /run's) links to /dev/null, "enabled" when a .wants or .requires
// directory of /etc/systemd/system links to it, else "disabled". unit is
// the name that matched, "" for disabled. Presets, generators and
// [Install] Alias= are not evaluated.
func Enablement(r *fs.Root, units ...string) (state, unit string) {
	for _, u := range units {
		for _, dir := range []string{"/etc/systemd/system", "/run/systemd/system"} {
			if t, err := r.Readlink(dir + "/" + u); err == nil && t == "/dev/null" {
				return "masked", u
			}
		}
	}
	ents, err := r.ReadDir("/etc/systemd/system")
	if err != nil {
		return "disabled", ""
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name, ".wants") && !strings.HasSuffix(e.Name, ".requires") {
			continue
		}
		for _, u := range units {
			if _, err := r.Lstat("/etc/systemd/system/" + e.Name + "/" + u); err == nil {
				return "enabled", u
			}
		}
	}
	return "disabled", ""
}

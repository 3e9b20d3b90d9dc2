// Package cloudinittest builds fake guest roots for cloud-init tests: files
// at their guest paths, a fake /proc process tree, a fake systemd, and
// roots rebuilt from the real captures in ../testdata/real. It is imported
// by tests only.
package cloudinittest

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/systemd"
)

// Root is a directory standing for a guest "/" under a test's TempDir.
type Root struct {
	t   testing.TB
	Dir string
}

// New returns an empty root that looks booted with systemd
// (/run/systemd/system exists), since that is what every live test wants.
func New(t testing.TB) *Root {
	t.Helper()
	r := &Root{t: t, Dir: t.TempDir()}
	r.Mkdir("/run/systemd/system")
	return r
}

func (r *Root) host(p string) string { return filepath.Join(r.Dir, fs.Clean(p)) }

// Write creates guest file p with data, making parent directories.
func (r *Root) Write(p, data string) *Root {
	r.t.Helper()
	hp := r.host(p)
	if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(hp, []byte(data), 0o644); err != nil {
		r.t.Fatal(err)
	}
	return r
}

// Mkdir creates guest directory p.
func (r *Root) Mkdir(p string) *Root {
	r.t.Helper()
	if err := os.MkdirAll(r.host(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	return r
}

// Symlink makes guest path p a symlink to target (stored as given).
func (r *Root) Symlink(target, p string) *Root {
	r.t.Helper()
	hp := r.host(p)
	if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Symlink(target, hp); err != nil {
		r.t.Fatal(err)
	}
	return r
}

// Chtime sets guest file p's modification time.
func (r *Root) Chtime(p string, mt time.Time) *Root {
	r.t.Helper()
	if err := os.Chtimes(r.host(p), mt, mt); err != nil {
		r.t.Fatal(err)
	}
	return r
}

// Remove deletes guest path p.
func (r *Root) Remove(p string) *Root {
	r.t.Helper()
	if err := os.RemoveAll(r.host(p)); err != nil {
		r.t.Fatal(err)
	}
	return r
}

// Installed adds /usr/bin/cloud-init.
func (r *Root) Installed() *Root { return r.Write("/usr/bin/cloud-init", "#!/usr/bin/python3\n") }

// Uptime writes /proc/uptime.
func (r *Root) Uptime(d time.Duration) *Root {
	return r.Write("/proc/uptime", fmt.Sprintf("%.2f %.2f\n", d.Seconds(), d.Seconds()*1.5))
}

// Proc adds process pid with parent ppid and arguments args to the fake
// /proc; comm is what the kernel would show (may hold spaces and
// parentheses).
func (r *Root) Proc(pid, ppid int, comm string, args ...string) *Root {
	r.t.Helper()
	r.Write(fmt.Sprintf("/proc/%d/stat", pid),
		fmt.Sprintf("%d (%s) S %d %d %d 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 123 0 0\n", pid, comm, ppid, pid, pid))
	cmd := ""
	if len(args) > 0 {
		cmd = strings.Join(args, "\x00") + "\x00"
	}
	return r.Write(fmt.Sprintf("/proc/%d/cmdline", pid), cmd)
}

// Self makes /proc/self point at pid, the way procfs does (a relative
// symlink), which must already have been added with Proc.
func (r *Root) Self(pid int) *Root { return r.Symlink(fmt.Sprint(pid), "/proc/self") }

// Open opens the root; it is closed when the test ends.
func (r *Root) Open() *fs.Root {
	r.t.Helper()
	root, err := fs.Open(r.Dir)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { root.Close() })
	return root
}

// Systemd is a fake systemd.Manager answering from States.
type Systemd struct {
	// States are the known units; others are reported not-found.
	States []systemd.UnitState
	// Err, when set, is returned instead.
	Err error
}

// Units implements systemd.Manager.
func (s *Systemd) Units(ctx context.Context, names ...string) ([]systemd.UnitState, error) {
	if s.Err != nil {
		return nil, s.Err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]systemd.UnitState, 0, len(names))
	for _, n := range names {
		u := systemd.UnitState{Name: n, LoadState: "not-found", ActiveState: "inactive", SubState: "dead"}
		for _, s := range s.States {
			if s.Name == n {
				u = s
			}
		}
		out = append(out, u)
	}
	return out, nil
}

// Unit is a loaded unit in the given states.
func Unit(name, active, sub, fileState string) systemd.UnitState {
	return systemd.UnitState{Name: name, LoadState: "loaded", ActiveState: active, SubState: sub, UnitFileState: fileState}
}

// ParseUnits reads `systemctl show -p Id,LoadState,ActiveState,...` output
// for several units: blocks of KEY=VALUE lines separated by blank lines.
func ParseUnits(b []byte) ([]systemd.UnitState, error) {
	var out []systemd.UnitState
	for _, block := range strings.Split(strings.TrimSpace(string(b)), "\n\n") {
		u := systemd.UnitState{}
		for _, line := range strings.Split(block, "\n") {
			k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
			if !ok {
				continue
			}
			switch k {
			case "Id":
				u.Name = v
			case "LoadState":
				u.LoadState = v
			case "ActiveState":
				u.ActiveState = v
			case "SubState":
				u.SubState = v
			case "UnitFileState":
				u.UnitFileState = v
			}
		}
		if u.Name == "" {
			return nil, fmt.Errorf("unit block without Id: %q", block)
		}
		if u.LoadState == "" {
			// Captures taken from inside runcmd only recorded the
			// active states; a unit that has one is loaded.
			u.LoadState = "loaded"
		}
		out = append(out, u)
	}
	return out, nil
}

// guestPath maps a capture file to where it lives in a guest.
func guestPath(name string) string {
	switch name {
	case "status.json", "result.json", "instance-data.json":
		return path.Join("/run/cloud-init", name)
	case "boot-finished":
		return "/var/lib/cloud/instance/boot-finished"
	}
	return ""
}

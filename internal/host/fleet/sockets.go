package fleet

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/guestcheck/guestcheck/internal/host/qga"
)

// Socket is one --agent-socket: a guest agent's chardev socket (QEMU's
// -chardev socket,path=...,server=on,wait=off for the
// org.qemu.guest_agent.0 port).
type Socket struct {
	Name, Path string
}

// ParseSocket reads --agent-socket's "[NAME=]PATH"; the name defaults to
// the socket file's base name without its extension ("vm1.qga" -> "vm1").
func ParseSocket(v string) (Socket, error) {
	name, p, ok := strings.Cut(v, "=")
	if !ok || strings.Contains(name, "/") {
		name, p = "", v
	}
	if p == "" {
		return Socket{}, errors.New("no socket path")
	}
	if name == "" {
		base := filepath.Base(p)
		name = strings.TrimSuffix(base, filepath.Ext(base))
		if name == "" {
			name = base
		}
	}
	return Socket{Name: name, Path: p}, nil
}

// SocketSource surveys the agent sockets named on the command line.
type SocketSource []Socket

// Targets lists the sockets in command-line order. A missing socket is
// still a target: surveying it reports why it cannot be reached.
func (s SocketSource) Targets(context.Context) ([]Target, error) {
	out := make([]Target, 0, len(s))
	for _, sk := range s {
		out = append(out, socketTarget(sk.Name, "socket", sk.Path))
	}
	return out, nil
}

// socketTarget dials a chardev socket with the qga client.
func socketTarget(name, source, p string) Target {
	return Target{Name: name, Source: source, Dial: func(ctx context.Context) (Agent, error) {
		c, err := qga.Dial(ctx, "unix", p)
		if err != nil {
			if ns := notSocket(p); errors.Is(err, syscall.ECONNREFUSED) && ns != nil {
				return nil, ns
			}
			return nil, err
		}
		return c, nil
	}}
}

// notSocketError is a socket path that is some other kind of file, which
// connect(2) refuses as it refuses a socket no QEMU listens on.
type notSocketError struct{ path, kind string }

func (e *notSocketError) Error() string {
	return fmt.Sprintf("%s is %s, not a socket: name the guest agent's chardev socket (QEMU -chardev socket,path=PATH,server=on,wait=off)", e.path, e.kind)
}

// notSocket says what p is when it is no socket, or nil.
func notSocket(p string) error {
	st, err := os.Stat(p)
	if err != nil || st.Mode()&iofs.ModeSocket != 0 {
		return nil
	}
	kind := "a regular file"
	switch {
	case st.IsDir():
		kind = "a directory"
	case st.Mode()&iofs.ModeNamedPipe != 0:
		kind = "a named pipe"
	case st.Mode()&iofs.ModeDevice != 0:
		kind = "a device"
	}
	return &notSocketError{OneLine(p, 200), kind}
}

// ProxmoxDir is where Proxmox VE's qemu-server puts each VM's guest
// agent socket, <vmid>.qga. A variable so that tests can point it at a
// directory of their own.
var ProxmoxDir = "/var/run/qemu-server"

// ProxmoxSource surveys every <vmid>.qga socket in ProxmoxDir, named by
// VMID. Proxmox creates the socket only for a VM with the agent enabled
// (qm set VMID --agent 1) while it runs.
type ProxmoxSource struct{ Dir string }

// HaveProxmox reports whether ProxmoxDir exists, for the default sources.
func HaveProxmox() bool {
	st, err := os.Stat(ProxmoxDir)
	return err == nil && st.IsDir()
}

// Targets lists the sockets by VMID, in numeric order; no directory is an
// error (this is no Proxmox host), no socket in it an empty list.
func (p ProxmoxSource) Targets(context.Context) ([]Target, error) {
	dir := p.Dir
	if dir == "" {
		dir = ProxmoxDir
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, iofs.ErrNotExist) {
		// Named with --proxmox (the default source only when it exists):
		// no directory is no Proxmox, not an empty fleet.
		return nil, fmt.Errorf("no directory %s: not a Proxmox VE host, or qemu-server is not installed", dir)
	}
	if errors.Is(err, syscall.ENOTDIR) {
		return nil, fmt.Errorf("%s is not a directory: not a Proxmox VE host", dir)
	}
	if err != nil {
		return nil, err
	}
	type vm struct {
		id   int
		name string
	}
	var vms []vm
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".qga")
		n, err := strconv.Atoi(id)
		if !ok || err != nil || n <= 0 || e.Type()&iofs.ModeSocket == 0 {
			continue
		}
		vms = append(vms, vm{n, id})
	}
	slices.SortFunc(vms, func(a, b vm) int { return a.id - b.id })
	out := make([]Target, 0, len(vms))
	for _, v := range vms {
		out = append(out, socketTarget(v.name, "proxmox", filepath.Join(dir, v.name+".qga")))
	}
	return out, nil
}

// Filter keeps the targets whose name matches one of the shell patterns
// (path.Match syntax: *, ?, [...]); no pattern keeps them all.
func Filter(ts []Target, patterns []string) []Target {
	if len(patterns) == 0 {
		return ts
	}
	var out []Target
	for _, t := range ts {
		for _, p := range patterns {
			if ok, _ := path.Match(p, t.Name); ok {
				out = append(out, t)
				break
			}
		}
	}
	return out
}

// CheckPattern refuses a malformed --name pattern up front.
func CheckPattern(p string) error {
	if _, err := path.Match(p, ""); err != nil {
		return fmt.Errorf("%q: not a pattern (use *, ? and [...])", p)
	}
	return nil
}

func (s SocketSource) targets() []Target {
	ts, _ := s.Targets(context.Background())
	return ts
}

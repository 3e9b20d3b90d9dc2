package qgafake

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/qga"
)

// FreezeCommands are the commands a Guest adds to guest-info.
var FreezeCommands = []string{"guest-fsfreeze-status", "guest-fsfreeze-freeze", "guest-fsfreeze-thaw",
	"guest-get-fsinfo", "guest-file-seek", "guest-get-osinfo"}

// FS is one entry of guest-get-fsinfo.
type FS struct {
	Name       string `json:"name"`
	Mountpoint string `json:"mountpoint"`
	Type       string `json:"type"`
}

// Guest is the guest behind an Agent that freezes: its filesystems, its
// freeze state (shared by every connection, as a guest's is), its files
// (read through guest-file-*) and its fsfreeze hook.
type Guest struct {
	// FS is guest-get-fsinfo's answer; a freeze freezes them all.
	FS []FS
	// OSID is guest-get-osinfo's id ("debian", "rhel"); empty: the
	// command fails as on an old agent.
	OSID string
	// FreezeTakes is how long guest-fsfreeze-freeze takes to answer
	// (a hook that sleeps, a flush under load).
	FreezeTakes time.Duration
	// HookError fails the freeze as qemu-ga does when its hook exits
	// non-zero; nothing is frozen.
	HookError *qga.Error
	// HookLog, when set, is the hook's log file: a freeze appends
	// HookLines to it, a thaw ThawLines.
	HookLog              string
	HookLines, ThawLines string
	// SlowStatus delays guest-fsfreeze-status while frozen: a drill can
	// be caught (and killed) with the guest frozen.
	SlowStatus time.Duration

	// busy serialises the freeze commands across connections, as
	// qemu-ga's one main loop does: a thaw waits for a freeze that runs.
	busy   sync.Mutex
	mu     sync.Mutex
	frozen bool
	files  map[string][]byte
	open   map[int]*openFile
	handle int
	thaws  int
}

type openFile struct {
	path string
	pos  int
}

// SetFrozen sets the freeze state, as a snapshot in progress would.
func (g *Guest) SetFrozen(b bool) {
	g.mu.Lock()
	g.frozen = b
	g.mu.Unlock()
}

// Frozen reports the freeze state.
func (g *Guest) Frozen() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.frozen
}

// Thaws counts the thaws that thawed something.
func (g *Guest) Thaws() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.thaws
}

// WriteFile sets a file's content.
func (g *Guest) WriteFile(path string, b []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.files == nil {
		g.files = map[string][]byte{}
	}
	g.files[path] = append([]byte(nil), b...)
}

// answer replies to the freeze and file commands; ok is false for any
// other command.
func (g *Guest) answer(cmd string, args json.RawMessage) (reply []byte, ok bool) {
	switch cmd {
	case "guest-fsfreeze-status", "guest-fsfreeze-freeze", "guest-fsfreeze-thaw":
		g.busy.Lock()
		defer g.busy.Unlock()
	}
	switch cmd {
	case "guest-fsfreeze-status":
		if g.Frozen() {
			time.Sleep(g.SlowStatus)
			return ret("frozen"), true
		}
		return ret("thawed"), true
	case "guest-fsfreeze-freeze":
		return g.freeze(), true
	case "guest-fsfreeze-thaw":
		return g.thaw(), true
	case "guest-get-fsinfo":
		fs := g.FS
		if fs == nil {
			fs = []FS{}
		}
		return ret(fs), true
	case "guest-get-osinfo":
		if g.OSID == "" {
			return errorReply(&qga.Error{Class: "CommandNotFound", Desc: "The command guest-get-osinfo has not been found"}), true
		}
		return ret(map[string]string{"id": g.OSID}), true
	case "guest-file-open", "guest-file-read", "guest-file-seek", "guest-file-close":
		return g.file(cmd, args), true
	}
	return nil, false
}

func (g *Guest) freeze() []byte {
	time.Sleep(g.FreezeTakes)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.frozen {
		return errorReply(&qga.Error{Class: "GenericError", Desc: "Command guest-fsfreeze-freeze is disabled while the filesystem is frozen"})
	}
	if g.HookLog != "" {
		g.appendLocked(g.HookLog, g.HookLines)
	}
	if g.HookError != nil {
		return errorReply(g.HookError)
	}
	g.frozen = true
	return ret(len(g.FS))
}

func (g *Guest) thaw() []byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	if g.frozen {
		n = len(g.FS)
		g.thaws++
	}
	g.frozen = false
	if g.HookLog != "" {
		g.appendLocked(g.HookLog, g.ThawLines)
	}
	return ret(n)
}

func (g *Guest) appendLocked(path, s string) {
	if g.files == nil {
		g.files = map[string][]byte{}
	}
	g.files[path] = append(g.files[path], s...)
}

func (g *Guest) file(cmd string, args json.RawMessage) []byte {
	var r struct {
		Path   string `json:"path"`
		Handle int    `json:"handle"`
		Count  int    `json:"count"`
		Offset int    `json:"offset"`
		Whence any    `json:"whence"`
	}
	json.Unmarshal(args, &r)
	g.mu.Lock()
	defer g.mu.Unlock()
	if cmd == "guest-file-open" {
		if _, ok := g.files[r.Path]; !ok {
			return errorReply(&qga.Error{Class: "GenericError", Desc: "failed to open file '" + r.Path + "' (mode: 'r'): No such file or directory"})
		}
		if g.open == nil {
			g.open = map[int]*openFile{}
		}
		g.handle++
		g.open[g.handle] = &openFile{path: r.Path}
		return ret(g.handle)
	}
	f := g.open[r.Handle]
	if f == nil {
		return errorReply(&qga.Error{Class: "GenericError", Desc: "handle '" + strconv.Itoa(r.Handle) + "' has not been found"})
	}
	data := g.files[f.path]
	switch cmd {
	case "guest-file-close":
		delete(g.open, r.Handle)
		return ret(struct{}{})
	case "guest-file-seek":
		switch r.Whence {
		case "end", float64(2):
			f.pos = len(data) + r.Offset
		case "cur", float64(1):
			f.pos += r.Offset
		default:
			f.pos = r.Offset
		}
		f.pos = max(0, f.pos)
		return ret(map[string]any{"position": f.pos, "eof": f.pos >= len(data)})
	}
	end := min(len(data), f.pos+r.Count)
	chunk := data[min(f.pos, len(data)):end]
	f.pos = max(f.pos, end)
	return ret(map[string]any{"count": len(chunk), "buf-b64": base64.StdEncoding.EncodeToString(chunk), "eof": f.pos >= len(data)})
}

// Package qgafake is an in-process QEMU guest agent for tests: it speaks
// qemu-ga's protocol (newline-delimited JSON, the 0xFF resynchronisation)
// on a net.Conn or a unix socket and answers guest-sync-delimited,
// guest-ping, guest-info, guest-exec and guest-exec-status the way
// qemu-ga does, with delays, errors, hangs and disconnects on demand. It
// lets guestcheck fleet and sealprep prove be tested against hundreds of
// agents without a VM.
package qgafake

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net"
	"sync"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/qga"
)

// Program is what a guest-exec'd program does: its exit status and
// output, or the agent's own error when it cannot start it.
type Program struct {
	Exit   int
	Signal int // non-zero: killed by this signal (exitcode absent)
	Stdout []byte
	Stderr []byte
	// Truncated sets qemu-ga's out-truncated flag.
	Truncated bool
	// RawStdout, when set, is sent as out-data instead of Stdout's
	// base64, to test what a broken agent sends.
	RawStdout string
	// Runs is how long the program runs: guest-exec-status says
	// exited=false until then.
	Runs time.Duration
	// StartError is guest-exec's error reply (the program could not be
	// started: not installed, permission denied).
	StartError *qga.Error
}

// Agent is one fake agent. Set its fields before serving; they are read
// concurrently afterwards and must not change.
type Agent struct {
	// Delay is added before every reply.
	Delay time.Duration
	// Mute reads requests and never answers: an agent that is not
	// running in the guest (QEMU still accepts the connection).
	Mute bool
	// HangOn stops answering from the first request for this command on.
	HangOn string
	// CloseOn closes the connection on the first request for this
	// command: the VM went away mid-survey.
	CloseOn string
	// Disabled lists commands the agent's RPC filter blocks: guest-info
	// says enabled=false and calling one is the error qemu-ga answers
	// under --block-rpcs or --allow-rpcs (class CommandNotFound, "Command
	// X has been disabled", as TestRealQemuGA sees from Debian's qemu-ga).
	Disabled []string
	// Errors answers a command with this error instead.
	Errors map[string]*qga.Error
	// Run answers guest-exec for path and args.
	Run func(path string, args []string) Program
	// Guest, when set, answers the freeze, fsinfo and file commands
	// (FreezeCommands, guest-file-*) from its state.
	Guest *Guest

	mu    sync.Mutex
	calls []string
	pid   int
	procs map[int]proc
}

type proc struct {
	p     Program
	start time.Time
}

// Commands are every command known to the fake, as guest-info lists them.
var Commands = []string{"guest-sync-delimited", "guest-ping", "guest-info", "guest-exec", "guest-exec-status",
	"guest-file-open", "guest-file-read", "guest-file-write", "guest-file-close", "guest-shutdown"}

// Calls returns the commands received so far, in order.
func (a *Agent) Calls() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.calls...)
}

// Listen serves the agent on a new unix socket at path, one goroutine
// per connection, until the returned listener is closed.
func (a *Agent) Listen(path string) (net.Listener, error) {
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go a.Serve(c)
		}
	}()
	return l, nil
}

// Serve answers requests on conn until it is closed, then closes it.
func (a *Agent) Serve(conn net.Conn) {
	defer conn.Close()
	br := bufio.NewReader(conn)
	hung := false
	for {
		b, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		if a.Mute || hung {
			continue
		}
		var out bytes.Buffer
		if b[0] == 0xFF {
			// qemu-ga answers the lone 0xFF with a parse error.
			out.WriteString(`{"error": {"class": "GenericError", "desc": "JSON parse error, invalid token"}}` + "\n")
			b = b[1:]
		}
		var req struct {
			Execute   string          `json:"execute"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if json.Unmarshal(bytes.TrimSpace(b), &req) != nil {
			continue
		}
		a.mu.Lock()
		a.calls = append(a.calls, req.Execute)
		a.mu.Unlock()
		switch req.Execute {
		case a.CloseOn:
			return
		case a.HangOn:
			hung = true
			continue
		}
		if a.Delay > 0 {
			time.Sleep(a.Delay)
		}
		reply, prefix := a.answer(req.Execute, req.Arguments)
		if prefix {
			out.WriteByte(0xFF)
		}
		out.Write(reply)
		out.WriteByte('\n')
		if _, err := conn.Write(out.Bytes()); err != nil {
			return
		}
	}
}

// answer is the reply line to one request; prefix asks for the 0xFF
// that guest-sync-delimited puts before its reply.
func (a *Agent) answer(cmd string, args json.RawMessage) (reply []byte, prefix bool) {
	if e := a.Errors[cmd]; e != nil {
		return errorReply(e), false
	}
	for _, d := range a.Disabled {
		if d == cmd {
			return errorReply(&qga.Error{Class: "CommandNotFound", Desc: "Command " + cmd + " has been disabled"}), false
		}
	}
	if a.Guest != nil {
		if r, ok := a.Guest.answer(cmd, args); ok {
			return r, false
		}
	}
	switch cmd {
	case "guest-sync-delimited":
		var r struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(args, &r)
		return ret(r.ID), true
	case "guest-ping":
		return ret(struct{}{}), false
	case "guest-info":
		return ret(a.info()), false
	case "guest-exec":
		return a.exec(args), false
	case "guest-exec-status":
		return a.status(args), false
	}
	return errorReply(&qga.Error{Class: "CommandNotFound", Desc: "The command " + cmd + " has not been found"}), false
}

func (a *Agent) info() qga.Info {
	in := qga.Info{Version: "9.2.0"}
	cmds := Commands
	if a.Guest != nil {
		cmds = append(append([]string(nil), Commands...), FreezeCommands...)
	}
	for _, c := range cmds {
		en := true
		for _, d := range a.Disabled {
			en = en && d != c
		}
		in.SupportedCommands = append(in.SupportedCommands, qga.Command{Name: c, Enabled: en, SuccessResponse: c != "guest-shutdown"})
	}
	return in
}

func (a *Agent) exec(args json.RawMessage) []byte {
	var r struct {
		Path string   `json:"path"`
		Arg  []string `json:"arg"`
	}
	if err := json.Unmarshal(args, &r); err != nil || r.Path == "" {
		return errorReply(&qga.Error{Class: "GenericError", Desc: "Invalid parameter 'path'"})
	}
	var p Program
	if a.Run != nil {
		p = a.Run(r.Path, r.Arg)
	} else {
		p.StartError = NotInstalled(r.Path)
	}
	if p.StartError != nil {
		return errorReply(p.StartError)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.procs == nil {
		a.procs = map[int]proc{}
	}
	a.pid++
	a.procs[a.pid] = proc{p, time.Now()}
	return ret(map[string]int{"pid": a.pid})
}

func (a *Agent) status(args json.RawMessage) []byte {
	var r struct {
		PID int `json:"pid"`
	}
	json.Unmarshal(args, &r)
	a.mu.Lock()
	pr, ok := a.procs[r.PID]
	a.mu.Unlock()
	if !ok {
		return errorReply(&qga.Error{Class: "GenericError", Desc: "Invalid parameter 'pid'"})
	}
	if time.Since(pr.start) < pr.p.Runs {
		return ret(map[string]bool{"exited": false})
	}
	st := map[string]any{"exited": true}
	if pr.p.Signal != 0 {
		st["signal"] = pr.p.Signal
	} else {
		st["exitcode"] = pr.p.Exit
	}
	if pr.p.RawStdout != "" {
		st["out-data"] = pr.p.RawStdout
	} else if len(pr.p.Stdout) > 0 {
		st["out-data"] = base64.StdEncoding.EncodeToString(pr.p.Stdout)
	}
	if len(pr.p.Stderr) > 0 {
		st["err-data"] = base64.StdEncoding.EncodeToString(pr.p.Stderr)
	}
	if pr.p.Truncated {
		st["out-truncated"] = true
	}
	return ret(st)
}

// NotInstalled is qemu-ga's guest-exec error for a program that does not
// exist (glib's g_spawn message, with its typographic quotes).
func NotInstalled(path string) *qga.Error {
	return &qga.Error{Class: "GenericError", Desc: "Guest agent command failed, error was 'Failed to execute child process \u201c" + path + "\u201d (No such file or directory)'"}
}

// PermissionDenied is qemu-ga's guest-exec error when the exec is denied
// (a mode bit, or SELinux policy confining qemu-ga).
func PermissionDenied(path string) *qga.Error {
	return &qga.Error{Class: "GenericError", Desc: "Guest agent command failed, error was 'Failed to execute child process \u201c" + path + "\u201d (Permission denied)'"}
}

func ret(v any) []byte {
	b, err := json.Marshal(map[string]any{"return": v})
	if err != nil {
		return errorReply(&qga.Error{Class: "GenericError", Desc: "qgafake: " + err.Error()})
	}
	return b
}

func errorReply(e *qga.Error) []byte {
	b, _ := json.Marshal(map[string]any{"error": e})
	return b
}

package qga

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// agentFunc is an Agent that answers from a function: each reply is a
// JSON value decoded into result, or an error.
type agentFunc func(cmd string, args map[string]any) (any, error)

func (f agentFunc) Exec(_ context.Context, cmd string, args, result any) error {
	var m map[string]any
	b, _ := json.Marshal(args)
	json.Unmarshal(b, &m)
	v, err := f(cmd, m)
	if err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	b, _ = json.Marshal(v)
	return json.Unmarshal(b, result)
}

// fileAgent serves one file in chunks of at most chunk bytes and counts
// open and close calls.
func fileAgent(content string, chunk int, opened, closed *int) agentFunc {
	off := 0
	return func(cmd string, args map[string]any) (any, error) {
		switch cmd {
		case "guest-file-open":
			if args["mode"] != "r" {
				return nil, errors.New("opened for writing")
			}
			if args["path"] != "/etc/machine-id" {
				return nil, &Error{Class: "GenericError", Desc: "failed to open file '" + args["path"].(string) + "': No such file or directory"}
			}
			*opened++
			return 7, nil
		case "guest-file-read":
			n := min(int(args["count"].(float64)), chunk, len(content)-off)
			b := content[off : off+n]
			off += n
			return map[string]any{"count": n, "buf-b64": base64.StdEncoding.EncodeToString([]byte(b)), "eof": off == len(content)}, nil
		case "guest-file-close":
			*closed++
			return map[string]any{}, nil
		}
		return nil, &Error{Class: "CommandNotFound", Desc: cmd}
	}
}

func TestReadFile(t *testing.T) {
	ctx := context.Background()
	content := strings.Repeat("0123456789abcdef", 4) + "\n"
	var opened, closed int
	b, err := ReadFile(ctx, fileAgent(content, 10, &opened, &closed), "/etc/machine-id", 100)
	if err != nil || string(b) != content {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	if opened != 1 || closed != 1 {
		t.Errorf("opened %d, closed %d; want one each", opened, closed)
	}
	opened, closed = 0, 0
	if _, err := ReadFile(ctx, fileAgent(content, 10, &opened, &closed), "/etc/machine-id", 20); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile past the bound = %v, want ErrTooLarge", err)
	} else if closed != 1 {
		t.Errorf("a file past the bound was not closed")
	}
	var qe *Error
	if _, err := ReadFile(ctx, fileAgent(content, 10, &opened, &closed), "/nope", 20); !errors.As(err, &qe) || !strings.HasPrefix(err.Error(), "/nope: ") {
		t.Errorf("ReadFile of a missing file = %v", err)
	}
}

func TestRun(t *testing.T) {
	ctx := context.Background()
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	polls := 0
	var argv any
	a := agentFunc(func(cmd string, args map[string]any) (any, error) {
		switch cmd {
		case "guest-exec":
			argv = args["arg"]
			if args["capture-output"] != true {
				return nil, errors.New("output not captured")
			}
			return map[string]int{"pid": 42}, nil
		case "guest-exec-status":
			polls++
			if polls < 3 {
				return map[string]any{"exited": false}, nil
			}
			return map[string]any{"exited": true, "exitcode": 2, "out-data": enc("out"), "err-data": enc("err")}, nil
		}
		return nil, &Error{Class: "CommandNotFound", Desc: cmd}
	})
	start := time.Now()
	r, err := Run(ctx, a, "/usr/bin/guestcheck", []string{"--format", "json; rm -rf /"}, 100)
	if err != nil || r.Exit != 2 || string(r.Stdout) != "out" || string(r.Stderr) != "err" {
		t.Fatalf("Run = %+v, %v", r, err)
	}
	if got, _ := json.Marshal(argv); string(got) != `["--format","json; rm -rf /"]` {
		t.Errorf("arguments went as %s, want a JSON array as given", got)
	}
	// Backoff: 50 ms then 100 ms before the third poll.
	if d := time.Since(start); d < 140*time.Millisecond || d > 2*time.Second {
		t.Errorf("three polls took %v, want about 150 ms of backoff", d)
	}

	big := agentFunc(func(cmd string, _ map[string]any) (any, error) {
		if cmd == "guest-exec" {
			return map[string]int{"pid": 1}, nil
		}
		return map[string]any{"exited": true, "exitcode": 0, "out-data": enc(strings.Repeat("x", 500))}, nil
	})
	if _, err := Run(ctx, big, "/bin/x", nil, 100); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Run with output past the bound = %v, want ErrTooLarge", err)
	}

	hang := agentFunc(func(cmd string, _ map[string]any) (any, error) {
		if cmd == "guest-exec" {
			return map[string]int{"pid": 1}, nil
		}
		return map[string]any{"exited": false}, nil
	})
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := Run(cctx, hang, "/bin/sleep", nil, 100); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run of a program that never exits = %v, want the deadline", err)
	}

	killed := agentFunc(func(cmd string, _ map[string]any) (any, error) {
		if cmd == "guest-exec" {
			return map[string]int{"pid": 1}, nil
		}
		return map[string]any{"exited": true, "signal": 9, "out-truncated": true, "out-data": "!!"}, nil
	})
	if _, err := Run(ctx, killed, "/bin/x", nil, 100); err == nil || !strings.Contains(err.Error(), "base64") {
		t.Errorf("Run with bad base64 = %v", err)
	}
}

package qga

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"runtime"
	"testing"
	"time"
)

// fakeAgent answers like qemu-ga: a parse error for the 0xFF, a stale
// reply, then the delimited sync reply; guest-info and errors afterwards.
func fakeAgent(t *testing.T, conn net.Conn, mute bool) {
	defer conn.Close()
	br := bufio.NewReader(conn)
	for {
		b, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		if mute {
			continue
		}
		if b[0] == 0xFF {
			conn.Write([]byte(`{"error": {"class": "GenericError", "desc": "JSON parse error"}}` + "\n" + "\xff" + `{"return": 1}` + "\n"))
			b = b[1:]
		}
		var req struct {
			Execute   string
			Arguments map[string]any
		}
		json.Unmarshal(bytes.TrimSpace(b), &req)
		switch req.Execute {
		case "guest-sync-delimited":
			id, _ := json.Marshal(req.Arguments["id"])
			conn.Write(append(append([]byte("\xff{\"return\": "), id...), "}\n"...))
		case "guest-info":
			conn.Write([]byte(`{"return": {"version": "7.2.22", "supported_commands": [{"enabled": false, "name": "guest-exec", "success-response": true}]}}` + "\n"))
		default:
			conn.Write([]byte(`{"error": {"class": "CommandNotFound", "desc": "Command ` + req.Execute + ` has been disabled"}}` + "\n"))
		}
	}
}

func TestClient(t *testing.T) {
	before := runtime.NumGoroutine()
	a, b := net.Pipe()
	go fakeAgent(t, b, false)
	c := New(a)
	ctx := context.Background()
	info, err := c.Info(ctx)
	if err != nil || info.Version != "7.2.22" || len(info.SupportedCommands) != 1 || info.SupportedCommands[0].Enabled {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	var qe *Error
	if err := c.Exec(ctx, "guest-fsfreeze-freeze", nil, nil); !errors.As(err, &qe) || qe.Class != "CommandNotFound" {
		t.Errorf("Exec = %v, want CommandNotFound", err)
	}
	if err := c.Exec(ctx, "guest-shutdown", nil, nil); !errors.Is(err, ErrNoReply) {
		t.Errorf("guest-shutdown via Exec = %v", err)
	}
	c.Close()
	if err := c.Ping(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
	time.Sleep(50 * time.Millisecond)
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("goroutines %d > %d before: leak", n, before)
	}
}

func TestClientDeadlines(t *testing.T) {
	a, b := net.Pipe()
	go fakeAgent(t, b, true) // reads, never answers
	c := New(a)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := c.Sync(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Sync on a mute agent = %v", err)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel2)
	if err := c.Ping(ctx2); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Ping = %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

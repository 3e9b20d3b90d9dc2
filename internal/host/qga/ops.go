package qga

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"time"
)

// Agent is anything that runs one guest-agent command: a *Client on a
// chardev socket, or libvirt's agent passthrough. The operations below
// are written once against it, for sealprep prove and guestcheck fleet.
type Agent interface {
	Exec(ctx context.Context, cmd string, args, result any) error
}

var _ Agent = (*Client)(nil)

// ErrTooLarge is returned when a file or a program's output passes the
// caller's bound; what was read so far is dropped.
var ErrTooLarge = errors.New("larger than the bound")

// ReadFile reads a guest file through guest-file-open (mode "r"),
// guest-file-read and guest-file-close, up to limit bytes. It never opens
// a file for writing.
func ReadFile(ctx context.Context, a Agent, path string, limit int64) ([]byte, error) {
	var h int
	if err := a.Exec(ctx, "guest-file-open", map[string]string{"path": path, "mode": "r"}, &h); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		a.Exec(cctx, "guest-file-close", map[string]int{"handle": h}, nil)
		cancel()
	}()
	var out []byte
	for {
		var r struct {
			Count int    `json:"count"`
			Buf   string `json:"buf-b64"`
			EOF   bool   `json:"eof"`
		}
		count := min(limit+1-int64(len(out)), 1<<20)
		if err := a.Exec(ctx, "guest-file-read", map[string]int64{"handle": int64(h), "count": max(count, 1)}, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		b, err := base64.StdEncoding.DecodeString(r.Buf)
		if err != nil {
			return nil, fmt.Errorf("%s: the agent's data is not base64: %w", path, err)
		}
		out = append(out, b...)
		if int64(len(out)) > limit {
			return nil, fmt.Errorf("%s: %w of %d bytes", path, ErrTooLarge, limit)
		}
		if r.EOF || len(b) == 0 {
			return out, nil
		}
	}
}

// ExecResult is a finished guest-exec.
type ExecResult struct {
	// Exit is the exit status, -1 when the program was killed (Signal).
	Exit   int
	Signal int
	Stdout []byte
	Stderr []byte
	// Truncated is the agent's own flag: the guest cut the output at its
	// limit (qemu-ga keeps 16 MiB per stream).
	Truncated bool
}

// Run runs path with args in the guest through guest-exec (the arguments
// go as a JSON array, never through a shell) and polls guest-exec-status
// with backoff, from 50 ms up to 1 s, until it exits or ctx ends. Output
// past limit bytes per stream is an error (ErrTooLarge).
func Run(ctx context.Context, a Agent, path string, args []string, limit int) (ExecResult, error) {
	if args == nil {
		args = []string{}
	}
	var started struct {
		PID int `json:"pid"`
	}
	if err := a.Exec(ctx, "guest-exec", map[string]any{"path": path, "arg": args, "capture-output": true}, &started); err != nil {
		return ExecResult{}, err
	}
	wait := 50 * time.Millisecond
	for {
		var st struct {
			Exited       bool   `json:"exited"`
			ExitCode     *int   `json:"exitcode"`
			Signal       *int   `json:"signal"`
			OutData      string `json:"out-data"`
			ErrData      string `json:"err-data"`
			OutTruncated bool   `json:"out-truncated"`
			ErrTruncated bool   `json:"err-truncated"`
		}
		if err := a.Exec(ctx, "guest-exec-status", map[string]int{"pid": started.PID}, &st); err != nil {
			return ExecResult{}, err
		}
		if st.Exited {
			return execResult(st.ExitCode, st.Signal, st.OutData, st.ErrData, st.OutTruncated || st.ErrTruncated, limit)
		}
		select {
		case <-ctx.Done():
			return ExecResult{}, fmt.Errorf("%s still running: %w", path, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(wait*2, time.Second)
	}
}

func execResult(code, signal *int, out, errOut string, truncated bool, limit int) (ExecResult, error) {
	r := ExecResult{Exit: -1, Truncated: truncated}
	if code != nil {
		r.Exit = *code
	}
	if signal != nil {
		r.Signal = *signal
	}
	for _, s := range []struct {
		b64 string
		dst *[]byte
		nm  string
	}{{out, &r.Stdout, "stdout"}, {errOut, &r.Stderr, "stderr"}} {
		if base64.StdEncoding.DecodedLen(len(s.b64)) > limit+3 {
			return ExecResult{}, fmt.Errorf("%s: %w of %d bytes", s.nm, ErrTooLarge, limit)
		}
		b, err := base64.StdEncoding.DecodeString(s.b64)
		if err != nil {
			return ExecResult{}, fmt.Errorf("%s: the agent's data is not base64: %w", s.nm, err)
		}
		if len(b) > limit {
			return ExecResult{}, fmt.Errorf("%s: %w of %d bytes", s.nm, ErrTooLarge, limit)
		}
		*s.dst = b
	}
	return r, nil
}

// Interface is one entry of guest-network-get-interfaces.
type Interface struct {
	Name            string `json:"name"`
	HardwareAddress string `json:"hardware-address"`
	IPAddresses     []struct {
		Type    string `json:"ip-address-type"` // ipv4, ipv6
		Address string `json:"ip-address"`
		Prefix  int    `json:"prefix"`
	} `json:"ip-addresses"`
}

// Interfaces calls guest-network-get-interfaces.
func Interfaces(ctx context.Context, a Agent) ([]Interface, error) {
	var out []Interface
	err := a.Exec(ctx, "guest-network-get-interfaces", nil, &out)
	return out, err
}

// HostName calls guest-get-host-name.
func HostName(ctx context.Context, a Agent) (string, error) {
	var r struct {
		HostName string `json:"host-name"`
	}
	err := a.Exec(ctx, "guest-get-host-name", nil, &r)
	return r.HostName, err
}

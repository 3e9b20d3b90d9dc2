package prove

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/vmm"
)

// fakeEnv makes the test binary a fake qemu-system-x86_64 (TestMain):
// "silent" never boots, "panic" prints a kernel panic on its console,
// "noagent" boots to guestcheck's summary line and a login prompt with no
// agent answering, "exit" fails at once.
const fakeEnv = "SEALPREP_PROVE_FAKE_QEMU"

// fakeBin is the fake QEMU's path: the test binary, or as root a copy
// of it where QEMU's unprivileged user may execute it (go test's build
// directory is root's, mode 0700).
var fakeBin = os.Args[0]

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(fakeQEMU(mode, os.Args[1:]))
	}
	if os.Geteuid() == 0 {
		dir, err := os.MkdirTemp("", "prove-fakeqemu-")
		if err == nil {
			err = os.Chmod(dir, 0o755)
		}
		if err == nil {
			fakeBin = filepath.Join(dir, "qemu-system-x86_64")
			err = vmm.CopyFileLimit(os.Args[0], fakeBin, 1<<30)
		}
		if err == nil {
			err = os.Chmod(fakeBin, 0o755)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "fake QEMU:", err)
			os.Exit(2)
		}
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// hostileConsole holds terminal escapes (a title, a screen clear, a
// colour, a DCS string, 8-bit CSI raw and UTF-8 encoded), NULs, a bell,
// DEL, carriage returns, invalid UTF-8, a bidirectional override, an
// overlong line and an emergency-mode line (the guest is dead) with
// escapes in it.
var hostileConsole = "\x1b]0;pwned-title\x07\x1b[2J\x1b[31mred\x1b[0m \x00nul\x07bell\x7fdel\rCR \x9b31m raw-c1 \xc2\x9b31m utf8-c1 \xff\xfe invalid \u202etxt.exe\r\n" +
	"dcs: \x1bP1;2|dcs-secret\x1b\\ charset\x1b(B keypad\x1b= reset\x1bc\r\n" +
	"overlong " + strings.Repeat("xyz.\u00e9", 2000) + "\r\n" +
	"You are in \x1b[1memergency mode\x1b[0m.\x00 \x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\\r\n"

// fakeQEMU speaks just enough QMP for prove (greeting, capabilities,
// query-status, quit) and writes the console file its mode asks for.
func fakeQEMU(mode string, args []string) int {
	var console, qmp string
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "-serial":
			console = strings.TrimPrefix(args[i+1], "file:")
		case "-qmp":
			qmp, _, _ = strings.Cut(strings.TrimPrefix(args[i+1], "unix:"), ",")
		}
	}
	if mode == "exit" {
		fmt.Fprintln(os.Stderr, "qemu-system-x86_64: -accel kvm: failed to initialize kvm: No such file or directory")
		return 1
	}
	// Who it ran as, what it was given and whether it can read its
	// template layers' descriptors, for TestFakeQEMUConfined.
	groups, _ := os.Getgroups()
	var fds []string
	for _, v := range argValues(args, "-add-fd") {
		var fd, set int
		fmt.Sscanf(v, "fd=%d,set=%d", &fd, &set)
		buf := make([]byte, 512)
		n, err := os.NewFile(uintptr(fd), "layer").ReadAt(buf, 0)
		fds = append(fds, fmt.Sprintf("fd %d read %d bytes %v", fd, n, err))
	}
	who, _ := json.Marshal(map[string]any{"uid": os.Getuid(), "gid": os.Getgid(), "groups": groups, "args": args, "fds": fds})
	os.WriteFile(filepath.Join(filepath.Dir(console), "fake-qemu.json"), who, 0o600)
	os.WriteFile(console, []byte("SeaBIOS (version fake)\r\nBooting from Hard Disk...\r\n"), 0o644)
	os.Remove(qmp) // as QEMU does before it listens
	l, err := net.Listen("unix", qmp)
	if err != nil {
		return 2
	}
	if mode == "noagent" {
		go func() {
			time.Sleep(300 * time.Millisecond)
			f, _ := os.OpenFile(console, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("[  108.8] boot-check[396]: guestcheck: PASS 14 checks: 0 fail, 0 error, 0 warn, 14 pass, 0 skip (13638 ms) (report: /run/guestcheck/report.txt)\r\n\r\nprove-1 login: ")
			f.Close()
		}()
	}
	if mode == "earlypanic" {
		// The first boot panics before init, the next one never boots.
		mark := console + ".panicked"
		if _, err := os.Stat(mark); err != nil {
			os.WriteFile(mark, nil, 0o644)
			go func() {
				time.Sleep(300 * time.Millisecond)
				f, _ := os.OpenFile(console, os.O_APPEND|os.O_WRONLY, 0)
				f.WriteString("[    0.064000] Kernel panic - not syncing: IO-APIC + timer doesn't work!  Boot with apic=debug and send a report.\r\n")
				f.Close()
			}()
		}
	}
	if mode == "hostile" {
		// A console meant to attack whoever reads the report.
		f, _ := os.OpenFile(console, os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString(hostileConsole)
		f.Close()
	}
	if mode == "panic" {
		go func() {
			time.Sleep(500 * time.Millisecond)
			f, _ := os.OpenFile(console, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("[    2.100000] VFS: Cannot open root device \"vda9\"\r\n[    2.100001] Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)\r\n[    2.100002] ---[ end Kernel panic - not syncing ]---\r\n")
			f.Close()
		}()
	}
	for {
		c, err := l.Accept()
		if err != nil {
			return 0
		}
		go serveQMP(c)
	}
}

func serveQMP(c net.Conn) {
	defer c.Close()
	fmt.Fprintln(c, `{"QMP": {"version": {"qemu": {"micro": 0, "minor": 2, "major": 7}, "package": ""}, "capabilities": []}}`)
	// QEMU reads a JSON stream, not lines, and echoes each command's id.
	dec := json.NewDecoder(c)
	for {
		var req struct {
			Execute string          `json:"execute"`
			ID      json.RawMessage `json:"id"`
		}
		if dec.Decode(&req) != nil {
			return
		}
		id := ""
		if req.ID != nil {
			id = fmt.Sprintf(`, "id": %s`, req.ID)
		}
		switch req.Execute {
		case "query-status":
			fmt.Fprintf(c, "{\"return\": {\"status\": \"running\", \"running\": true}%s}\r\n", id)
		case "quit":
			fmt.Fprintf(c, "{\"return\": {}%s}\r\n", id)
			os.Exit(0)
		default:
			fmt.Fprintf(c, "{\"return\": {}%s}\r\n", id)
		}
	}
}

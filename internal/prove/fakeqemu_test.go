package prove

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// fakeEnv makes the test binary a fake qemu-system-x86_64 (TestMain):
// "silent" never boots, "panic" prints a kernel panic on its console,
// "noagent" boots to guestcheck's summary line and a login prompt with no
// agent answering, "exit" fails at once.
const fakeEnv = "SEALPREP_PROVE_FAKE_QEMU"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(fakeQEMU(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

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
	// QMP is a JSON stream, not lines: go-qemu sends no newline.
	dec := json.NewDecoder(c)
	for {
		var req struct {
			Execute string `json:"execute"`
		}
		if dec.Decode(&req) != nil {
			return
		}
		switch req.Execute {
		case "query-status":
			fmt.Fprintln(c, `{"return": {"status": "running", "running": true}}`)
		case "quit":
			fmt.Fprintln(c, `{"return": {}}`)
			os.Exit(0)
		default:
			fmt.Fprintln(c, `{"return": {}}`)
		}
	}
}

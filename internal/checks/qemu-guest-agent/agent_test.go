package qemuguestagent

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/testenv"

	"github.com/guestcheck/guestcheck/internal/host/qga"
)

// dangerous are never called by these tests; most cases block them as
// well, because an agent in unix-listen mode acts on this machine.
const dangerous = "guest-fsfreeze-freeze,guest-fsfreeze-freeze-list,guest-fsfreeze-thaw,guest-shutdown,guest-suspend-disk,guest-suspend-ram,guest-suspend-hybrid"

// TestRealAgentFilter starts Debian's qemu-ga in unix-listen mode with
// several block lists and configuration files, and requires the filter
// guestcheck computes from the same inputs to equal the enabled flags the
// agent reports in guest-info.
func TestRealAgentFilter(t *testing.T) {
	bin := testenv.Tool(t, "qemu-ga", "qemu-guest-agent")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	m := versionRE().FindSubmatch(data)
	if m == nil {
		t.Fatalf("no version string in %s", bin)
	}
	v, _ := ParseVersion(string(m[1]))
	cases := []struct {
		name string
		args []string
		conf string // qemu-ga.conf content passed through QGA_CONF
	}{
		{name: "no-filter"},
		{name: "block", args: []string{"-b", dangerous + ",guest-exec,guest-exec-status"}},
		{name: "wildcard-not-expanded", args: []string{"--block-rpcs=" + dangerous + ",guest-file-*"}},
		{name: "spaces-not-trimmed", args: []string{"-b", dangerous}, conf: "[general]\nblock-rpcs = guest-exec, guest-get-users \n"},
		{name: "config-and-cli-accumulate", args: []string{"-b", dangerous, "-bguest-get-osinfo"}, conf: "[general]\nblock-rpcs=guest-get-time,guest-info-x\n"},
		{name: "blacklist-key", args: []string{"--blacklist=" + dangerous}, conf: "[general]\nblock-rpcs=guest-get-time\nblacklist=guest-get-host-name\n"},
		{name: "allow-list", args: []string{"-a", "guest-sync-delimited,guest-info,guest-ping"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var kf *KeyFile
			env := append(os.Environ(), "QGA_CONF="+filepath.Join(dir, "absent.conf"))
			if c.conf != "" {
				p := filepath.Join(dir, "qemu-ga.conf")
				if err := os.WriteFile(p, []byte(c.conf), 0o600); err != nil {
					t.Fatal(err)
				}
				env = append(os.Environ(), "QGA_CONF="+p)
				if kf, err = LoadKeyFile(p, []byte(c.conf)); err != nil {
					t.Fatal(err)
				}
			}
			args, perr := ParseArgs(v, c.args)
			s := Merge(v, "/etc/qemu", kf, "qemu-ga.conf", args)
			wantStart := perr == nil && len(s.Fatal) == 0

			sock := filepath.Join(dir, "qga.sock")
			argv := append([]string{"-m", "unix-listen", "-p", sock, "-t", dir, "-f", filepath.Join(dir, "pid")}, c.args...)
			cmd := exec.Command(bin, argv...)
			cmd.Env = env
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			t.Cleanup(func() {
				cmd.Process.Kill()
				<-exited
			})
			if !wantStart {
				select {
				case err := <-exited:
					exited <- err
					if err == nil {
						t.Fatalf("guestcheck predicted a refusal (%v %v) but qemu-ga exited 0", perr, s.Fatal)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("guestcheck predicted a refusal (%v %v) but qemu-ga runs", perr, s.Fatal)
				}
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var cl *qga.Client
			for cl == nil {
				select {
				case err := <-exited:
					exited <- err
					t.Fatalf("qemu-ga exited (%v) though guestcheck predicted it starts: %s", err, stderr.String())
				case <-ctx.Done():
					t.Fatal("qemu-ga socket never answered")
				case <-time.After(50 * time.Millisecond):
				}
				if _, err := os.Stat(sock); err == nil {
					cl, _ = qga.Dial(ctx, "unix", sock)
				}
			}
			defer cl.Close()
			info, err := cl.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			f := s.Filter()
			var names []string
			for _, cmd := range info.SupportedCommands {
				names = append(names, cmd.Name)
				if want, ok := f.Enabled[cmd.Name]; !ok || want != cmd.Enabled {
					t.Errorf("%s: agent says enabled=%v, guestcheck computed %v (known=%v)", cmd.Name, cmd.Enabled, want, ok)
				}
			}
			slices.Sort(names)
			known := Commands(v)
			slices.Sort(known)
			if !slices.Equal(names, known) {
				t.Errorf("agent %s commands %v, guestcheck's table %v", info.Version, names, known)
			}
		})
	}
}

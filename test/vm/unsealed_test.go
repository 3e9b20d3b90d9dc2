//go:build vmtest

package vm

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// unsealedClones boots two clones of the healthy guest's disk, powered off
// without sealing, at once and with new instance-ids, a minute or two after
// the template's own boot: the pipeline that builds, boots and clones within
// minutes. Both keep the template's machine-id, and network-identity must
// fail on each with identity-clone-kept-machine-id, whatever the time
// between the two boots. clone-1 is then sealed in place (sealprep apply
// --poweroff), which gives the sealed image the next scenario clones.
func unsealedClones(ctx context.Context, t *testing.T, e *env) {
	start := time.Now()
	var mu sync.Mutex
	ids := map[string]string{}
	t.Run("boot", func(t *testing.T) {
		for i := 1; i <= 2; i++ {
			t.Run(fmt.Sprintf("clone-%d", i), func(t *testing.T) {
				t.Parallel()
				name := fmt.Sprintf("gc-unsealed-%d", i)
				n := mgmtNIC
				n.MAC = fmt.Sprintf("52:54:00:00:04:%02x", i)
				v := startVM(ctx, t, spec{
					Name: name, Base: e.unsealed, Image: e.img,
					MetaData: fmt.Sprintf("instance-id: %s-iid\nlocal-hostname: %s\n", name, name),
					UserData: "#cloud-config\nmanage_etc_hosts: true\n",
					NICs:     []nic{n},
				})
				r, _ := bootReport(ctx, t, v)
				mid := readGuest(ctx, t, v, "/etc/machine-id")
				mu.Lock()
				ids[name] = mid
				mu.Unlock()
				if mid != e.template.machineID {
					t.Errorf("machine-id %s, want the template's %s: the scenario needs a clone that kept it", mid, e.template.machineID)
				}
				c := expect(t, r, "network-identity", "identity-clone-kept-machine-id", "fail")
				if f := c.Finding("identity-clone-kept-machine-id"); f != nil {
					t.Logf("%s: %s: %s (evidence %s)", name, f.Code, f.Message, f.Detail["evidence"])
				}
				// Only the identity is wrong: cloud-init ran as a new
				// instance and the other checks are unaffected.
				expect(t, r, "cloud-init", "cloud-init-done", "pass")
				expect(t, r, "hostname", "", "pass")
				if got := readGuest(ctx, t, v, "/var/lib/cloud/data/instance-id"); got != name+"-iid" {
					t.Errorf("cloud-init instance-id = %q, want %s-iid", got, name)
				}
				if dir := os.Getenv("GUESTCHECK_VM_CAPTURE"); dir != "" {
					captureIdentity(ctx, t, v, filepath.Join(dir, "debian12-unsealed-clone-"+fmt.Sprint(i)))
				}
				if i == 1 {
					t.Run("seal", func(t *testing.T) { seal(ctx, t, e, v) })
				}
			})
		}
	})
	t.Logf("unsealed clones booted, judged and clone-1 sealed in %s", time.Since(start).Round(time.Second))
}

// identityCapture lists what captureIdentity copies: the files the
// network-identity check reads, with their times, journal files cut to
// their header (the check reads nothing else of them).
const identityCapture = `set -eu
out=$(mktemp -d)
cd "$out"
mkdir root
put() { mkdir -p "root$(dirname "$1")"; cat "$1" >"root$1"; }
for f in /etc/machine-id /var/lib/cloud/data/instance-id /var/lib/cloud/data/previous-instance-id \
	/proc/stat /proc/sys/kernel/random/boot_id /var/lib/cloud/instances/*/sem/*; do
	[ -f "$f" ] && put "$f"
done
for f in /var/log/journal/*/*.journal /var/log/journal/*/*.journal~; do
	[ -f "$f" ] || continue
	mkdir -p "root$(dirname "$f")"
	head -c 512 "$f" >"root$f"
done
(cd root && find . -type f ! -path './proc/*' | sort | sed 's,^\.,,') | while read -r f; do
	stat -c '%n	%y	%z	%a' "$f"
done >times.txt
cat /proc/uptime >uptime
date -u +%Y-%m-%dT%H:%M:%S.%NZ >capture-date
tar -cf - .
`

// captureIdentity copies the network-identity evidence out of v into dir
// (the source of internal/netcheck/testdata/identity/), replacing it.
func captureIdentity(ctx context.Context, t *testing.T, v *VM, dir string) {
	t.Helper()
	r := mustExec(ctx, t, v, "/bin/sh", "-c", identityCapture)
	if r.Exit != 0 {
		t.Fatalf("capture: exit %d: %s", r.Exit, r.Stderr)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(bytes.NewReader([]byte(r.Stdout)))
	n := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("capture tar: %v", err)
		}
		p := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				var b []byte
				if b, err = io.ReadAll(tr); err == nil {
					err = os.WriteFile(p, b, 0o644)
					n++
				}
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	times, _ := os.ReadFile(filepath.Join(dir, "times.txt"))
	t.Logf("%s: captured %d files into %s:\n%s", v.spec.Name, n, dir, strings.TrimSpace(string(times)))
}

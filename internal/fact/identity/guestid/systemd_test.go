package guestid

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// bindScript runs systemd-id128 with a given machine ID in a private
// mount namespace (unshare -m): the ID file is bind-mounted over
// /etc/machine-id, or, with "mirror" (or when the machine has no
// /etc/machine-id to mount over), /etc is replaced by a directory of
// symlinks into the real one plus the ID file. Nothing outside the
// namespace changes.
const bindScript = `set -e
id=$1 app=$2 mode=$3 tmp=$4
if [ "$mode" = bind ] && [ -e /etc/machine-id ]; then
	mount --bind "$id" /etc/machine-id
else
	mkdir "$tmp/real" "$tmp/etc"
	mount --bind /etc "$tmp/real"
	for f in "$tmp"/real/* "$tmp"/real/.[!.]*; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		[ "${f##*/}" = machine-id ] || ln -s "$f" "$tmp/etc/${f##*/}"
	done
	cp "$id" "$tmp/etc/machine-id"
	mount --bind "$tmp/etc" /etc
fi
exec systemd-id128 machine-id --app-specific="$app"
`

// TestMachineIDHashSystemd compares MachineIDHash with what systemd's own
// sd_id128_get_machine_app_specific gives for the same machine ID and
// application ID, for several random IDs.
func TestMachineIDHashSystemd(t *testing.T) {
	testenv.RequireRoot(t, "bind-mounting over /etc/machine-id in a private mount namespace needs root")
	unshare := testenv.Tool(t, "unshare", "util-linux")
	testenv.Tool(t, "systemd-id128", "systemd")
	testenv.Tool(t, "mount", "mount")
	app := hex.EncodeToString(AppID[:])
	for i := range 6 {
		var b [16]byte
		rand.Read(b[:])
		mid := hex.EncodeToString(b[:])
		if i == 0 {
			mid = strings.ToUpper(mid) // systemd accepts either case
		}
		mode := "bind"
		if i == 1 {
			mode = "mirror"
		}
		dir := t.TempDir()
		idFile := filepath.Join(dir, "machine-id")
		if err := os.WriteFile(idFile, []byte(mid+"\n"), 0o444); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(unshare, "-m", "--propagation", "private", "sh", "-c", bindScript, "sh", idFile, app, mode, dir).CombinedOutput()
		if err != nil {
			t.Fatalf("systemd-id128 (%s): %v: %s", mode, err, out)
		}
		want := strings.TrimSpace(string(out))
		got, ok := MachineIDHash(mid)
		if !ok || got != want {
			t.Errorf("machine ID %s: MachineIDHash = %s, systemd-id128 says %s", mid, got, want)
		}
		if own, _ := os.ReadFile("/etc/machine-id"); strings.Contains(strings.ToLower(string(own)), strings.ToLower(mid)) {
			t.Fatal("the test's machine ID leaked out of its mount namespace")
		}
	}
}

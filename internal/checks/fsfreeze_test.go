package checks

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/check"
	"github.com/guestcheck/guestcheck/internal/fs"
)

func freezeRoot(t *testing.T, mountinfo string, files map[string]string) *check.Env {
	t.Helper()
	dir := t.TempDir()
	files["/proc/self/mountinfo"] = mountinfo
	for p, c := range files {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return &check.Env{Root: root, Live: true, Now: time.Now}
}

func codes(fs []check.Finding) map[string]check.Finding {
	m := map[string]check.Finding{}
	for _, f := range fs {
		m[f.Code] = f
	}
	return m
}

func TestFSFreezeList(t *testing.T) {
	env := freezeRoot(t, `20 1 254:1 / / rw shared:1 - ext4 /dev/vda1 rw
21 20 254:2 / /boot/efi rw shared:3 - vfat /dev/vda2 rw
23 20 254:16 / /data rw shared:4 - xfs /dev/vdb rw
27 23 7:0 / /data/img rw shared:7 - ext4 /dev/loop0 rw
`, map[string]string{"/sys/block/loop0/loop/backing_file": "/data/images/disk.img\n"})
	got := codes(FSFreeze.Run(context.Background(), env))
	if f := got[codeFreezeListOK]; f.Status != check.Pass || f.Detail["freeze_order"] != "/data/img,/data,/" {
		t.Errorf("list = %+v", f)
	}
	if f := got[codeFreezeMountSkipped]; f.Status != check.Pass || f.Detail["mountpoint"] != "/boot/efi" {
		t.Errorf("skipped = %+v", f)
	}
	if f := got[codeFreezeLoopBacked]; f.Status != check.Warn || f.Detail["backing_mount"] != "/data" || f.Remediation == "" {
		t.Errorf("loop = %+v", f)
	}
	if _, ok := got[codeFreezeRootUnfreez]; ok {
		t.Error("ext4 root reported unfreezable")
	}
}

func TestFSFreezeRootUnfreezable(t *testing.T) {
	for _, mi := range []string{
		"20 1 0:30 / / rw shared:1 - overlay overlay rw\n",
		"20 1 254:1 / / ro shared:1 - squashfs /dev/vda1 ro\n",
	} {
		got := codes(FSFreeze.Run(context.Background(), freezeRoot(t, mi, map[string]string{})))
		if f := got[codeFreezeRootUnfreez]; f.Status != check.Fail || f.Remediation == "" {
			t.Errorf("%q: %+v", mi, got)
		}
	}
}

func TestFSFreezeNotLiveAndRefused(t *testing.T) {
	env := freezeRoot(t, "20 1 254:1 / / rw shared:1 - ext4 /dev/vda1 rw\n", map[string]string{})
	env.Live = false
	if got := codes(FSFreeze.Run(context.Background(), env)); got[codeFreezeNotLive].Status != check.Skip {
		t.Errorf("not live: %v", got)
	}
	env.Live = true
	// Under an image root the active test is refused, never attempted.
	c := WithFreezeTest([]check.Check{FSFreeze}, fs.FreezeRequest{Mountpoint: "/data"})[0]
	if got := codes(c.Run(context.Background(), env)); got[codeFreezeTestRefused].Status != check.Error {
		t.Errorf("refused: %v", got)
	}
}

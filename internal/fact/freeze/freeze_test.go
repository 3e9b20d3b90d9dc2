package freeze

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/fact/blockid/blocktest"
	"github.com/guestcheck/guestcheck/internal/parse/mountinfo"
)

// helperEnv makes the re-executed test binary act as a guestcheck that
// freezes a mount and is then killed: "<mountpoint>".
const helperEnv = "GUESTCHECK_FREEZE_TEST_HELPER"

// TestMain lets the test binary serve as its own watchdog (Run
// re-executes /proc/self/exe) and as the process the kill test kills.
func TestMain(m *testing.M) {
	if IsWatchdog() {
		os.Exit(RunWatchdog())
	}
	if mp := os.Getenv(helperEnv); mp != "" {
		os.Exit(freezeHelper(mp))
	}
	os.Exit(m.Run())
}

// freezeHelper freezes mp with a 2 s watchdog deadline, says "frozen" and
// holds the freeze for a minute, long enough to be killed inside it.
func freezeHelper(mp string) int {
	_, err := Run(context.Background(), Request{Mountpoint: mp, Deadline: 2 * time.Second, Hold: time.Minute,
		OnFrozen: func() { fmt.Println("frozen") }})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	return 0
}

func TestFreezeOrder(t *testing.T) {
	mi := `20 1 254:1 / / rw shared:1 - ext4 /dev/vda1 rw
21 20 0:5 / /proc rw shared:2 - proc proc rw
22 20 254:2 / /boot/efi rw shared:3 - vfat /dev/vda2 rw
23 20 254:3 / /data rw shared:4 - xfs /dev/vdb rw
24 20 254:3 /sub /srv rw shared:5 - xfs /dev/vdb rw
25 20 0:40 / /home rw shared:6 - btrfs /dev/vdc rw
26 20 0:41 / /mnt rw - btrfs /dev/vdd rw
27 20 7:0 / /img rw shared:7 - ext4 /dev/loop0 rw
`
	ms, errs := mountinfo.Parse([]byte(mi))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	devOK := func(m mountinfo.Mount) bool { return len(m.Optional) == 1 }
	list, skipped := Order(ms, devOK)
	var got []string
	for _, c := range list {
		got = append(got, fmt.Sprintf("%s:%v:%v", c.Mount.MountPoint, c.Freezable, c.Duplicate))
	}
	want := []string{"/img:true:false", "/home:true:false", "/srv:true:false", "/data:true:true", "/boot/efi:false:false", "/:true:false"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("FreezeOrder = %v, want %v", got, want)
	}
	var sk []string
	for _, m := range skipped {
		sk = append(sk, m.MountPoint)
	}
	if fmt.Sprint(sk) != "[/proc /mnt]" {
		t.Errorf("skipped = %v", sk)
	}
	if LoopBacking("/dev/loop12") != "loop12" || LoopBacking("/dev/loop") != "" || LoopBacking("/dev/loopx") != "" || LoopBacking("/dev/vda") != "" {
		t.Error("LoopBacking")
	}
	if m, _ := mountinfo.Holding(ms, "/data/x/y.img"); m.MountPoint != "/data" {
		t.Errorf("MountOf = %s", m.MountPoint)
	}
	if m, _ := mountinfo.Holding(ms, "/database"); m.MountPoint != "/" {
		t.Errorf("MountOf(/database) = %s", m.MountPoint)
	}
}

func TestFreezeTestRefusals(t *testing.T) {
	if os.Geteuid() != 0 {
		_, err := Run(context.Background(), Request{Mountpoint: t.TempDir()})
		if !errors.Is(err, ErrNeedRoot) {
			t.Fatalf("as non-root: %v, want ErrNeedRoot", err)
		}
		return
	}
	for _, mp := range []string{"/", t.TempDir(), "/proc/self/exe"} {
		if _, err := Run(context.Background(), Request{Mountpoint: mp}); !errors.Is(err, ErrRefused) {
			t.Errorf("Run(%s) = %v, want ErrRefused", mp, err)
		}
	}
}

// freezable makes a loop-mounted filesystem of typ and makes sure it is
// thawed before it is unmounted, whatever happens in the test.
func freezable(t *testing.T, typ string, size int64) string {
	t.Helper()
	blocktest.RequireRoot(t)
	blocktest.RequireTools(t, "losetup", "mount", "umount", "mkfs."+typ)
	file := blocktest.Sparse(t, t.TempDir(), typ+".img", size)
	blocktest.Mkfs(t, typ, file, blocktest.RandomUUID(t), "", "")
	dev := blocktest.AttachLoop(t, file)
	mp := blocktest.Mount(t, dev, typ)
	t.Cleanup(func() { thaw(mp) })
	return mp
}

func thaw(mp string) {
	if fd, err := unix.Open(mp, unix.O_RDONLY|unix.O_DIRECTORY, 0); err == nil {
		unix.IoctlSetInt(fd, FITHAW, 0)
		unix.Close(fd)
	}
}

// writeWithin writes a file on mp and reports whether it completed within d
// (a write to a frozen filesystem blocks until the thaw).
func writeWithin(mp string, d time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- os.WriteFile(filepath.Join(mp, "probe"), []byte("x"), 0o600) }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		return fmt.Errorf("write to %s still blocked after %v: filesystem frozen", mp, d)
	}
}

func TestFreezeRoundTrip(t *testing.T) {
	sizes := map[string]int64{"ext4": 32 << 20, "xfs": 300 << 20, "btrfs": 128 << 20}
	for _, typ := range []string{"ext4", "xfs", "btrfs"} {
		t.Run(typ, func(t *testing.T) {
			mp := freezable(t, typ, sizes[typ])
			if err := os.WriteFile(filepath.Join(mp, "dirty"), make([]byte, 1<<20), 0o600); err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), Request{Mountpoint: mp, Deadline: 10 * time.Second})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.ThawedBy != "guestcheck" || res.FreezeLatency <= 0 || res.ThawLatency <= 0 || res.WatchdogPID == 0 {
				t.Errorf("result = %+v", res)
			}
			// Thawed: a second thaw is EINVAL and writes go through.
			fd, _ := unix.Open(mp, unix.O_RDONLY|unix.O_DIRECTORY, 0)
			defer unix.Close(fd)
			if err := unix.IoctlSetInt(fd, FITHAW, 0); !errors.Is(err, unix.EINVAL) {
				t.Errorf("FITHAW after the test = %v, want EINVAL (already thawed)", err)
			}
			if err := writeWithin(mp, 2*time.Second); err != nil {
				t.Error(err)
			}
			// The watchdog was told and has exited.
			if err := syscall.Kill(res.WatchdogPID, 0); err == nil {
				t.Errorf("watchdog %d still alive", res.WatchdogPID)
			}
		})
	}
}

func TestFreezeBusyAndTmpfs(t *testing.T) {
	mp := freezable(t, "ext4", 32<<20)
	fd, err := unix.Open(mp, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.IoctlSetInt(fd, FIFREEZE, 0); err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Request{Mountpoint: mp})
	unix.IoctlSetInt(fd, FITHAW, 0)
	if !errors.Is(err, ErrAlreadyFrozen) {
		t.Errorf("freeze of a frozen fs = %v, want ErrAlreadyFrozen", err)
	}

	dir := t.TempDir()
	blocktest.Run(t, "mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir)
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	_, err = Run(context.Background(), Request{Mountpoint: dir})
	if !errors.Is(err, ErrCannotFreeze) {
		t.Errorf("tmpfs: %v, want ErrCannotFreeze", err)
	}
}

// TestFreezeWatchdogDeadline holds the freeze past the deadline: the
// watchdog must thaw while guestcheck still "holds" it.
func TestFreezeWatchdogDeadline(t *testing.T) {
	mp := freezable(t, "ext4", 32<<20)
	start := time.Now()
	var writeErr error
	res, err := Run(context.Background(), Request{Mountpoint: mp, Deadline: time.Second, Hold: 2500 * time.Millisecond,
		OnFrozen: func() {
			// Inside the hold the watchdog must thaw within its deadline.
			writeErr = writeWithin(mp, 3*time.Second)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if writeErr != nil {
		t.Errorf("during the hold: %v", writeErr)
	}
	if res.ThawedBy != "watchdog" {
		t.Errorf("ThawedBy = %q, want watchdog (took %v)", res.ThawedBy, time.Since(start))
	}
}

// TestFreezeKilledInWindow SIGKILLs a process inside its freeze window and
// proves the filesystem is writable again within the watchdog deadline.
func TestFreezeKilledInWindow(t *testing.T) {
	mp := freezable(t, "ext4", 32<<20)
	cmd := exec.Command("/proc/self/exe", "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mp)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Scan()
		lines <- sc.Text()
	}()
	select {
	case l := <-lines:
		if l != "frozen" {
			t.Fatalf("helper said %q", l)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("helper never froze")
	}
	// Frozen now: prove it, then kill only the helper's PID.
	if err := writeWithin(mp, 300*time.Millisecond); err == nil {
		t.Fatal("write succeeded while the helper holds the freeze")
	}
	killed := time.Now()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Deadline 2 s, plus margin; the pipe EOF should thaw at once.
	if err := writeWithin(mp, 2*time.Second+time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("writable %v after SIGKILL", time.Since(killed).Round(time.Millisecond))
	st, _ := cmd.Process.Wait()
	if st != nil && st.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("helper ended with %v", st)
	}
}

package cloudinit

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/testenv"

	"github.com/guestcheck/guestcheck/internal/checks/cloud-init/cloudinittest"
)

var testNow = time.Date(2025, 11, 29, 22, 0, 0, 0, time.UTC)

func fixedNow() time.Time { return testNow }

func TestReadFileProblems(t *testing.T) {
	good := `{"v1": {"datasource": "DataSourceNoCloud", "init": {"errors": [], "start": 3.0, "finished": 4.0}}}`
	for _, tc := range []struct {
		name   string
		build  func(r *cloudinittest.Root)
		file   string // which file error is expected ("" none)
		reason string
	}{
		{"truncated status", func(r *cloudinittest.Root) { r.Write(StatusPath, good[:40]) }, StatusPath, "unexpected end of JSON input"},
		{"garbage status", func(r *cloudinittest.Root) { r.Write(StatusPath, "\x7fELF\x02\x01") }, StatusPath, "invalid character"},
		{"wrong type status", func(r *cloudinittest.Root) { r.Write(StatusPath, `{"v1": {"init": {"start": "soon"}}}`) }, StatusPath,
			`"v1.init.start" is a string, want a number`},
		{"directory as status", func(r *cloudinittest.Root) { r.Mkdir(StatusPath) }, StatusPath, "is a directory"},
		{"truncated result", func(r *cloudinittest.Root) { r.Write(StatusPath, good).Write(ResultPath, `{"v1": {"errors": [`) }, ResultPath,
			"unexpected end of JSON input"},
		{"wrong type result", func(r *cloudinittest.Root) { r.Write(StatusPath, good).Write(ResultPath, `{"v1": {"errors": "none"}}`) }, ResultPath,
			`"v1.errors" is a string, want an array of strings`},
		{"wrong type instance-data", func(r *cloudinittest.Root) {
			r.Write(StatusPath, good).Write(ResultPath, `{"v1": {"errors": []}}`).Write(InstanceDataPath, `{"v1": {"instance_id": 42}}`)
		}, InstanceDataPath, `"v1.instance_id" is a number, want a string`},
		{"dangling status symlink means absent", func(r *cloudinittest.Root) {
			r.Installed().Symlink("../../var/lib/cloud/data/status.json", StatusPath)
		}, "", ""},
		{"relative symlink resolves inside the root", func(r *cloudinittest.Root) {
			r.Write("/var/lib/cloud/data/status.json", good).Symlink("../../var/lib/cloud/data/status.json", StatusPath)
		}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cloudinittest.New(t)
			tc.build(r)
			snap := Read(r.Open(), ReadOptions{Live: true, Now: fixedNow})
			var got *FileError
			for _, fe := range []*FileError{snap.StatusErr, snap.ResultErr, snap.InstanceDataErr} {
				if fe != nil {
					if got != nil {
						t.Fatalf("two file errors: %v and %v", got, fe)
					}
					got = fe
				}
			}
			if tc.file == "" {
				if got != nil {
					t.Fatalf("unexpected error %v", got)
				}
				return
			}
			if got == nil || got.Path != tc.file || !strings.Contains(got.Err.Error(), tc.reason) {
				t.Fatalf("got %v, want %s: ...%s", got, tc.file, tc.reason)
			}
			// The reason carries no path: the check prefixes the shown path once.
			if strings.Contains(got.Err.Error(), r.Dir) {
				t.Errorf("reason repeats the path: %v", got.Err)
			}
			if !snap.Inputs.Installed {
				t.Error("a status file present means installed")
			}
		})
	}
}

func TestReadUnreadable(t *testing.T) {
	testenv.RequireUnprivileged(t, "root reads mode-000 files anyway; the directory-as-file case covers read errors")
	r := cloudinittest.New(t).Write(StatusPath, `{}`)
	if err := os.Chmod(filepath.Join(r.Dir, StatusPath), 0); err != nil {
		t.Fatal(err)
	}
	snap := Read(r.Open(), ReadOptions{Live: true, Now: fixedNow})
	if snap.StatusErr == nil || snap.StatusErr.Err.Error() != "permission denied" {
		t.Fatalf("got %v", snap.StatusErr)
	}
}

func TestReadBootInputs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		live  bool
		build func(r *cloudinittest.Root)
		want  BootStatusCode
	}{
		{"generator enabled", true, func(r *cloudinittest.Root) { r.Write(GeneratorEnabledPath, "") }, EnabledByGenerator},
		{"generator disabled", true, func(r *cloudinittest.Root) { r.Write(GeneratorDisabledPath, "") }, DisabledByGenerator},
		{"marker file", true, func(r *cloudinittest.Root) { r.Write(DisabledMarkerPath, "").Write(GeneratorEnabledPath, "") }, DisabledByMarkerFile},
		{"kernel cmdline", true, func(r *cloudinittest.Root) {
			r.Write("/proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/vda1 cloud-init=disabled\n").Write(GeneratorEnabledPath, "")
		}, DisabledByKernelCmdline},
		{"kernel cmdline ignored offline", false, func(r *cloudinittest.Root) {
			r.Write("/proc/cmdline", "cloud-init=disabled").Write(GeneratorEnabledPath, "")
		}, EnabledByGenerator},
		{"cmdline enabled", true, func(r *cloudinittest.Root) {
			r.Write("/proc/cmdline", "cloud-init=enabled").Write(DisabledMarkerPath, "")
		}, EnabledByKernelCmdline},
		{"container reads PID 1's cmdline", true, func(r *cloudinittest.Root) {
			r.Write("/run/systemd/container", "lxc").Write("/proc/1/cmdline", "/sbin/init\x00cloud-init=disabled\x00").
				Write("/proc/cmdline", "root=/dev/sda").Write(GeneratorEnabledPath, "")
		}, DisabledByKernelCmdline},
		{"environment", true, func(r *cloudinittest.Root) {
			r.Write("/proc/1/environ", "container=lxc\x00KERNEL_CMDLINE=cloud-init=disabled\x00").Write(GeneratorEnabledPath, "")
		}, DisabledByEnvironment},
		{"no systemd", true, func(r *cloudinittest.Root) { r.Remove("/run/systemd/system") }, EnabledBySysvinit},
		{"offline image has no /run/systemd", false, func(r *cloudinittest.Root) { r.Remove("/run/systemd/system") }, BootStatusUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cloudinittest.New(t).Installed()
			tc.build(r)
			snap := Read(r.Open(), ReadOptions{Live: tc.live, Now: fixedNow})
			if got := snap.Inputs.Boot.Code; got != tc.want {
				t.Errorf("boot status = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestReadClockAndLeftovers(t *testing.T) {
	boot := testNow.Add(-20 * time.Minute)
	r := cloudinittest.New(t).Installed().Uptime(20*time.Minute).
		Write("/proc/stat", "cpu 1 2\nbtime "+itoa(boot.Unix())+"\n").
		Write(BootFinishedPath, "95.5 - Fri, 28 Nov 2025 10:00:00 +0000 - v. 25.1.4\n").
		Chtime(BootFinishedPath, boot.Add(-36*time.Hour)).
		Write(DataResultPath, `{"v1": {"errors": []}}`).Chtime(DataResultPath, boot.Add(-36*time.Hour))
	snap := Read(r.Open(), ReadOptions{Live: true, Now: fixedNow})
	c := snap.Inputs.Clock
	if !c.BootTime.Equal(boot) || c.Uptime != 20*time.Minute {
		t.Errorf("clock = %+v", c)
	}
	bf := snap.Inputs.BootFinished
	if bf == nil || bf.Content == nil || bf.Content.Version != "25.1.4" || !bf.ModTime.Equal(boot.Add(-36*time.Hour)) {
		t.Fatalf("boot-finished = %+v", bf)
	}
	st := snap.State()
	if st.Running != NotStarted || len(st.Leftovers) != 2 {
		t.Errorf("state = %s, leftovers %+v", st.Running, st.Leftovers)
	}
	// Offline (an image root), the same files prove nothing about a boot.
	st = Read(r.Open(), ReadOptions{Now: fixedNow}).State()
	if len(st.Leftovers) != 0 || st.Clock.Known() {
		t.Errorf("offline leftovers %+v clock %+v", st.Leftovers, st.Clock)
	}
}

func TestReadNotInstalled(t *testing.T) {
	snap := Read(cloudinittest.New(t).Open(), ReadOptions{Live: true, Now: fixedNow})
	if snap.Inputs.Installed || snap.InstalledEvidence != "" {
		t.Errorf("empty root reads as installed (%q)", snap.InstalledEvidence)
	}
	// A removed (not purged) package leaves its configuration behind.
	snap = Read(cloudinittest.New(t).Write("/etc/cloud/cloud.cfg", "").Open(), ReadOptions{Live: true, Now: fixedNow})
	if snap.Inputs.Installed {
		t.Error("a leftover cloud.cfg alone reads as installed")
	}
	for _, p := range []string{"/usr/bin/cloud-init", "/lib/systemd/system/cloud-init-local.service"} {
		snap = Read(cloudinittest.New(t).Write(p, "").Open(), ReadOptions{Live: true, Now: fixedNow})
		if !snap.Inputs.Installed || snap.InstalledEvidence != p {
			t.Errorf("%s present: installed = %v (evidence %q)", p, snap.Inputs.Installed, snap.InstalledEvidence)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

package cloudinit

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/checks/cloud-init/cloudinittest"
)

func TestInside(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(r *cloudinittest.Root)
		want  bool
		via   []string // substrings of the description
	}{
		{"runcmd on debian 12", func(r *cloudinittest.Root) {
			r.Proc(1, 0, "systemd", "/sbin/init").
				Proc(640, 1, "cloud-init", "/usr/bin/python3", "/usr/bin/cloud-init", "modules", "--mode=final").
				Proc(900, 640, "runcmd", "/bin/sh", "/var/lib/cloud/instance/scripts/runcmd").
				Proc(950, 900, "guestcheck", "/usr/local/bin/guestcheck", "--exit-zero").Self(950)
		}, true, []string{"/var/lib/cloud/instance/scripts/runcmd (pid 900)", "under cloud-init modules --mode=final (pid 640)"}},
		{"runcmd under the single process of 24.3+", func(r *cloudinittest.Root) {
			r.Proc(1, 0, "systemd", "/sbin/init").
				Proc(345, 1, "cloud-init", "/usr/bin/python3", "/usr/bin/cloud-init", "--all-stages").
				Proc(1200, 345, "sh", "/bin/sh", "-c", "/var/lib/cloud/instances/iid-1/scripts/runcmd").
				Proc(1201, 1200, "runcmd", "/bin/sh", "/var/lib/cloud/instances/iid-1/scripts/runcmd").
				Proc(1300, 1201, "sudo", "sudo", "guestcheck").
				Proc(1301, 1300, "guestcheck", "guestcheck").Self(1301)
		}, true, []string{"scripts/runcmd (pid 1201)", "cloud-init --all-stages (pid 345)"}},
		{"per-boot script", func(r *cloudinittest.Root) {
			r.Proc(700, 1, "cloud-init", "/usr/bin/cloud-init", "modules", "--mode", "final").
				Proc(800, 700, "guestcheck", "/var/lib/cloud/scripts/per-boot/guestcheck").
				Proc(801, 800, "guestcheck", "/usr/bin/guestcheck").Self(801)
		}, true, []string{"per-boot/guestcheck (pid 800)", "cloud-init modules --mode final (pid 700)"}},
		{"comm with spaces and parentheses", func(r *cloudinittest.Root) {
			r.Proc(700, 1, "cloud-init", "/usr/bin/python3", "/usr/bin/cloud-init", "init").
				Proc(710, 700, "a) (b c", "/bin/weird").
				Proc(711, 710, "guestcheck", "guestcheck").Self(711)
		}, true, []string{"cloud-init init (pid 700)"}},
		{"hidden cmdline falls back to comm", func(r *cloudinittest.Root) {
			r.Proc(700, 1, "cloud-init").Proc(711, 700, "guestcheck", "guestcheck").Self(711)
		}, true, []string{"cloud-init (pid 700)"}},
		{"console login shell", func(r *cloudinittest.Root) {
			r.Proc(1, 0, "systemd", "/sbin/init").Proc(500, 1, "login", "/bin/login", "-p", "--").
				Proc(600, 500, "bash", "-bash").Proc(650, 600, "guestcheck", "guestcheck").Self(650)
		}, false, nil},
		{"editing cloud-init's script is not being run by it", func(r *cloudinittest.Root) {
			r.Proc(600, 1, "bash", "-bash").Proc(610, 600, "vi", "vi", "-R", "x", "y", "/var/lib/cloud/instance/scripts/runcmd").
				Proc(650, 610, "guestcheck", "guestcheck").Self(650)
		}, false, nil},
		{"systemd unit after cloud-final", func(r *cloudinittest.Root) {
			r.Proc(1, 0, "systemd", "/sbin/init").Proc(650, 1, "guestcheck", "/usr/bin/guestcheck", "--boot").Self(650)
		}, false, nil},
		{"parent vanished", func(r *cloudinittest.Root) {
			r.Proc(650, 4242, "guestcheck", "guestcheck").Self(650)
		}, false, nil},
		{"no /proc", func(r *cloudinittest.Root) {}, false, nil},
		{"garbage stat", func(r *cloudinittest.Root) {
			r.Proc(650, 600, "guestcheck", "guestcheck").Self(650).Write("/proc/600/stat", "garbage").
				Write("/proc/600/cmdline", "/usr/bin/cloud-init\x00init\x00")
		}, false, nil},
		{"parent loop is bounded", func(r *cloudinittest.Root) {
			r.Proc(10, 11, "a", "a").Proc(11, 10, "b", "b").Proc(12, 10, "guestcheck", "guestcheck").Self(12)
		}, false, nil},
		{"pid mismatch in stat", func(r *cloudinittest.Root) {
			r.Proc(12, 10, "guestcheck", "guestcheck").Self(12).Write("/proc/10/stat", "99 (cloud-init) S 1").
				Write("/proc/10/cmdline", "cloud-init\x00")
		}, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cloudinittest.New(t)
			tc.build(r)
			got, via := Inside(nil, r.Open())
			if got != tc.want {
				t.Fatalf("Inside = %v (%q), want %v", got, via, tc.want)
			}
			for _, w := range tc.via {
				if !strings.Contains(via, w) {
					t.Errorf("description %q lacks %q", via, w)
				}
			}
		})
	}
}

func TestInsideDeepChainIsBounded(t *testing.T) {
	r := cloudinittest.New(t)
	// cloud-init sits above more ancestors than Inside will walk.
	r.Proc(2, 1, "cloud-init", "/usr/bin/cloud-init", "init")
	pid := 2
	for i := 0; i < maxHops+5; i++ {
		r.Proc(pid+1, pid, "sh", "sh")
		pid++
	}
	r.Self(pid)
	if got, via := Inside(nil, r.Open()); got {
		t.Errorf("walked %d+ hops: %q", maxHops, via)
	}
}

func TestWaitRefusesInside(t *testing.T) {
	r := cloudinittest.New(t).Installed().Uptime(time.Minute).
		Write(StatusPath, `{"v1": {"stage": "modules-final", "modules-final": {"start": 50.0}}}`).
		Proc(640, 1, "cloud-init", "/usr/bin/python3", "/usr/bin/cloud-init", "modules", "--mode=final").
		Proc(900, 640, "runcmd", "/bin/sh", "/var/lib/cloud/instance/scripts/runcmd").
		Proc(950, 900, "guestcheck", "guestcheck", "--wait", "10m").Self(950)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	st, timedOut, err := Wait(ctx, r.Open(), 10*time.Millisecond)
	if !errors.Is(err, ErrInsideCloudInit) || st != nil || timedOut {
		t.Fatalf("Wait = %v, %v, %v", st, timedOut, err)
	}
	if !strings.Contains(err.Error(), "scripts/runcmd (pid 900)") {
		t.Errorf("error does not say who started us: %v", err)
	}
	if time.Since(start) > time.Second {
		t.Error("refusal must be immediate")
	}
}

func TestWait(t *testing.T) {
	running := `{"v1": {"datasource": "DataSourceNoCloud", "stage": "modules-config",
	  "init": {"errors": [], "start": 3.0, "finished": 4.0}, "modules-config": {"errors": [], "start": 9.0, "finished": null}}}`
	finished := `{"v1": {"datasource": "DataSourceNoCloud", "stage": null,
	  "init": {"errors": [], "start": 3.0, "finished": 4.0}, "modules-final": {"errors": [], "start": 20.0, "finished": 25.0}}}`

	t.Run("until done", func(t *testing.T) {
		r := cloudinittest.New(t).Installed().Uptime(time.Minute).Write(GeneratorEnabledPath, "").Write(StatusPath, running)
		root := r.Open()
		go func() {
			time.Sleep(50 * time.Millisecond)
			// cloud-init writes status.json, then result.json.
			r.Write(StatusPath, finished).Write(ResultPath, `{"v1": {"datasource": "DataSourceNoCloud", "errors": []}}`)
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		st, timedOut, err := Wait(ctx, root, 10*time.Millisecond)
		if err != nil || timedOut || st.ExtendedStatus() != "done" {
			t.Fatalf("Wait = %+v, %v, %v", st, timedOut, err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		r := cloudinittest.New(t).Installed().Uptime(time.Minute).Write(GeneratorEnabledPath, "").Write(StatusPath, running)
		ctx, cancel := context.WithTimeout(context.Background(), 80*time.Millisecond)
		defer cancel()
		start := time.Now()
		st, timedOut, err := Wait(ctx, r.Open(), 10*time.Millisecond)
		if err != nil || !timedOut || st == nil || st.Running != IsRunning {
			t.Fatalf("Wait = %+v, %v, %v", st, timedOut, err)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("deadline overrun: %v", el)
		}
	})
	t.Run("disabled returns at once", func(t *testing.T) {
		r := cloudinittest.New(t).Installed().Write(DisabledMarkerPath, "")
		st, timedOut, err := Wait(context.Background(), r.Open(), time.Hour)
		if err != nil || timedOut || st.Running != Disabled {
			t.Fatalf("Wait = %+v, %v, %v", st, timedOut, err)
		}
	})
	t.Run("not installed returns at once", func(t *testing.T) {
		st, timedOut, err := Wait(context.Background(), cloudinittest.New(t).Open(), time.Hour)
		if err != nil || timedOut || st.Installed {
			t.Fatalf("Wait = %+v, %v, %v", st, timedOut, err)
		}
	})
	t.Run("broken result.json still ends the wait", func(t *testing.T) {
		// cloud-init's status only tests that result.json exists, so its
		// --wait returns here too; an unparsable one must not make guestcheck
		// wait until the deadline.
		r := cloudinittest.New(t).Installed().Uptime(time.Minute).Write(GeneratorEnabledPath, "").
			Write(StatusPath, finished).Write(ResultPath, `{"v1": {"errors": [`)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		st, timedOut, err := Wait(ctx, r.Open(), 10*time.Millisecond)
		if err != nil || timedOut || st.ExtendedStatus() != "done" {
			t.Fatalf("Wait = %+v, %v, %v", st, timedOut, err)
		}
	})
	t.Run("broken file is reported at the deadline", func(t *testing.T) {
		r := cloudinittest.New(t).Installed().Write(StatusPath, `{"v1": {"init": {"start": "x"}}}`)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		st, timedOut, err := Wait(ctx, r.Open(), 10*time.Millisecond)
		var fe *FileError
		if st != nil || !timedOut || !errors.As(err, &fe) || fe.Path != StatusPath {
			t.Fatalf("Wait = %+v, %v, %v", st, timedOut, err)
		}
	})
}

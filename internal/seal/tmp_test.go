package seal

import (
	"context"
	"slices"
	"testing"
)

// TestTmpKeepsServiceEntriesOnlyWhileTheyRun: on the live system the
// sockets and private directories of running services stay, unless a
// forced power-off follows (then an offline verify must find nothing);
// offline they always go.
func TestTmpKeepsServiceEntriesOnlyWhileTheyRun(t *testing.T) {
	nodes := append(debianNodes(),
		d("/tmp/.X11-unix"),
		d("/tmp/systemd-private-0123-chrony.service-abc"),
		f("/tmp/build.log", "x"),
	)
	_, root := newRoot(t, nodes)
	paths := func(o Options) []string {
		p := MakePlan(context.Background(), root, []Operation{opTmp}, o)
		var out []string
		for _, a := range p.Actions {
			out = append(out, a.Path)
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		opts      Options
		removesX  bool
		removeLog bool
	}{
		{"live", Options{Live: true, Booted: true}, false, true},
		{"live with poweroff", Options{Live: true, Booted: true, PowerOff: true}, true, true},
		{"offline", Options{}, true, true},
	} {
		got := paths(tc.opts)
		if slices.Contains(got, "/tmp/.X11-unix") != tc.removesX ||
			slices.Contains(got, "/tmp/systemd-private-0123-chrony.service-abc") != tc.removesX {
			t.Errorf("%s: planned %v; want service entries removed: %v", tc.name, got, tc.removesX)
		}
		if slices.Contains(got, "/tmp/build.log") != tc.removeLog {
			t.Errorf("%s: /tmp/build.log not planned: %v", tc.name, got)
		}
	}
}

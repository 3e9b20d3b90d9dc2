package systemd

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	systemdfact "github.com/guestcheck/guestcheck/internal/fact/systemd"
)

// randomBoot is a boot of n units: layers of units ordered after a few
// earlier ones, each with a target-like or a service-like activation, and
// the odd unit that never activated, became active after the boot
// finished, failed while starting or ties with another.
func randomBoot(r *rand.Rand, n int) Facts {
	us := map[string]systemdfact.UnitInfo{}
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("u%03d.service", i)
	}
	finish := uint64(100 * s)
	for i, name := range names {
		var after []string
		for range r.IntN(6) {
			if i > 0 {
				after = append(after, names[r.IntN(i)])
			}
		}
		if r.IntN(10) == 0 {
			after = append(after, "missing.service") // not loaded
		}
		if i > 0 && r.IntN(40) == 0 {
			after = append(after, names[i-1+r.IntN(n-i+1)]) // forward: cycles are allowed
		}
		ix := uint64(r.IntN(90))*s/10 + uint64(i)*1000
		ae := ix + uint64(r.IntN(3))*uint64(r.IntN(400000))
		u := unit(name, "active", ix, ae, after...)
		switch r.IntN(12) {
		case 0: // never activated
			u.InactiveExitMono, u.ActiveEnterMono, u.ActiveState = 0, 0, "inactive"
		case 1: // active after the boot finished
			u.ActiveEnterMono = finish + uint64(r.IntN(10))*s
		case 2: // failed while starting: inactive again, never active
			u.ActiveEnterMono, u.InactiveEnterMono, u.ActiveState = 0, ix+300000, "failed"
		case 3: // restarted: began activating again after it was active
			u.InactiveExitMono, u.ActiveEnterMono, u.InactiveEnterMono = ae+200000, ae, ae+100000
		case 6: // restarted, and failed while starting again
			u.InactiveExitMono, u.ActiveEnterMono, u.InactiveEnterMono, u.ActiveState = ae+200000, ae, ae+500000, "failed"
		case 4: // became active without activating (a device)
			u.InactiveExitMono = 0
		case 5: // ties with an earlier unit
			if i > 0 {
				u.ActiveEnterMono = us[names[r.IntN(i)]].ActiveEnterMono
			}
		}
		u.Read = systemdfact.AllTimes
		us[name] = u
	}
	t := unit("default.target", "active", 0, finish, names[n-r.IntN(min(n, 8))-1:]...)
	t.Read = systemdfact.AllTimes
	us["default.target"] = t
	var jobs []systemdfact.Job
	if r.IntN(3) == 0 {
		jobs = append(jobs, systemdfact.Job{ID: 7, Unit: names[r.IntN(n)], Type: "start", State: "running"})
	}
	return Facts{Live: true, Budget: 60 * time.Second, DefaultTarget: "default.target", NowMono: 200 * s, Jobs: jobs,
		State: systemdfact.ManagerState{SystemState: "running", Version: "252", UserspaceMonotonic: 2 * s, FinishMonotonic: finish},
		Units: us, Journal: JournalFacts{Visible: true, Entries: 3}}
}

// referenceChain is CriticalChain as it was before the walk learnt to
// read timestamps on demand (the one checked against systemd-analyze in
// TestAgainstUserManager), kept as the differential tests' oracle.
func referenceChain(units map[string]systemdfact.UnitInfo, start string, userspace, finish uint64) []Link {
	var out []Link
	seen := map[string]bool{}
	cur := start
	for cur != "" && !seen[cur] {
		seen[cur] = true
		u, ok := units[cur]
		if !ok {
			break
		}
		l := Link{Unit: cur, At: sub(u.ActiveEnterMono, userspace), Took: took(u)}
		if l.Took > 0 {
			l.At = sub(u.InactiveExitMono, userspace)
		}
		out = append(out, l)
		next, best := "", uint64(0)
		deps := slices.Clone(u.After)
		sort.Strings(deps)
		for _, d := range deps {
			du, ok := units[d]
			if ok && inRange(du, finish) && du.ActiveEnterMono > best {
				next, best = d, du.ActiveEnterMono
			}
		}
		cur = next
	}
	return out
}

// lazyGather runs readTimes as Gather does, over full's units with their
// timestamps not read yet, and returns the facts and the Gets it made.
func lazyGather(t *testing.T, full Facts) (Facts, int) {
	t.Helper()
	in := fakeInspector{f: full, gets: new(int)}
	us, err := in.LoadedUnits(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lazy := full
	lazy.Units = map[string]systemdfact.UnitInfo{}
	for _, u := range us {
		lazy.Units[u.Name] = u
	}
	if err := readTimes(context.Background(), in, &lazy); err != nil {
		t.Fatal(err)
	}
	return lazy, *in.gets
}

// TestLazyTimesSameVerdicts is the differential test of reading
// timestamps on demand: over random boots, the facts Gather reads give
// the critical chain and the findings that every unit's timestamps give.
func TestLazyTimesSameVerdicts(t *testing.T) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 1))
		full := randomBoot(r, 2+r.IntN(120))
		if seed%3 == 0 {
			full.State.FinishMonotonic = 0 // the boot is still running
		}
		lazy, _ := lazyGather(t, full)
		st := full.State
		want := referenceChain(full.Units, full.DefaultTarget, st.UserspaceMonotonic, st.FinishMonotonic)
		if diff := cmp.Diff(want, CriticalChain(full.Units, full.DefaultTarget, st.UserspaceMonotonic, st.FinishMonotonic)); diff != "" {
			t.Fatalf("seed %d: CriticalChain (-reference +got):\n%s", seed, diff)
		}
		got := CriticalChain(lazy.Units, lazy.DefaultTarget, st.UserspaceMonotonic, st.FinishMonotonic)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("seed %d: chain (-all timestamps +read on demand):\n%s", seed, diff)
		}
		if diff := cmp.Diff(Judge(full), Judge(lazy)); diff != "" {
			t.Fatalf("seed %d: findings (-all timestamps +read on demand):\n%s", seed, diff)
		}
		if n := ChainNeeds(lazy.Units, lazy.DefaultTarget, st.UserspaceMonotonic, st.FinishMonotonic); n != nil {
			t.Fatalf("seed %d: still needs %v", seed, n)
		}
	}
}

// TestLazyTimesFewGets holds Gather to fewer timestamp Gets than loaded
// units. It read three per unit (one Get each), three quarters of the
// check's D-Bus round trips: seconds in a TCG guest.
func TestLazyTimesFewGets(t *testing.T) {
	full := healthy()
	// 300 more units, as on a Debian guest: activated, ordered after
	// basic.target, nobody's dependency.
	for i := range 300 {
		u := unit(fmt.Sprintf("extra%03d.service", i), "active", 3*s, 3*s+uint64(i)*1000, "basic.target", "sysinit.target")
		full.Units[u.Name] = u
	}
	lazy, gets := lazyGather(t, full)
	if diff := cmp.Diff(Judge(full), Judge(lazy)); diff != "" {
		t.Fatalf("findings (-all timestamps +read on demand):\n%s", diff)
	}
	if gets > 40 {
		t.Errorf("Gather made %d timestamp Gets for %d units, want at most 40 (the chain's and the milestones')", gets, len(full.Units))
	}
	t.Logf("%d timestamp Gets for %d units", gets, len(full.Units))
	for i := range 300 {
		if u := lazy.Units[fmt.Sprintf("extra%03d.service", i)]; u.Read != 0 {
			t.Fatalf("read the timestamps of %s, on no chain", u.Name)
		}
	}
}

// TestChainNeeds follows the walk one read at a time.
func TestChainNeeds(t *testing.T) {
	f := healthy()
	for n, u := range f.Units {
		u.Read = 0
		f.Units[n] = u
	}
	st := f.State
	need := ChainNeeds(f.Units, "graphical.target", st.UserspaceMonotonic, st.FinishMonotonic)
	want := map[string]systemdfact.TimeFields{"graphical.target": systemdfact.InactiveExit | systemdfact.ActiveEnter}
	if diff := cmp.Diff(want, need); diff != "" {
		t.Fatalf("first need (-want +got):\n%s", diff)
	}
	f.Units["graphical.target"] = f.Units["graphical.target"].WithTimes(systemdfact.Times{InactiveExitMono: 16 * s, ActiveEnterMono: 16 * s, Read: systemdfact.AllTimes})
	need = ChainNeeds(f.Units, "graphical.target", st.UserspaceMonotonic, st.FinishMonotonic)
	if diff := cmp.Diff(map[string]systemdfact.TimeFields{"multi-user.target": systemdfact.ActiveEnter}, need); diff != "" {
		t.Fatalf("second need (-want +got):\n%s", diff)
	}
	u := f.Units["multi-user.target"]
	f.Units["multi-user.target"] = u.WithTimes(systemdfact.Times{ActiveEnterMono: 16 * s, Read: systemdfact.ActiveEnter})
	// Whether it began activating, and, for the step after, when its own
	// dependencies became active.
	need = ChainNeeds(f.Units, "graphical.target", st.UserspaceMonotonic, st.FinishMonotonic)
	want = map[string]systemdfact.TimeFields{"multi-user.target": systemdfact.InactiveExit, "cloud-final.service": systemdfact.ActiveEnter,
		"ssh.service": systemdfact.ActiveEnter, "qemu-guest-agent.service": systemdfact.ActiveEnter, "basic.target": systemdfact.ActiveEnter}
	if diff := cmp.Diff(want, need); diff != "" {
		t.Fatalf("third need (-want +got):\n%s", diff)
	}
}

package systemd

import (
	"slices"
	"sort"
	"strings"

	systemdfact "github.com/guestcheck/guestcheck/internal/fact/systemd"
)

// Link is one unit of the critical chain.
type Link struct {
	Unit string
	// At is systemd-analyze's "@", in µs after userspace started: when
	// the unit began activating if that took time, else when it became
	// active.
	At uint64
	// Took is how long it was activating, in µs ("+"); 0 when instant.
	Took uint64
}

// inRange is analyze-critical-chain's times_in_range: activated during
// this boot, before it finished. systemd-analyze leaves units that never
// began activating (InactiveExitTimestamp 0) out of its time data, so
// they cannot be on the chain either.
func inRange(u systemdfact.UnitInfo, finish uint64) bool {
	return u.InactiveExitMono > 0 && u.ActiveEnterMono > 0 && (finish == 0 || u.ActiveEnterMono <= finish)
}

// took is systemd-analyze's per-unit time: activating to active (or to
// inactive, for a unit that failed or exited while starting).
func took(u systemdfact.UnitInfo) uint64 {
	switch {
	case u.ActiveEnterMono >= u.InactiveExitMono && u.InactiveExitMono > 0:
		return u.ActiveEnterMono - u.InactiveExitMono
	case u.InactiveEnterMono >= u.InactiveExitMono && u.InactiveExitMono > 0:
		return u.InactiveEnterMono - u.InactiveExitMono
	}
	return 0
}

// CriticalChain walks from start the way `systemd-analyze critical-chain`
// does with its default fuzz of 0: at each unit, follow the After=
// dependency that became active last (during this boot); stop when no
// dependency was activated. Ties are broken by name, where systemd-analyze
// would print each of them. Every unit's timestamps count as read.
func CriticalChain(units map[string]systemdfact.UnitInfo, start string, userspace, finish uint64) []Link {
	chain, _ := walk(units, start, userspace, finish, false)
	return chain
}

// ChainNeeds returns the timestamps, not read yet (UnitInfo.Read), that
// CriticalChain needs to take its next step from start; none when what
// was read already decides the whole chain, which is then CriticalChain's
// answer over every unit's timestamps. Reading them all costs three D-Bus
// round trips per loaded unit; the walk needs when each of its units'
// dependencies became active, and when the one it follows and the units
// on the chain began activating.
func ChainNeeds(units map[string]systemdfact.UnitInfo, start string, userspace, finish uint64) map[string]systemdfact.TimeFields {
	_, need := walk(units, start, userspace, finish, true)
	return need
}

// walk is CriticalChain. With partial it honours UnitInfo.Read and stops
// at the first choice an unread timestamp could change, returning the
// timestamps that choice needs. When that is whether the next unit began
// activating, it adds what the step after it needs: when that unit's own
// dependencies became active, so one read serves each step.
func walk(units map[string]systemdfact.UnitInfo, start string, userspace, finish uint64, partial bool) ([]Link, map[string]systemdfact.TimeFields) {
	need := map[string]systemdfact.TimeFields{}
	// unread adds to need the timestamps of f that u lacks.
	unread := func(u systemdfact.UnitInfo, f systemdfact.TimeFields) bool {
		if !partial || u.Read&f == f {
			return false
		}
		need[u.Name] |= f &^ u.Read
		return true
	}
	var out []Link
	seen := map[string]bool{}
	cur := start
	for cur != "" && !seen[cur] {
		seen[cur] = true
		u, ok := units[cur]
		if !ok {
			break
		}
		if unread(u, systemdfact.InactiveExit|systemdfact.ActiveEnter) {
			return out, need
		}
		// took reads InactiveEnter only for a unit that began activating
		// after it last became active.
		if u.InactiveExitMono > 0 && u.ActiveEnterMono < u.InactiveExitMono && unread(u, systemdfact.InactiveEnter) {
			return out, need
		}
		l := Link{Unit: cur, At: sub(u.ActiveEnterMono, userspace), Took: took(u)}
		if l.Took > 0 {
			l.At = sub(u.InactiveExitMono, userspace)
		}
		out = append(out, l)
		// The dependency that became active last, during the boot, and
		// had begun activating (inRange); the first by name on a tie.
		var deps []systemdfact.UnitInfo
		missing := false
		for _, d := range u.After {
			if du, ok := units[d]; ok {
				missing = unread(du, systemdfact.ActiveEnter) || missing
				deps = append(deps, du)
			}
		}
		if missing {
			return out, need
		}
		sort.Slice(deps, func(i, j int) bool {
			if deps[i].ActiveEnterMono != deps[j].ActiveEnterMono {
				return deps[i].ActiveEnterMono > deps[j].ActiveEnterMono
			}
			return deps[i].Name < deps[j].Name
		})
		next := ""
		for _, du := range deps {
			if du.ActiveEnterMono == 0 {
				break // sorted: none of the rest became active
			}
			if finish != 0 && du.ActiveEnterMono > finish {
				continue // active after the boot: not part of it
			}
			if unread(du, systemdfact.InactiveExit) {
				for _, e := range du.After {
					if eu, ok := units[e]; ok {
						unread(eu, systemdfact.ActiveEnter)
					}
				}
				return out, need
			}
			if inRange(du, finish) {
				next = du.Name
				break
			}
		}
		cur = next
	}
	return out, nil
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// Slowest returns the n chain links that took longest, slowest first.
func Slowest(chain []Link, n int) []Link {
	s := slices.Clone(chain)
	sort.SliceStable(s, func(i, j int) bool { return s[i].Took > s[j].Took })
	for len(s) > 0 && s[len(s)-1].Took == 0 {
		s = s[:len(s)-1]
	}
	if len(s) > n {
		s = s[:n]
	}
	return s
}

// Cycles returns the ordering cycles of the After= graph among the given
// units: the strongly connected components with more than one unit, or a
// unit ordered after itself. Each cycle is sorted; the list is sorted by
// first unit. systemd breaks such a cycle at start-up by deleting a job
// of one of its units ("Found ordering cycle"), so that unit never starts.
func Cycles(units map[string]systemdfact.UnitInfo) [][]string {
	names := make([]string, 0, len(units))
	for n := range units {
		names = append(names, n)
	}
	sort.Strings(names)
	// Tarjan's algorithm, iterative so a long chain cannot overflow.
	index := map[string]int{}
	low := map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var out [][]string
	next := 0
	type frame struct {
		n string
		i int
	}
	for _, root := range names {
		if _, ok := index[root]; ok {
			continue
		}
		work := []frame{{root, 0}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(work) > 0 {
			top := &work[len(work)-1]
			deps := units[top.n].After
			if top.i < len(deps) {
				d := deps[top.i]
				top.i++
				if _, ok := units[d]; !ok {
					continue
				}
				if _, ok := index[d]; !ok {
					index[d], low[d] = next, next
					next++
					stack = append(stack, d)
					onStack[d] = true
					work = append(work, frame{d, 0})
				} else if onStack[d] {
					low[top.n] = min(low[top.n], index[d])
				}
				continue
			}
			n := top.n
			work = work[:len(work)-1]
			if len(work) > 0 {
				p := work[len(work)-1].n
				low[p] = min(low[p], low[n])
			}
			if low[n] != index[n] {
				continue
			}
			var comp []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp = append(comp, w)
				if w == n {
					break
				}
			}
			if len(comp) > 1 || slices.Contains(units[n].After, n) {
				sort.Strings(comp)
				out = append(out, comp)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i], " ") < strings.Join(out[j], " ") })
	return out
}

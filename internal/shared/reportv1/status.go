package reportv1

// Status is the verdict of a finding or a check. The zero value is not a
// valid status and is never treated as a pass.
type Status string

// The statuses, from best to worst as ranked by Rank.
const (
	Pass  Status = "pass"  // verified and healthy
	Skip  Status = "skip"  // not applicable here, or a dependency did not pass; the reason is in the message
	Warn  Status = "warn"  // works now, but is fragile or will bite later
	Error Status = "error" // the check itself could not run (unreadable file, timeout, panic)
	Fail  Status = "fail"  // verified and broken
)

// Statuses lists every valid status, best first.
var Statuses = []Status{Pass, Skip, Warn, Error, Fail}

// Rank orders statuses from best (0) to worst. An unknown or empty status
// ranks worst of all, so a zero-valued finding can never look healthy.
func (s Status) Rank() int {
	switch s {
	case Pass:
		return 0
	case Skip:
		return 1
	case Warn:
		return 2
	case Error:
		return 3
	case Fail:
		return 4
	}
	return 5
}

// Valid reports whether s is one of the five statuses.
func (s Status) Valid() bool { return s.Rank() < 5 }

// Worse reports whether s is strictly worse than t.
func (s Status) Worse(t Status) bool { return s.Rank() > t.Rank() }

// Worst returns the worst of the given statuses, or Skip when there are none.
func Worst(ss ...Status) Status {
	if len(ss) == 0 {
		return Skip
	}
	w := ss[0]
	for _, s := range ss[1:] {
		if s.Worse(w) {
			w = s
		}
	}
	if !w.Valid() {
		return Error
	}
	return w
}

// Overall is the verdict over several statuses: the worst of them, where a
// skip counts only when everything was skipped. A check with passing and
// skipped findings passes, and so does a run with passing and skipped
// checks; Skip when ss is empty.
func Overall(ss ...Status) Status {
	judged := make([]Status, 0, len(ss))
	for _, s := range ss {
		if s != Skip {
			judged = append(judged, s)
		}
	}
	if len(judged) == 0 {
		return Skip
	}
	return Worst(judged...)
}

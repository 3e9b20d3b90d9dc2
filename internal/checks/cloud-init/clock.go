package cloudinit

import (
	"time"

	"github.com/guestcheck/guestcheck/internal/parse/cloudinitstatus"
)

// BootClock relates this boot's uptime to wall time, so that both
// timestamp encodings and file modification times can be judged against
// the current boot. The zero value knows nothing.
type BootClock struct {
	// Now is the wall time the clock was read at.
	Now time.Time
	// BootTime is when this boot started; zero when unknown.
	BootTime time.Time
	// Uptime is the time since boot at Now; meaningful when UptimeKnown.
	Uptime      time.Duration
	UptimeKnown bool
}

// NewBootClock combines what could be read: btime from /proc/stat (may be
// zero) and /proc/uptime (uptimeKnown false when unreadable). btime is
// preferred for the boot time because it does not depend on when Now was
// taken; the uptime is kept as read because it is what cloud-init 24.2+
// compares against.
func NewBootClock(now, btime time.Time, uptime time.Duration, uptimeKnown bool) BootClock {
	c := BootClock{Now: now, BootTime: btime, Uptime: uptime, UptimeKnown: uptimeKnown}
	switch {
	case c.BootTime.IsZero() && uptimeKnown && !now.IsZero():
		c.BootTime = now.Add(-uptime)
	case !c.BootTime.IsZero() && !uptimeKnown && !now.IsZero() && now.After(btime):
		c.Uptime, c.UptimeKnown = now.Sub(btime), true
	}
	return c
}

// Known reports whether the boot time is known.
func (c BootClock) Known() bool { return !c.BootTime.IsZero() }

// Wall converts a status.json timestamp to wall time: epoch values as they
// are, seconds-since-boot values relative to this boot. ok is false when
// the timestamp is unset or the boot time is unknown.
func (c BootClock) Wall(t cloudinitstatus.Timestamp) (time.Time, bool) {
	switch t.Encoding() {
	case cloudinitstatus.EncodingEpoch:
		return epochTime(t.Raw), true
	case cloudinitstatus.EncodingUptime:
		if !c.Known() {
			return time.Time{}, false
		}
		return c.BootTime.Add(seconds(t.Raw)), true
	}
	return time.Time{}, false
}

// staleSlack absorbs btime's whole-second resolution and the moment
// between reading /proc/uptime and the clock.
const staleSlack = 2 * time.Second

// BeforeBoot reports whether wall time w lies before this boot, i.e. was
// written during an earlier one. Unknown boot time answers false.
func (c BootClock) BeforeBoot(w time.Time) bool {
	return c.Known() && !w.IsZero() && w.Before(c.BootTime.Add(-staleSlack))
}

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

func epochTime(f float64) time.Time {
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9))
}

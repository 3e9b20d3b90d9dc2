// Package timesync is the time-sync check: the kernel's own clock state
// through adjtimex(2) (the NTPSynchronized that timedatectl shows, whatever
// daemon disciplines the clock), which daemon runs (chrony,
// systemd-timesyncd, ntpd), whether it is enabled, and the servers it is
// configured with. Gather reads the facts through runner.Env and the
// read-only adjtimex call (modes 0); judging is pure.
package timesync

import (
	"context"
	"errors"
	iofs "io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/parse/ini"
	"github.com/guestcheck/guestcheck/internal/parse/ntpconf"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Timex is the part of the kernel's struct timex the check judges.
type Timex struct {
	// State is adjtimex's return value: TIME_OK (0) to TIME_ERROR (5).
	State  int
	Status int32 // STA_* flags
	// Offset is the remaining correction the daemon asked for, in
	// nanoseconds when STA_NANO is set, else microseconds.
	Offset   int64
	MaxError int64 // µs: the kernel's bound on the error; 16 s means unsynchronised
	EstError int64 // µs: the daemon's estimate of the error
}

// Kernel flags and limits (include/uapi/linux/timex.h).
const (
	StaUnsync = 0x0040
	StaNano   = 0x2000
	// SyncLimit is the maximum error below which systemd-timedated reports
	// NTPSynchronized (timedated.c: maxerror < 16000000 µs).
	SyncLimit = 16 * time.Second
)

// OffsetDuration is Offset in time units.
func (t Timex) OffsetDuration() time.Duration {
	if t.Status&StaNano != 0 {
		return time.Duration(t.Offset)
	}
	return time.Duration(t.Offset) * time.Microsecond
}

// Synchronized is timedatectl's NTPSynchronized: maxerror under 16 s; the
// STA_UNSYNC flag is ignored, as systemd does, because daemons set it to
// keep the kernel from writing the RTC.
func (t Timex) Synchronized() bool { return time.Duration(t.MaxError)*time.Microsecond < SyncLimit }

// ReadTimex calls adjtimex with modes 0, which only reads.
func ReadTimex() (Timex, error) {
	var tx unix.Timex // Modes 0: read only
	st, err := unix.Adjtimex(&tx)
	if err != nil {
		return Timex{}, err
	}
	return Timex{State: st, Status: tx.Status, Offset: tx.Offset, MaxError: tx.Maxerror, EstError: tx.Esterror}, nil
}

// Daemon is one time-sync implementation as found on the guest.
type Daemon struct {
	Name  string   // chrony, systemd-timesyncd, ntpd
	Units []string // unit names, preferred first
	// Installed: its binary exists.
	Installed bool
	// Unit is its live unit state (the first that exists); zero under --root.
	Unit systemd.UnitState
	// Enablement under --root, from /etc/systemd/system: enabled, masked
	// or disabled.
	Enablement string
	// EnabledUnit is the unit Enablement was found for.
	EnabledUnit string
	Servers     []Server
	// Fallback is true for systemd-timesyncd with no NTP= anywhere and
	// FallbackNTP= never set: it uses the servers compiled into it.
	Fallback bool
	Files    []string
	Problems []string
}

// Server is one configured time source.
type Server struct {
	Kind string // server, pool, peer, refclock, NTP, FallbackNTP, link NTP
	Host string
	At   string
}

// Facts is everything the time-sync check judges.
type Facts struct {
	Live          bool
	NotLiveReason string
	Timex         Timex
	TimexErr      error
	Daemons       []Daemon
	UnitsErr      error
	MaxOffset     time.Duration
}

// Gather reads the facts.
func Gather(ctx context.Context, env *runner.Env) Facts {
	f := Facts{Live: env.Live, MaxOffset: settings.Of(env.Config).MaxOffset}
	r := env.Root
	f.Daemons = []Daemon{readChrony(r), readTimesyncd(r, env.Live), readNTPD(r)}
	if !env.Live {
		f.NotLiveReason = env.NotLiveReason()
		for i := range f.Daemons {
			f.Daemons[i].Enablement, f.Daemons[i].EnabledUnit = systemd.Enablement(r, f.Daemons[i].Units...)
		}
		return f
	}
	f.Timex, f.TimexErr = ReadTimex()
	var names []string
	for _, d := range f.Daemons {
		names = append(names, d.Units...)
	}
	if env.Systemd == nil {
		f.UnitsErr = systemd.ErrNotRunning
		return f
	}
	us, err := env.Systemd.Units(ctx, names...)
	if err != nil {
		f.UnitsErr = err
		return f
	}
	for i := range f.Daemons {
		for _, n := range f.Daemons[i].Units {
			for _, u := range us {
				if u.Name == n && u.Found() && !f.Daemons[i].Unit.Found() {
					f.Daemons[i].Unit = u
				}
			}
		}
	}
	return f
}

func exists(r *fs.Root, ps ...string) bool {
	for _, p := range ps {
		if st, err := r.Stat(p); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// glob lists directory entries matching a final-component pattern.
func glob(r *fs.Root, pattern string) []string {
	dir, pat := path.Split(pattern)
	ents, err := r.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if ok, _ := path.Match(pat, e.Name); ok && !e.IsDir() {
			out = append(out, path.Join(dir, e.Name))
		}
	}
	sort.Strings(out)
	return out
}

// readConf reads one configuration file of d's daemon, in the dialect fl,
// into d: the file, its problems and its time sources, each named with its
// file and line. It returns the file's directives, for the caller to
// follow the includes its daemon knows; none when the file is absent or
// unreadable (a problem unless absent).
func (d *Daemon) readConf(r *fs.Root, p string, fl ntpconf.Flavor) []ntpconf.Directive {
	b, err := r.ReadFile(p)
	if err != nil {
		if !errors.Is(err, iofs.ErrNotExist) {
			d.Problems = append(d.Problems, fs.ErrorText(r.Display(p), err))
		}
		return nil
	}
	d.Files = append(d.Files, r.Display(p))
	ds, probs := ntpconf.Parse(b, fl)
	src, sprobs := ntpconf.Sources(ds)
	for _, pr := range append(probs, sprobs...) {
		d.Problems = append(d.Problems, pr.In(r.Display(p)).String())
	}
	for _, s := range src {
		d.Servers = append(d.Servers, Server{Kind: s.Kind, Host: s.Host, At: r.Display(p) + ":" + strconv.Itoa(s.Line)})
	}
	return ds
}

func readChrony(r *fs.Root) Daemon {
	d := Daemon{Name: "chrony", Units: []string{"chrony.service", "chronyd.service"},
		Installed: exists(r, "/usr/sbin/chronyd", "/usr/bin/chronyd")}
	main := ""
	for _, p := range []string{"/etc/chrony/chrony.conf", "/etc/chrony.conf"} {
		if r.Exists(p) {
			main = p
			break
		}
	}
	if main == "" {
		return d
	}
	var load func(p string, sourcesOnly bool, depth int)
	load = func(p string, sourcesOnly bool, depth int) {
		ds := d.readConf(r, p, ntpconf.Chrony)
		if sourcesOnly || depth > 8 {
			return
		}
		for _, x := range ds {
			for _, a := range x.Args {
				switch x.Keyword {
				case "include":
					for _, f := range glob(r, a) {
						load(f, false, depth+1)
					}
				case "confdir":
					for _, f := range glob(r, path.Join(a, "*.conf")) {
						load(f, false, depth+1)
					}
				case "sourcedir":
					// Sources from DHCP (/run/chrony-dhcp) and packages.
					for _, f := range glob(r, path.Join(a, "*.sources")) {
						load(f, true, depth+1)
					}
				}
			}
		}
	}
	load(main, false, 0)
	return d
}

func readNTPD(r *fs.Root) Daemon {
	d := Daemon{Name: "ntpd", Units: []string{"ntp.service", "ntpd.service", "ntpsec.service"},
		Installed: exists(r, "/usr/sbin/ntpd", "/usr/bin/ntpd")}
	var load func(p string, depth int)
	load = func(p string, depth int) {
		for _, x := range d.readConf(r, p, ntpconf.NTP) {
			if x.Keyword == "includefile" && len(x.Args) > 0 && depth < 8 {
				load(x.Args[0], depth+1)
			}
		}
	}
	for _, p := range []string{"/etc/ntpsec/ntp.conf", "/etc/ntp.conf"} {
		if r.Exists(p) {
			load(p, 0)
			break
		}
	}
	return d
}

// timesyncd's configuration: the main file, then drop-ins from /etc, /run
// and /usr/lib sorted by name, a name in an earlier directory hiding the
// same name in a later one (systemd's conf_files_list).
func readTimesyncd(r *fs.Root, live bool) Daemon {
	d := Daemon{Name: "systemd-timesyncd", Units: []string{"systemd-timesyncd.service"},
		Installed: exists(r, "/usr/lib/systemd/systemd-timesyncd", "/lib/systemd/systemd-timesyncd")}
	files := []string{}
	if r.Exists("/etc/systemd/timesyncd.conf") {
		files = append(files, "/etc/systemd/timesyncd.conf")
	}
	byName := map[string]string{}
	for _, dir := range []string{"/usr/lib/systemd/timesyncd.conf.d", "/run/systemd/timesyncd.conf.d", "/etc/systemd/timesyncd.conf.d"} {
		for _, f := range glob(r, dir+"/*.conf") {
			byName[path.Base(f)] = f // later (higher-priority) directories win
		}
	}
	var names []string
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		files = append(files, byName[n])
	}
	var ntp, fallback []Server
	fallbackSet := false
	for _, p := range files {
		b, err := r.ReadFile(p)
		if err != nil {
			d.Problems = append(d.Problems, fs.ErrorText(r.Display(p), err))
			continue
		}
		d.Files = append(d.Files, r.Display(p))
		f, probs := ini.Parse(r.Display(p), b, ini.Systemd)
		for _, pr := range probs {
			d.Problems = append(d.Problems, pr.String())
		}
		for _, e := range f.Entries {
			if e.Section != "Time" {
				continue
			}
			at := r.Display(p) + ":" + strconv.Itoa(e.Line)
			switch e.Key {
			case "NTP":
				// An empty assignment resets the list.
				if e.Value == "" {
					ntp = nil
				}
				for _, h := range strings.Fields(e.Value) {
					ntp = append(ntp, Server{Kind: "NTP", Host: h, At: at})
				}
			case "FallbackNTP":
				fallbackSet = true
				if e.Value == "" {
					fallback = nil
				}
				for _, h := range strings.Fields(e.Value) {
					fallback = append(fallback, Server{Kind: "FallbackNTP", Host: h, At: at})
				}
			}
		}
	}
	// Per-link servers from networkd (DHCP or .network files), live only.
	var link []Server
	if live {
		for _, f := range glob(r, "/run/systemd/netif/links/*") {
			b, err := r.ReadFile(f)
			if err != nil {
				continue
			}
			for i, l := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(l, "NTP="); ok {
					for _, h := range strings.Fields(v) {
						link = append(link, Server{Kind: "link NTP", Host: h, At: r.Display(f) + ":" + strconv.Itoa(i+1)})
					}
				}
			}
		}
	}
	d.Servers = append(ntp, link...)
	if len(d.Servers) == 0 {
		d.Servers = fallback
		d.Fallback = !fallbackSet
	}
	return d
}

package ntpconf

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// debianChrony is the start of Debian 12's /etc/chrony/chrony.conf.
const debianChrony = `# Welcome to the chrony configuration file. See chrony.conf(5) for more
# information about usable directives.

# Include configuration files found in /etc/chrony/conf.d.
confdir /etc/chrony/conf.d

# Use Debian vendor zone.
pool 2.debian.pool.ntp.org iburst

# Use time sources from DHCP.
sourcedir /run/chrony-dhcp

! server 192.0.2.1 iburst
; a comment
% another
refclock PHC /dev/ptp0 poll 2
driftfile /var/lib/chrony/chrony.drift
`

func TestChrony(t *testing.T) {
	t.Parallel()
	ds, probs := Parse([]byte(debianChrony), Chrony)
	if len(probs) != 0 {
		t.Fatal(probs)
	}
	var kws []string
	for _, d := range ds {
		kws = append(kws, d.Keyword)
	}
	if diff := cmp.Diff([]string{"confdir", "pool", "sourcedir", "refclock", "driftfile"}, kws); diff != "" {
		t.Errorf("keywords (-want +got):\n%s", diff)
	}
	src, _ := Sources(ds)
	want := []Source{{"pool", "2.debian.pool.ntp.org", 8}, {"refclock", "PHC /dev/ptp0", 16}}
	if diff := cmp.Diff(want, src); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
}

func TestNTP(t *testing.T) {
	t.Parallel()
	ds, _ := Parse([]byte("driftfile /var/lib/ntp/ntp.drift\npool 0.debian.pool.ntp.org iburst # vendor\nserver 192.0.2.5\n# server 198.51.100.1\nSERVER\n"), NTP)
	src, probs := Sources(ds)
	if diff := cmp.Diff([]Source{{"pool", "0.debian.pool.ntp.org", 2}, {"server", "192.0.2.5", 3}}, src); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
	if len(probs) != 1 || probs[0].Line != 5 || !strings.Contains(probs[0].Msg, "without a host") {
		t.Errorf("problems = %v", probs)
	}
}

func TestBinary(t *testing.T) {
	t.Parallel()
	if _, probs := Parse([]byte("server a\nserver \x00b\n"), Chrony); len(probs) != 1 || probs[0].Line != 2 {
		t.Errorf("problems = %v", probs)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(debianChrony, false)
	f.Add("server x # y\n", true)
	f.Fuzz(func(t *testing.T, s string, ntp bool) {
		fl := Chrony
		if ntp {
			fl = NTP
		}
		ds, _ := Parse([]byte(s), fl)
		src, _ := Sources(ds)
		for _, x := range src {
			if x.Host == "" || x.Line < 1 {
				t.Fatalf("bad source %+v", x)
			}
		}
	})
}

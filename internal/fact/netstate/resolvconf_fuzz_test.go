package netstate

import (
	"reflect"
	"strings"
	"testing"
)

// FuzzResolvConfRoundTrip: what was read, written back as resolvconf or
// systemd-resolved write it, reads the same, and a trailing comment or a
// last search line does what glibc makes of it.
func FuzzResolvConfRoundTrip(f *testing.F) {
	f.Add([]byte("nameserver 192.0.2.53\nnameserver fe80::1%eth0\nsearch example.org b.example\noptions ndots:2 edns0\n"))
	f.Add([]byte("domain a.example\nsearch\n;x\nnameserver 2001:db8::1 extra\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rc, _ := ParseResolvConf("f", b)
		var w strings.Builder
		for _, ns := range rc.Nameservers {
			w.WriteString("nameserver " + ns.Addr.String() + "\n")
		}
		if len(rc.Search) > 0 {
			w.WriteString("search " + strings.Join(rc.Search, " ") + "\n")
		}
		if len(rc.Options) > 0 {
			w.WriteString("options " + strings.Join(rc.Options, " ") + "\n")
		}
		back, probs := ParseResolvConf("g", []byte(w.String()))
		if len(probs) != 0 || !reflect.DeepEqual(back.Addrs(), rc.Addrs()) || !reflect.DeepEqual(back.Search, rc.Search) || !reflect.DeepEqual(back.Options, rc.Options) {
			t.Fatalf("%+v written as %q reads %+v, %v", rc, w.String(), back, probs)
		}
		more := append(append([]byte(nil), b...), "\n# nameserver 192.0.2.1\nsearch z.example\n"...)
		rc2, _ := ParseResolvConf("f", more)
		if !reflect.DeepEqual(rc2.Addrs(), rc.Addrs()) || !reflect.DeepEqual(rc2.Search, []string{"z.example"}) {
			t.Fatalf("a comment and a last search line gave %+v from %+v", rc2, rc)
		}
	})
}

package procnet

import (
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"
)

// Captured on x86-64 (little-endian): sshd on 0.0.0.0:22 and [::]:22, a
// client connection, and a listener on 127.0.0.1:631.
const tcp4 = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 18617 1 0000000000000000 100 0 0 10 0
   1: 0100007F:0277 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 20110 1 0000000000000000 100 0 0 10 0
   2: 0F02000A:0016 0202000A:C350 01 00000000:00000000 02:0008C9A1 00000000     0        0 31337 4 0000000000000000 20 4 29 10 -1
`

const tcp6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:0016 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 18619 1 0000000000000000 100 0 0 10 0
   1: B80D0120000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 44 1 0000000000000000 100 0 0 10 0
`

func little() bool { return binary.NativeEndian.Uint16([]byte{1, 0}) == 1 }

func TestParse(t *testing.T) {
	t.Parallel()
	if !little() {
		t.Skip("the captured tables are from a little-endian machine")
	}
	s4, err := Parse([]byte(tcp4), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(s4) != 3 {
		t.Fatalf("got %d sockets, want 3", len(s4))
	}
	for i, want := range []struct {
		local  string
		listen bool
		inode  uint64
	}{{"0.0.0.0:22", true, 18617}, {"127.0.0.1:631", true, 20110}, {"10.0.2.15:22", false, 31337}} {
		if s4[i].Local != netip.MustParseAddrPort(want.local) || s4[i].Listening() != want.listen || s4[i].Inode != want.inode {
			t.Errorf("row %d = %+v, want %s listen=%v inode=%d", i, s4[i], want.local, want.listen, want.inode)
		}
	}
	if s4[2].Remote != netip.MustParseAddrPort("10.0.2.2:50000") {
		t.Errorf("remote = %v", s4[2].Remote)
	}
	s6, err := Parse([]byte(tcp6), true)
	if err != nil {
		t.Fatal(err)
	}
	if s6[0].Local != netip.MustParseAddrPort("[::]:22") || s6[1].Local != netip.MustParseAddrPort("[2001:db8::1]:8080") || s6[1].UID != 1000 {
		t.Errorf("tcp6 = %+v", s6)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"h\n 0: 0100007F:0016 00000000:0000 0A\n",
		"h\n 0: 0100007F0016 00000000:0000 0A 0:0 0:0 0 0 0 1\n",
		"h\n 0: 0100007F:0016 00000000:0000 ZZ 0:0 0:0 0 0 0 1\n",
		"h\n 0: 0100007F:0016 00000000:0000 0A 0:0 0:0 0 x 0 1\n",
	} {
		if _, err := Parse([]byte(in), false); err == nil || !strings.HasPrefix(err.Error(), "line 2:") {
			t.Errorf("Parse(%q) error = %v, want one naming line 2", in, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(tcp4, false)
	f.Add(tcp6, true)
	f.Fuzz(func(t *testing.T, s string, v6 bool) {
		socks, err := Parse([]byte(s), v6)
		if err != nil {
			return
		}
		for _, so := range socks {
			if so.Local.Addr().Is6() != v6 {
				t.Fatalf("family mismatch: %v", so.Local)
			}
		}
	})
}

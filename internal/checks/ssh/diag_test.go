package ssh

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/parse/procnet"
)

// procListening is the /proc/net/tcp* reading that sock_diag replaces.
func procListening(t *testing.T, file string, v6 bool) []procnet.Socket {
	t.Helper()
	r, err := fs.Open("/")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := r.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	all, err := procnet.Parse(b, v6)
	if err != nil {
		t.Fatal(err)
	}
	var out []procnet.Socket
	for _, s := range all {
		if s.Listening() {
			out = append(out, s)
		}
	}
	return out
}

func sortSockets(l []procnet.Socket) {
	slices.SortFunc(l, func(a, b procnet.Socket) int { return int(a.Inode) - int(b.Inode) })
}

// TestDiagMatchesProcNet: the sock_diag dump reports exactly the listening
// sockets /proc/net/tcp and tcp6 list (address, port, state, uid, inode),
// with listeners of our own on loopback so that neither list is empty.
func TestDiagMatchesProcNet(t *testing.T) {
	l4, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l4.Close()
	var l6 net.Listener
	if l, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		l6 = l
		defer l6.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, c := range []struct {
		file   string
		family uint8
		v6     bool
		own    net.Listener
	}{{"/proc/net/tcp", unix.AF_INET, false, l4}, {"/proc/net/tcp6", unix.AF_INET6, true, l6}} {
		if c.own == nil {
			continue // no IPv6 here
		}
		// A listener may come or go between the two reads: retry a few times.
		var got, want []procnet.Socket
		for try := 0; try < 5; try++ {
			got, err = diagListening(ctx, c.family)
			if err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			want = procListening(t, c.file, c.v6)
			sortSockets(got)
			sortSockets(want)
			if slices.Equal(got, want) {
				break
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: sock_diag says\n%v\n/proc says\n%v", c.file, got, want)
		}
		ap := netip.MustParseAddrPort(c.own.Addr().String())
		if !slices.ContainsFunc(got, func(s procnet.Socket) bool { return s.Local == ap }) {
			t.Errorf("%s: our listener %s is missing from %v", c.file, ap, got)
		}
	}
}

// TestReadListenersOwnListener: the listener this test opens is found and
// attributed to this process (root reads every /proc/PID/fd; a user reads
// its own).
func TestReadListenersOwnListener(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r, err := fs.Open("/")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ls, _, err := ReadListeners(context.Background(), nil, r, nil)
	if err != nil {
		t.Fatal(err)
	}
	ap := netip.MustParseAddrPort(l.Addr().String())
	i := slices.IndexFunc(ls, func(x Listener) bool { return x.Addr == ap })
	if i < 0 {
		t.Fatalf("listener %s not found in %v", ap, ls)
	}
	if ls[i].PID != unix.Getpid() {
		t.Errorf("listener %s owned by %d (%s), want this process %d", ap, ls[i].PID, ls[i].Comm, unix.Getpid())
	}
}

// TestReadListenersOnlyJudgedOwners: with a filter, only the listener it
// accepts is attributed; the other is listed without an owner.
func TestReadListenersOnlyJudgedOwners(t *testing.T) {
	var aps []netip.AddrPort
	for range 2 {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		aps = append(aps, netip.MustParseAddrPort(l.Addr().String()))
	}
	r, err := fs.Open("/")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ls, _, err := ReadListeners(context.Background(), nil, r, func(a netip.AddrPort) bool { return a == aps[0] })
	if err != nil {
		t.Fatal(err)
	}
	for n, ap := range aps {
		i := slices.IndexFunc(ls, func(x Listener) bool { return x.Addr == ap })
		switch {
		case i < 0:
			t.Errorf("listener %s not found in %v", ap, ls)
		case n == 0 && ls[i].PID != unix.Getpid():
			t.Errorf("judged listener %s owned by %d (%s), want this process %d", ap, ls[i].PID, ls[i].Comm, unix.Getpid())
		case n == 1 && ls[i].PID != 0:
			t.Errorf("listener %s was attributed (%d, %s) though no verdict looks at it", ap, ls[i].PID, ls[i].Comm)
		}
	}
}

func TestParseDiagMsg(t *testing.T) {
	b := make([]byte, inetDiagMsgLen)
	b[0], b[1] = unix.AF_INET, tcpListen
	binary.BigEndian.PutUint16(b[4:], 22)
	copy(b[8:], []byte{192, 0, 2, 7})
	binary.NativeEndian.PutUint32(b[64:], 0)
	binary.NativeEndian.PutUint32(b[68:], 4242)
	s, err := parseDiagMsg(b)
	if err != nil {
		t.Fatal(err)
	}
	want := procnet.Socket{Local: netip.MustParseAddrPort("192.0.2.7:22"), Remote: netip.MustParseAddrPort("0.0.0.0:0"), State: procnet.StateListen, Inode: 4242}
	if s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
	b[0] = unix.AF_INET6
	copy(b[8:], netip.MustParseAddr("2001:db8::1").AsSlice())
	if s, err = parseDiagMsg(b); err != nil || s.Local != netip.MustParseAddrPort("[2001:db8::1]:22") {
		t.Errorf("v6: got %+v, %v", s, err)
	}
	for _, bad := range [][]byte{nil, b[:inetDiagMsgLen-1], append([]byte{99}, b[1:]...)} {
		if _, err := parseDiagMsg(bad); err == nil {
			t.Errorf("parseDiagMsg(% x) = nil error", bad)
		}
	}
}

func FuzzParseDiagMsg(f *testing.F) {
	f.Add(make([]byte, inetDiagMsgLen))
	v4 := make([]byte, inetDiagMsgLen)
	v4[0], v4[1] = unix.AF_INET, tcpListen
	f.Add(v4)
	v6 := make([]byte, inetDiagMsgLen+8)
	v6[0], v6[1] = unix.AF_INET6, tcpListen
	f.Add(v6)
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseDiagMsg(b)
		if err != nil {
			return
		}
		if s.Local.Addr().Is4() != (b[0] == unix.AF_INET) {
			t.Errorf("family %d gave address %s", b[0], s.Local)
		}
	})
}

func BenchmarkReadListeners(b *testing.B) {
	r, err := fs.Open("/")
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for b.Loop() {
		if _, _, err := ReadListeners(context.Background(), nil, r, nil); err != nil {
			b.Fatal(err)
		}
	}
}

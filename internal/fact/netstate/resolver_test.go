package netstate

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/store"
)

// TestResolverReadersAgree: sealprep's Confined and guestcheck's Root read
// the same resolver stack from the same tree.
func TestResolverReadersAgree(t *testing.T) {
	for _, name := range []string{"resolv-plain", "resolv-stub", "resolv-stub-image"} {
		dir := filepath.Join("testdata/roots", name)
		r := openRoot(t, dir)
		c, err := fs.OpenConfined(dir)
		if err != nil {
			t.Fatal(err)
		}
		a, b := ReadResolverStack(r), ReadResolverStack(c)
		c.Close()
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: Root read %+v\nConfined read %+v", name, a, b)
		}
	}
}

// TestResolverOncePerRun: the stack of one run is the one first read.
func TestResolverOncePerRun(t *testing.T) {
	r := writeRoot(t, map[string]string{"/etc/resolv.conf": "nameserver 192.0.2.53\n"})
	s := store.New()
	a := Resolver(s, r)
	b := Resolver(s, r)
	if a.Main.Conf.Nameservers == nil || &a.Main.Conf.Nameservers[0] != &b.Main.Conf.Nameservers[0] {
		t.Error("a second check of the run read the resolver files again")
	}
	if c := Resolver(nil, r); &c.Main.Conf.Nameservers[0] == &a.Main.Conf.Nameservers[0] {
		t.Error("without a store the stack was not read again")
	}
}

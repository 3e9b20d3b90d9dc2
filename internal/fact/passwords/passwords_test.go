package passwords

import (
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// shadow has one account of each kind a field can make (the hashes are
// made up, and must never leave the package).
const shadow = `root:*:19000:0:99999:7:::
daemon:*:19000:0:99999:7:::
debian:!:19000:0:99999:7:::
locked:!$6$salt$LOCKEDHASH:19000:0:99999:7:::
never:!!:19000:0:99999:7:::
starbang:!*:19000:0:99999:7:::
ops:$6$salt$USABLEHASH:19000:0:99999:7:::
nopass::19000:0:99999:7:::
ops:!:19000:0:99999:7:::
short:$6$salt$BROKENHASH
`

func TestOf(t *testing.T) {
	l := Of("/etc/shadow", []byte(shadow))
	if !slices.Equal(l.Usable, []string{"ops"}) || !slices.Equal(l.Empty, []string{"nopass"}) {
		t.Errorf("usable %q, empty %q", l.Usable, l.Empty)
	}
	if !slices.Equal(l.Open(), []string{"nopass", "ops"}) {
		t.Errorf("open %q", l.Open())
	}
	if len(l.Problems) != 1 || l.Problems[0] != "/etc/shadow:10: 2 fields, want 9" || l.Known() {
		t.Errorf("problems %q", l.Problems)
	}
	for _, s := range append(l.Problems, l.Open()...) {
		if strings.Contains(s, "HASH") {
			t.Errorf("a hash left the package: %q", s)
		}
	}
	if l := Of("/etc/shadow", []byte("root:*:1:0:99999:7:::\n")); !l.Known() || len(l.Open()) != 0 {
		t.Errorf("all locked: %+v", l)
	}
}

func TestRead(t *testing.T) {
	dir := testenv.WriteTree(t, map[string]string{"/etc/shadow": shadow})
	r, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if l := Read(r); l.Err != nil || !slices.Equal(l.Usable, []string{"ops"}) || !strings.HasSuffix(l.File, "/etc/shadow") {
		t.Errorf("%+v", l)
	}
	if err := os.Remove(filepath.Join(dir, "etc", "shadow")); err != nil {
		t.Fatal(err)
	}
	if l := Read(r); !errors.Is(l.Err, iofs.ErrNotExist) || l.Known() {
		t.Errorf("missing: %+v", l)
	}
}

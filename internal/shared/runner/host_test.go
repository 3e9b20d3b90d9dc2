package runner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

// TestReadHostImage: under an image root the header names the first line
// of /etc/hostname and no boot, and an absent file leaves it empty.
func TestReadHostImage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file string // file "" means no /etc/hostname
		want       Host
	}{
		{"plain", "vm-01\n", Host{Hostname: "vm-01"}},
		{"spaces and more lines", "  vm-02\nsecond\n", Host{Hostname: "vm-02"}},
		{"absent", "", Host{}},
	} {
		dir := t.TempDir()
		if tc.file != "" {
			if err := os.MkdirAll(filepath.Join(dir, "etc"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "etc/hostname"), []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		root, err := fs.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := ReadHost(root); got != tc.want {
			t.Errorf("%s: ReadHost = %+v, want %+v", tc.name, got, tc.want)
		}
		root.Close()
	}
}

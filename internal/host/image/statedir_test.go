package image

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTeardownDropsEmptyStateDir: the last session's teardown takes the
// state directory with it, so that an --image run leaves no empty
// /run/sealprep/image behind; one that another session still has stays,
// and the next session makes it again. Nothing here is mounted or
// attached: teardown finds nothing of the kernel's to undo.
func TestTeardownDropsEmptyStateDir(t *testing.T) {
	base := filepath.Join(t.TempDir(), "image")
	var dirs []string
	for _, id := range []string{"1-aaaaaaaaaaaa", "2-bbbbbbbbbbbb"} {
		d := filepath.Join(base, id)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "state.json"), []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	if err := teardown(dirs[0], "sealprep:"+filepath.Base(dirs[0]), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dirs[1]); err != nil {
		t.Fatalf("another session's directory: %v", err)
	}
	if err := teardown(dirs[1], "sealprep:"+filepath.Base(dirs[1]), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(base); !os.IsNotExist(err) {
		t.Errorf("the empty state directory is left: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(base)); err != nil {
		t.Errorf("a state directory's parent that is not /run/sealprep went too: %v", err)
	}
	s := &Session{File: "/nonexistent/disk.img", opts: Options{StateDir: base}}
	if err := s.makeDir(); err != nil {
		t.Fatalf("the next session: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "state.json")); err != nil {
		t.Errorf("the next session's state file: %v", err)
	}
}

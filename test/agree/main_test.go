package agree

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// bin holds the paths of the binaries TestMain builds, and an empty
// guestcheck configuration so that no test reads the host's own.
var bin struct{ sealprep, guestcheck, config string }

// TestMain builds sealprep and guestcheck once per test run, static as
// they ship, so every root is judged by the real commands.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agree-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "agree:", err)
		os.Exit(1)
	}
	code := 1
	if err := buildBinaries(dir); err != nil {
		fmt.Fprintln(os.Stderr, "agree:", err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func buildBinaries(dir string) error {
	bin.sealprep = filepath.Join(dir, "sealprep")
	bin.guestcheck = filepath.Join(dir, "guestcheck")
	bin.config = filepath.Join(dir, "guestcheck.yaml")
	if err := os.WriteFile(bin.config, nil, 0o644); err != nil {
		return err
	}
	// go test puts its own go first on PATH.
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator),
		"github.com/guestcheck/guestcheck/cmd/sealprep", "github.com/guestcheck/guestcheck/cmd/guestcheck")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	return nil
}

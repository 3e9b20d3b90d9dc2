package appliance

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Kernel is the appliance's kernel: a Linux kernel image and the
// directory of its modules.
type Kernel struct {
	// Path is the kernel image (/boot/vmlinuz-VERSION).
	Path string
	// Version is the release its modules directory is named after.
	Version string
	// Modules is /lib/modules/VERSION.
	Modules string
}

// ErrNoKernel is FindKernel's refusal on a host without a kernel it can
// boot the appliance with.
var ErrNoKernel = errors.New("no kernel for the sealing appliance")

// NoKernelFix is what to do about ErrNoKernel, in the user's words.
const NoKernelFix = "install Debian's linux-image-cloud-amd64 (or any /boot/vmlinuz-* with its /lib/modules), or name a kernel with --appliance-kernel"

// FindKernel finds the appliance's kernel as supermin does: named (a
// kernel image whose modules are in modulesRoot/VERSION, VERSION read
// from its name vmlinuz-VERSION or, for another name, the one directory
// there), or the newest bootDir/vmlinuz-* whose modules directory exists.
func FindKernel(named, bootDir, modulesRoot string) (Kernel, error) {
	if named != "" {
		st, err := os.Stat(named)
		if err != nil || !st.Mode().IsRegular() {
			return Kernel{}, fmt.Errorf("--appliance-kernel %s: not a kernel image file", named)
		}
		v := strings.TrimPrefix(filepath.Base(named), "vmlinuz-")
		if v != filepath.Base(named) {
			// Named for its release: its modules are those of that
			// release, or none (another release's would not load).
			if isDir(filepath.Join(modulesRoot, v)) {
				return Kernel{Path: named, Version: v, Modules: filepath.Join(modulesRoot, v)}, nil
			}
			return Kernel{}, fmt.Errorf("--appliance-kernel %s: no modules for it in %s/%s", named, modulesRoot, v)
		}
		dirs, _ := filepath.Glob(filepath.Join(modulesRoot, "*", "modules.dep"))
		if len(dirs) == 1 {
			m := filepath.Dir(dirs[0])
			return Kernel{Path: named, Version: filepath.Base(m), Modules: m}, nil
		}
		return Kernel{}, fmt.Errorf("--appliance-kernel %s: no modules for it in %s (name it vmlinuz-VERSION beside %s/VERSION)", named, modulesRoot, modulesRoot)
	}
	imgs, _ := filepath.Glob(filepath.Join(bootDir, "vmlinuz-*"))
	var best Kernel
	for _, p := range imgs {
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		v := strings.TrimPrefix(filepath.Base(p), "vmlinuz-")
		m := filepath.Join(modulesRoot, v)
		if _, err := os.Stat(filepath.Join(m, "modules.dep")); err != nil {
			continue
		}
		if best.Path == "" || versionLess(best.Version, v) {
			best = Kernel{Path: p, Version: v, Modules: m}
		}
	}
	if best.Path == "" {
		return Kernel{}, fmt.Errorf("%w: no %s/vmlinuz-* with its modules in %s: %s", ErrNoKernel, bootDir, modulesRoot, NoKernelFix)
	}
	return best, nil
}

func isDir(p string) bool { st, err := os.Stat(p); return err == nil && st.IsDir() }

// versionLess compares kernel releases as sort -V does: runs of digits
// by value, the rest as text.
func versionLess(a, b string) bool {
	for a != "" && b != "" {
		da, ra := splitRun(a)
		db, rb := splitRun(b)
		if da != db {
			na, ea := strconv.ParseUint(da, 10, 64)
			nb, eb := strconv.ParseUint(db, 10, 64)
			if ea != nil || eb != nil {
				return da < db
			}
			if na != nb {
				return na < nb
			}
			// The same value written differently ("01", "1"): on
			// to the next run.
		}
		a, b = ra, rb
	}
	return len(a) < len(b)
}

// splitRun cuts s's first run of digits or of other characters.
func splitRun(s string) (string, string) {
	digit := s[0] >= '0' && s[0] <= '9'
	i := 1
	for i < len(s) && (s[i] >= '0' && s[i] <= '9') == digit {
		i++
	}
	return s[:i], s[i:]
}

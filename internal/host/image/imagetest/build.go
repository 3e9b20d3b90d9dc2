// Package imagetest builds small GPT disk images from directory trees for
// the tests of --image: sfdisk for the table, mkfs.ext4 -d to fill a
// filesystem at its partition's offset without a loop device, and
// qemu-img convert for qcow2.
package imagetest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/blockid/blocktest"
	"github.com/guestcheck/guestcheck/internal/testenv"
	"golang.org/x/sys/unix"
)

// Common GPT types.
const (
	TypeRootAMD64 = "4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709"
	TypeLinux     = "0FC63DAF-8483-4772-8E79-3D69D8477DE4"
	TypeESP       = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"
	TypeLVM       = "E6D6D379-F507-44C2-A23C-238F2A3DF928"
)

// Part is one partition to build.
type Part struct {
	Type    string
	FS      string // "ext4", "vfat" or "" (left blank)
	SizeMiB int
	Tree    string // ext4: the directory to copy in (mkfs.ext4 -d)
	UUID    string // filesystem UUID (ext4) or serial "ABCD1234" (vfat)
	Label   string
}

// Build writes a raw GPT image with parts to dir/name and returns its path.
// With qcow2 set, the raw image is converted and the qcow2 path returned.
func Build(t testing.TB, dir, name string, parts []Part, qcow2 bool) string {
	t.Helper()
	testenv.Tool(t, "sfdisk", "fdisk")
	testenv.Tool(t, "mkfs.ext4", "e2fsprogs")
	total := 2 // MiB: the table at the front, the backup at the end
	for _, p := range parts {
		total += p.SizeMiB
	}
	raw := blocktest.Sparse(t, dir, name+".raw", int64(total)<<20)
	var types []string
	var sizes []int
	for _, p := range parts {
		types, sizes = append(types, p.Type), append(sizes, p.SizeMiB)
	}
	writeGPT(t, raw, types, sizes)
	start := 2048
	for _, p := range parts {
		off := int64(start) * 512
		switch p.FS {
		case "ext4":
			args := []string{"-q", "-F", "-t", "ext4", "-E", fmt.Sprintf("offset=%d", off)}
			if p.UUID != "" {
				args = append(args, "-U", p.UUID)
			}
			if p.Label != "" {
				args = append(args, "-L", p.Label)
			}
			if p.Tree != "" {
				args = append(args, "-d", p.Tree)
			}
			args = append(args, raw, fmt.Sprintf("%dM", p.SizeMiB))
			blocktest.Run(t, "mke2fs", args...)
		case "vfat":
			testenv.Tool(t, "mkfs.fat", "dosfstools")
			args := []string{"-F", "16", "-s", "1", "--offset", fmt.Sprint(start)}
			if p.UUID != "" {
				args = append(args, "-i", p.UUID)
			}
			args = append(args, raw, fmt.Sprint(p.SizeMiB*1024))
			blocktest.Run(t, "mkfs.fat", args...)
		case "":
		default:
			t.Fatalf("imagetest: unknown filesystem %q", p.FS)
		}
		start += p.SizeMiB * 2048
	}
	if !qcow2 {
		return raw
	}
	testenv.Tool(t, "qemu-img", "qemu-utils")
	q := filepath.Join(dir, name+".qcow2")
	blocktest.Run(t, "qemu-img", "convert", "-f", "raw", "-O", "qcow2", raw, q)
	os.Remove(raw)
	return q
}

// writeGPT writes a GPT to raw: one partition of each type and size
// (MiB), one after another from 1 MiB.
func writeGPT(t testing.TB, raw string, types []string, sizes []int) {
	t.Helper()
	var script strings.Builder
	script.WriteString("label: gpt\n")
	start := 2048
	for i := range types {
		fmt.Fprintf(&script, "start=%d, size=%d, type=%s\n", start, sizes[i]*2048, types[i])
		start += sizes[i] * 2048
	}
	blocktest.RunInput(t, script.String(), "sfdisk", "-q", raw)
}

// Tree writes files (path -> content) under a new directory; a path ending
// in "/" is a directory (testenv.WriteTree).
func Tree(t testing.TB, files map[string]string) string {
	t.Helper()
	return testenv.WriteTree(t, files)
}

// Hash is the SHA-256 of a file's bytes.
func Hash(t testing.TB, file string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Leftovers describes what sessions left on the host: mounts and FUSE
// exports under stateDir, loop devices whose lo_file_name starts with
// backing file is under stateDir or one of images, qemu-storage-daemon
// processes naming stateDir, and session directories. Empty means clean.
func Leftovers(stateDir string, images ...string) []string {
	var out []string
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			if len(f) > 4 && strings.HasPrefix(f[4], stateDir+"/") {
				out = append(out, "mount "+f[4])
			}
		}
	}
	ents, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, e := range ents {
		b, _ := os.ReadFile(e)
		bf := strings.TrimSpace(string(b))
		hit := strings.HasPrefix(bf, stateDir+"/")
		for _, im := range images {
			hit = hit || bf == im
		}
		if hit {
			dev := filepath.Base(filepath.Dir(filepath.Dir(e)))
			out = append(out, "loop "+dev+" on "+bf+" ("+loopTag("/dev/"+dev)+")")
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		if !strings.Contains(string(b), "qemu-storage-daemon") {
			continue
		}
		for _, a := range strings.Split(string(b), "\x00") {
			if i := strings.Index(a, stateDir+"/"); i >= 0 {
				out = append(out, "process "+filepath.Base(filepath.Dir(p))+": qemu-storage-daemon of "+a[i:])
				break
			}
		}
	}
	if ents, err := os.ReadDir(stateDir); err == nil {
		for _, e := range ents {
			out = append(out, "session directory "+filepath.Join(stateDir, e.Name()))
		}
	}
	return out
}

// loopTag is a loop device's lo_file_name, where sessions put their tag.
func loopTag(dev string) string {
	fd, err := unix.Open(dev, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err.Error()
	}
	defer unix.Close(fd)
	info, err := unix.IoctlLoopGetStatus64(fd)
	if err != nil {
		return err.Error()
	}
	return strings.TrimRight(string(info.File_name[:]), "\x00")
}

package imagetest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/blockid/blocktest"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// The hostile filesystem corpus: images whose partition table and
// superblock magic are sound, so that the host's Go probe takes them for
// what they claim to be, and whose filesystems are made by the real mkfs
// tools, then broken by writing bytes at known offsets of the filesystem
// (FSPart.Corrupt), the way a downloaded image can be broken on purpose.

// FSPart is one partition of a BuildFS image.
type FSPart struct {
	Type    string // GPT type
	FS      string // "ext4", "xfs", "btrfs" or "vfat"
	SizeMiB int
	// Tree is the directory copied in (mkfs.ext4 -d, an mkfs.xfs
	// protofile, mkfs.btrfs --rootdir, mcopy for vfat).
	Tree string
	// UUID is the filesystem UUID (ext4, xfs, btrfs) or the vfat serial
	// ("ABCD1234"); Label its label.
	UUID, Label string
	// Corrupt, if set, edits the filesystem (a file of just the
	// filesystem, offsets from its start) before it is put in the image.
	Corrupt func(t testing.TB, fsFile string)
}

// BuildFS writes a raw GPT image with parts to dir/name.raw and returns its
// path. Each filesystem is made in a file of its own with the real mkfs
// tool, corrupted if asked, and copied in at its partition's offset.
func BuildFS(t testing.TB, dir, name string, parts []FSPart) string {
	t.Helper()
	testenv.Tool(t, "sfdisk", "fdisk")
	total := 2
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
	off := int64(1 << 20)
	for i, p := range parts {
		fsFile := blocktest.Sparse(t, dir, fmt.Sprintf("%s.p%d.fs", name, i+1), int64(p.SizeMiB)<<20)
		MakeFS(t, fsFile, p)
		if p.Corrupt != nil {
			p.Corrupt(t, fsFile)
		}
		copySparse(t, fsFile, raw, off)
		os.Remove(fsFile)
		off += int64(p.SizeMiB) << 20
	}
	return raw
}

// MakeFS makes p's filesystem in the existing file fsFile, filled with
// p.Tree.
func MakeFS(t testing.TB, fsFile string, p FSPart) {
	t.Helper()
	switch p.FS {
	case "ext4":
		testenv.Tool(t, "mke2fs", "e2fsprogs")
		args := []string{"-q", "-F", "-t", "ext4"}
		if p.UUID != "" {
			args = append(args, "-U", p.UUID)
		}
		if p.Label != "" {
			args = append(args, "-L", p.Label)
		}
		if p.Tree != "" {
			args = append(args, "-d", p.Tree)
		}
		blocktest.Run(t, "mke2fs", append(args, fsFile)...)
	case "xfs":
		testenv.Tool(t, "mkfs.xfs", "xfsprogs")
		args := []string{"-q", "-f"}
		if p.UUID != "" {
			args = append(args, "-m", "uuid="+p.UUID)
		}
		if p.Label != "" {
			args = append(args, "-L", p.Label)
		}
		if p.Tree != "" {
			proto := fsFile + ".proto"
			if err := os.WriteFile(proto, []byte(xfsProto(t, p.Tree)), 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(proto)
			args = append(args, "-p", proto)
		}
		blocktest.Run(t, "mkfs.xfs", append(args, fsFile)...)
	case "btrfs":
		testenv.Tool(t, "mkfs.btrfs", "btrfs-progs")
		args := []string{"-q", "-f"}
		if p.UUID != "" {
			args = append(args, "-U", p.UUID)
		}
		if p.Label != "" {
			args = append(args, "-L", p.Label)
		}
		if p.Tree != "" {
			args = append(args, "--rootdir", p.Tree)
		}
		blocktest.Run(t, "mkfs.btrfs", append(args, fsFile)...)
	case "vfat":
		testenv.Tool(t, "mkfs.fat", "dosfstools")
		args := []string{"-F", "16", "-s", "1"}
		if p.UUID != "" {
			args = append(args, "-i", p.UUID)
		}
		if p.Label != "" {
			args = append(args, "-n", p.Label)
		}
		blocktest.Run(t, "mkfs.fat", append(args, fsFile)...)
		if p.Tree != "" {
			fatCopy(t, fsFile, p.Tree)
		}
	default:
		t.Fatalf("imagetest: unknown filesystem %q", p.FS)
	}
}

// xfsProto is an mkfs.xfs protofile (xfs_mkfs(8), -p) that copies tree:
// regular files, directories and symlinks, owned by root.
func xfsProto(t testing.TB, tree string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("/dev/null\n0 0\nd--755 0 0\n")
	var walk func(dir, indent string)
	walk = func(dir, indent string) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			if strings.ContainsAny(e.Name(), " \t\n") {
				t.Fatalf("imagetest: an mkfs.xfs protofile cannot name %q", p)
			}
			st, err := os.Lstat(p)
			if err != nil {
				t.Fatal(err)
			}
			perm := fmt.Sprintf("%03o", st.Mode().Perm())
			switch {
			case st.Mode()&os.ModeSymlink != 0:
				target, err := os.Readlink(p)
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&b, "%s%s l--777 0 0 %s\n", indent, e.Name(), target)
			case st.IsDir():
				fmt.Fprintf(&b, "%s%s d--%s 0 0\n", indent, e.Name(), perm)
				walk(p, indent+" ")
				fmt.Fprintf(&b, "%s$\n", indent+" ")
			case st.Mode().IsRegular():
				fmt.Fprintf(&b, "%s%s ---%s 0 0 %s\n", indent, e.Name(), perm, p)
			}
		}
	}
	walk(tree, " ")
	b.WriteString("$\n")
	return b.String()
}

// fatCopy copies tree into the FAT filesystem in fsFile with mtools.
func fatCopy(t testing.TB, fsFile, tree string) {
	t.Helper()
	testenv.Tool(t, "mcopy", "mtools")
	var dirs, files []string
	err := filepath.Walk(tree, func(p string, st os.FileInfo, err error) error {
		if err != nil || p == tree {
			return err
		}
		rel, _ := filepath.Rel(tree, p)
		if st.IsDir() {
			dirs = append(dirs, rel)
		} else if st.Mode().IsRegular() {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(dirs)
	mt := func(tool string, args ...string) {
		t.Helper()
		c := exec.Command(tool, append([]string{"-i", fsFile}, args...)...)
		c.Env = append(os.Environ(), "MTOOLS_SKIP_CHECK=1")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v: %s", tool, strings.Join(args, " "), err, out)
		}
	}
	for _, d := range dirs {
		mt("mmd", "::/"+filepath.ToSlash(d))
	}
	for _, f := range files {
		mt("mcopy", filepath.Join(tree, f), "::/"+filepath.ToSlash(f))
	}
}

// copySparse copies src into dst at off, leaving the zero MiBs unwritten
// (dst is sparse).
func copySparse(t testing.TB, src, dst string, off int64) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	buf := make([]byte, 1<<20)
	zero := make([]byte, 1<<20)
	for pos := int64(0); ; pos += int64(len(buf)) {
		n, err := io.ReadFull(in, buf)
		if n > 0 && !bytes.Equal(buf[:n], zero[:n]) {
			if _, werr := out.WriteAt(buf[:n], off+pos); werr != nil {
				t.Fatal(werr)
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// editAt reads n bytes of file at off, lets edit change them, and writes
// them back.
func editAt(t testing.TB, file string, off int64, n int, edit func([]byte)) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	edit(b)
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ExtSuperblock returns a Corrupt that edits the primary ext4
// superblock (1024 bytes at 1024) and then stores its metadata_csum
// checksum again, so that the kernel (and sealprep's probe, which checks
// it as blkid does) reads the edited fields rather than refusing a bad
// checksum. The backup superblocks are left as mkfs wrote them.
func ExtSuperblock(edit func(sb []byte)) func(testing.TB, string) {
	return func(t testing.TB, fsFile string) {
		t.Helper()
		editAt(t, fsFile, 1024, 1024, func(sb []byte) {
			if binary.LittleEndian.Uint16(sb[0x38:]) != 0xEF53 {
				t.Fatalf("%s: no ext4 superblock", fsFile)
			}
			edit(sb)
			if binary.LittleEndian.Uint32(sb[0x64:])&0x400 != 0 {
				binary.LittleEndian.PutUint32(sb[0x3FC:], ^crc32.Checksum(sb[:0x3FC], castagnoli))
			}
		})
	}
}

// ExtNeedsRecovery is a Corrupt that sets EXT4_FEATURE_INCOMPAT_RECOVER
// (0x4 in s_feature_incompat): the journal must be replayed before the
// filesystem is used. With garbageJournal the journal's superblock (the
// first block of inode 8) gets random bytes after its magic and block
// type, so the replay cannot even start.
func ExtNeedsRecovery(garbageJournal bool) func(testing.TB, string) {
	return func(t testing.TB, fsFile string) {
		t.Helper()
		ExtSuperblock(func(sb []byte) {
			binary.LittleEndian.PutUint32(sb[0x60:], binary.LittleEndian.Uint32(sb[0x60:])|0x4)
		})(t, fsFile)
		if !garbageJournal {
			return
		}
		testenv.Tool(t, "debugfs", "e2fsprogs")
		out, err := exec.Command("debugfs", "-R", "bmap <8> 0", fsFile).Output()
		if err != nil {
			t.Fatalf("debugfs bmap <8> 0: %v", err)
		}
		blk, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
		if err != nil || blk == 0 {
			t.Fatalf("debugfs bmap <8> 0: %q", out)
		}
		var bs int64
		editAt(t, fsFile, 1024, 1024, func(sb []byte) { bs = 1024 << binary.LittleEndian.Uint32(sb[0x18:]) })
		editAt(t, fsFile, blk*bs, 1024, func(j []byte) {
			if binary.BigEndian.Uint32(j) != 0xC03B3998 {
				t.Fatalf("%s: no journal superblock at block %d", fsFile, blk)
			}
			rand.New(rand.NewSource(3)).Read(j[12:])
		})
	}
}

// XFSGarbageLog is a Corrupt that fills the internal log (sb_logstart,
// sb_logblocks) with random bytes: the log looks dirty and no record in
// it is sound.
func XFSGarbageLog(t testing.TB, fsFile string) {
	t.Helper()
	var off, n int64
	editAt(t, fsFile, 0, 512, func(sb []byte) {
		be := binary.BigEndian
		if string(sb[:4]) != "XFSB" {
			t.Fatalf("%s: no XFS superblock", fsFile)
		}
		bs := int64(be.Uint32(sb[4:]))
		logstart := be.Uint64(sb[48:])
		agblocks, agblklog := int64(be.Uint32(sb[84:])), sb[124]
		agno, agbno := int64(logstart>>agblklog), int64(logstart&(1<<agblklog-1))
		off, n = (agno*agblocks+agbno)*bs, int64(be.Uint32(sb[96:]))*bs
	})
	if off == 0 || n == 0 {
		t.Fatalf("%s: no internal log", fsFile)
	}
	editAt(t, fsFile, off, int(n), func(b []byte) { rand.New(rand.NewSource(4)).Read(b) })
}

// BtrfsBadRoot is a Corrupt that points the superblock's root tree
// (root, at 0x50 of the superblock at 64 KiB) 1 MiB past the real one,
// where no tree block is, and stores the superblock's crc32c again: the
// magic and the checksum are sound, the tree root is not.
func BtrfsBadRoot(t testing.TB, fsFile string) {
	t.Helper()
	editAt(t, fsFile, 64<<10, 4096, func(sb []byte) {
		le := binary.LittleEndian
		if string(sb[0x40:0x48]) != "_BHRfS_M" || le.Uint16(sb[0xC4:]) != 0 {
			t.Fatalf("%s: no btrfs superblock with crc32c", fsFile)
		}
		le.PutUint64(sb[0x50:], le.Uint64(sb[0x50:])+1<<20)
		le.PutUint32(sb[0:], crc32.Checksum(sb[0x20:], castagnoli))
	})
}

// FATLoop returns a Corrupt that makes the FAT entry of the first cluster
// of each named file (paths in the filesystem, "/loader/random-seed")
// point to that cluster itself, in every FAT copy: the file's cluster
// chain loops. The filesystem must be FAT16 (BuildFS makes one).
func FATLoop(paths ...string) func(testing.TB, string) {
	return func(t testing.TB, fsFile string) {
		t.Helper()
		testenv.Tool(t, "mshowfat", "mtools")
		var fatStart, fatSize int64
		var nFATs int
		editAt(t, fsFile, 0, 512, func(bs []byte) {
			le := binary.LittleEndian
			if string(bs[0x36:0x3B]) != "FAT16" {
				t.Fatalf("%s: not FAT16", fsFile)
			}
			bps := int64(le.Uint16(bs[11:]))
			fatStart, nFATs, fatSize = int64(le.Uint16(bs[14:]))*bps, int(bs[16]), int64(le.Uint16(bs[22:]))*bps
		})
		first := regexp.MustCompile(`<(\d+)`)
		for _, p := range paths {
			c := exec.Command("mshowfat", "-i", fsFile, "::"+p)
			c.Env = append(os.Environ(), "MTOOLS_SKIP_CHECK=1")
			out, err := c.Output()
			m := first.FindSubmatch(out)
			if err != nil || m == nil {
				t.Fatalf("mshowfat %s: %v: %q", p, err, out)
			}
			cl, _ := strconv.ParseInt(string(m[1]), 10, 64)
			for i := 0; i < nFATs; i++ {
				editAt(t, fsFile, fatStart+int64(i)*fatSize+2*cl, 2, func(e []byte) {
					binary.LittleEndian.PutUint16(e, uint16(cl))
				})
			}
		}
	}
}

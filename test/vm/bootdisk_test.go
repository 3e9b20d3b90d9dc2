//go:build vmtest

package vm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A GPT disk that boots through its own bootloader, as a template from an
// image pipeline does: partition 1 an ESP (FAT32) holding GRUB for UEFI at
// the removable-media path EFI/BOOT/BOOTX64.EFI, partition 2 the root
// filesystem with the Discoverable Partitions root type. GRUB is Debian's
// (grub-efi-amd64-bin), made into one standalone EFI binary on the host by
// grub-mkstandalone with grub.cfg embedded: nothing runs inside the guest
// tree (no chroot, no grub-mkconfig, no loop device), and OVMF boots it
// without a boot entry (the removable path is its fallback).
const (
	sectorSize  = 512
	espStart    = 2048           // sectors: 1 MiB, the usual alignment
	espSectors  = 64 << 20 / 512 // a 64 MiB ESP, FAT32
	rootStart   = espStart + espSectors
	gptTail     = 1 << 20 // room for the backup GPT (33 sectors), aligned
	typeESPGUID = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"
	// The DPS root partition type for x86-64: sealprep --image finds the
	// root by it (internal/host/image), as systemd-gpt-auto-generator would.
	typeRootX86_64 = "4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709"
)

// ovmfCode is the UEFI firmware sealprep prove boots an image with only
// an ESP with (Debian's ovmf package).
const ovmfCode = "/usr/share/OVMF/OVMF_CODE_4M.fd"

// grubCfg is the configuration embedded in BOOTX64.EFI. The root is found
// by its label (the image's fstab mounts LABEL=rootfs), and the kernel and
// initrd through the /vmlinuz and /initrd.img links Debian's linux-image
// packages keep at the root. ro, as Debian boots: systemd-fsck-root and
// systemd-remount-fs then do what they do on a real machine.
const grubCfg = `set timeout=0
search --no-floppy --label rootfs --set=root
linux /vmlinuz root=LABEL=rootfs ro console=ttyS0 panic=-1
initrd /initrd.img
boot
`

// uefiGrub writes GRUB's standalone EFI binary for grubCfg to dir and
// returns its path.
func uefiGrub(ctx context.Context, dir string) (string, error) {
	cfg := filepath.Join(dir, "grub.cfg")
	if err := os.WriteFile(cfg, []byte(grubCfg), 0o644); err != nil {
		return "", err
	}
	efi := filepath.Join(dir, "BOOTX64.EFI")
	// Preloaded: what the embedded configuration needs before it can load
	// anything from the memdisk; the rest stays in the memdisk.
	_, err := run(ctx, "grub-mkstandalone", "-O", "x86_64-efi", "-o", efi,
		"--modules=part_gpt fat ext2 search search_label linux normal echo test",
		"--locales=", "--fonts=", "--themes=",
		"boot/grub/grub.cfg="+cfg)
	return efi, err
}

// espImage writes a FAT32 filesystem of espSectors holding efi at
// EFI/BOOT/BOOTX64.EFI (mtools: no mount).
func espImage(ctx context.Context, dir, efi string) (string, error) {
	esp := filepath.Join(dir, "esp.img")
	for _, c := range [][]string{
		{"truncate", "-s", fmt.Sprint(espSectors * sectorSize), esp},
		{"mkfs.vfat", "-F", "32", "-n", "ESP", esp},
		{"mmd", "-i", esp, "::/EFI", "::/EFI/BOOT"},
		{"mcopy", "-i", esp, efi, "::/EFI/BOOT/BOOTX64.EFI"},
	} {
		if _, err := run(ctx, c[0], c[1:]...); err != nil {
			return "", err
		}
	}
	return esp, nil
}

// gptDisk writes out, a raw GPT disk booting through GRUB for UEFI, whose
// root partition holds a copy of rootfs (a whole-disk ext4 image such as
// the unsealed template). The copy is sparse: only the filesystem's used
// blocks take space.
func gptDisk(ctx context.Context, t *testing.T, rootfs, out string) {
	t.Helper()
	start := time.Now()
	st, err := os.Stat(rootfs)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size()%sectorSize != 0 {
		t.Fatalf("%s: %d bytes, not whole sectors", rootfs, st.Size())
	}
	rootSectors := st.Size() / sectorSize
	dir := t.TempDir()
	efi, err := uefiGrub(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	esp, err := espImage(ctx, dir, efi)
	if err != nil {
		t.Fatal(err)
	}
	layout := fmt.Sprintf("label: gpt\nunit: sectors\nfirst-lba: %d\n"+
		"start=%d, size=%d, type=%s, name=\"esp\"\n"+
		"start=%d, size=%d, type=%s, name=\"root\"\n",
		espStart, espStart, espSectors, typeESPGUID, rootStart, rootSectors, typeRootX86_64)
	size := int64(rootStart)*sectorSize + st.Size() + gptTail
	os.Remove(out)
	if _, err := run(ctx, "truncate", "-s", fmt.Sprint(size), out); err != nil {
		t.Fatal(err)
	}
	if err := runStdin(ctx, layout, "sfdisk", "--quiet", out); err != nil {
		t.Fatalf("sfdisk %s: %v\nlayout:\n%s", out, err, layout)
	}
	const mib = 1 << 20
	for _, c := range [][]string{
		{"dd", "if=" + esp, "of=" + out, "bs=1M", fmt.Sprintf("seek=%d", espStart*sectorSize/mib), "conv=notrunc", "status=none"},
		{"dd", "if=" + rootfs, "of=" + out, "bs=1M", fmt.Sprintf("seek=%d", rootStart*sectorSize/mib), "conv=notrunc,sparse", "status=none"},
	} {
		if _, err := run(ctx, c[0], c[1:]...); err != nil {
			t.Fatal(err)
		}
	}
	pt, err := run(ctx, "sfdisk", "--dump", out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("GPT disk %s from %s in %s:\n%s", out, filepath.Base(rootfs), time.Since(start).Round(time.Millisecond), strings.TrimSpace(string(pt)))
}

// runStdin is run with stdin.
func runStdin(ctx context.Context, stdin, name string, args ...string) error {
	c := exec.CommandContext(ctx, name, args...)
	c.Stdin = strings.NewReader(stdin)
	out, err := c.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, tail(string(out), 30))
	}
	return nil
}

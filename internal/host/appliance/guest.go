package appliance

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The guest side: what sealprep does as the appliance's PID 1.

// IsInit says whether this process is the appliance's init: PID 1 run as
// /init, with the job the host put into the initramfs.
func IsInit() bool {
	if os.Getpid() != 1 || os.Args[0] != "/init" {
		return false
	}
	_, err := os.Stat("/" + JobFile)
	return err == nil
}

// Boot mounts what a process needs of the kernel: /proc, /sys, devtmpfs
// on /dev (the block devices and the port appear there) and tmpfs on
// /run and /tmp (sealprep's session directory).
func Boot() error {
	for _, m := range []struct{ src, dir, typ string }{
		{"proc", "/proc", "proc"}, {"sysfs", "/sys", "sysfs"}, {"devtmpfs", "/dev", "devtmpfs"},
		{"tmpfs", "/run", "tmpfs"}, {"tmpfs", "/tmp", "tmpfs"},
	} {
		os.MkdirAll(m.dir, 0o755)
		if err := unix.Mount(m.src, m.dir, m.typ, unix.MS_NOSUID, ""); err != nil && !errors.Is(err, unix.EBUSY) {
			return fmt.Errorf("mount %s: %w", m.dir, err)
		}
	}
	return nil
}

// Job reads the job the host packed.
func Job() ([]byte, error) { return os.ReadFile("/" + JobFile) }

// moduleInitCompressedFile is finit_module's MODULE_INIT_COMPRESSED_FILE:
// the kernel decompresses the module itself.
const moduleInitCompressedFile = 4

// LoadModules loads the initramfs's modules in the order listed.
func LoadModules() error {
	b, err := os.ReadFile("/" + ModuleList)
	if err != nil {
		return err
	}
	for _, name := range strings.Fields(string(b)) {
		f, err := os.Open(filepath.Join("/", ModuleDir, filepath.Base(name)))
		if err != nil {
			return err
		}
		flags := 0
		if !strings.HasSuffix(name, ".ko") {
			flags = moduleInitCompressedFile
		}
		err = unix.FinitModule(int(f.Fd()), "", flags)
		f.Close()
		// ENODEV: a driver for hardware this VM lacks (crc32c-intel
		// without SSE4.2 under TCG); the generic module serves instead.
		if err != nil && !errors.Is(err, unix.EEXIST) && !errors.Is(err, unix.ENODEV) {
			return fmt.Errorf("load module %s: %w", name, err)
		}
	}
	return nil
}

// WaitFor waits for path to appear (a device the kernel is probing).
func WaitFor(path string, d time.Duration) error {
	end := time.Now().Add(d)
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		if time.Now().After(end) {
			return fmt.Errorf("%s did not appear within %s", path, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// OpenPort opens the virtio-serial port named PortName: without udev,
// its name is in /sys/class/virtio-ports/vportNpM/name and its device
// /dev/vportNpM.
func OpenPort(d time.Duration) (*os.File, error) {
	end := time.Now().Add(d)
	for {
		ports, _ := filepath.Glob("/sys/class/virtio-ports/vport*")
		for _, p := range ports {
			name, err := os.ReadFile(filepath.Join(p, "name"))
			if err == nil && strings.TrimSpace(string(name)) == PortName {
				dev := filepath.Join("/dev", filepath.Base(p))
				if err := WaitFor(dev, time.Until(end)); err != nil {
					return nil, err
				}
				return os.OpenFile(dev, os.O_RDWR, 0)
			}
		}
		if time.Now().After(end) {
			return nil, fmt.Errorf("no virtio-serial port %s within %s", PortName, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Answer reads the host's answer to a confirm: true for "yes".
func Answer(port *os.File) (bool, error) {
	line, err := bufio.NewReader(port).ReadString('\n')
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(line) == "yes", nil
}

// PowerOff flushes and powers the appliance off; QEMU then exits. It
// does not return: PID 1 must never exit (the kernel would panic).
func PowerOff() {
	unix.Sync()
	unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	for {
		time.Sleep(time.Hour)
	}
}

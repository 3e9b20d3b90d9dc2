package fs

import (
	"bytes"
	"fmt"

	"golang.org/x/sys/unix"
)

// labelXattr is where SELinux keeps a file's label.
const labelXattr = "security.selinux"

// SetLabel sets the SELinux label of guest path p itself: a symlink is
// labelled, never followed. The host need not run SELinux: the label is
// an extended attribute the image's kernel reads at boot.
func (c *Confined) SetLabel(p, label string) error {
	fd, err := c.open(p, unix.O_PATH|unix.O_NOFOLLOW)
	if err != nil {
		return c.pathErr("label", p, err)
	}
	defer unix.Close(fd)
	// An O_PATH descriptor takes no fsetxattr; its /proc/self/fd link leads
	// to the very inode it holds, a symlink included.
	if err := unix.Setxattr(fmt.Sprintf("/proc/self/fd/%d", fd), labelXattr, append([]byte(label), 0), 0); err != nil {
		return c.pathErr("label", p, err)
	}
	return nil
}

// Label returns the SELinux label of guest path p itself, "" when it has
// none.
func (c *Confined) Label(p string) (string, error) {
	fd, err := c.open(p, unix.O_PATH|unix.O_NOFOLLOW)
	if err != nil {
		return "", c.pathErr("label", p, err)
	}
	defer unix.Close(fd)
	buf := make([]byte, 256)
	n, err := unix.Getxattr(fmt.Sprintf("/proc/self/fd/%d", fd), labelXattr, buf)
	if err == unix.ENODATA {
		return "", nil
	}
	if err != nil {
		return "", c.pathErr("label", p, err)
	}
	return string(bytes.TrimRight(buf[:n], "\x00")), nil
}

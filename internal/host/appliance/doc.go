// Package appliance is sealprep's sealing appliance: a short-lived QEMU
// VM in which sealprep's own plan and executor seal an image file, so
// that the image's filesystems, hostile input when the image was
// downloaded, are parsed by a throwaway kernel inside QEMU and never by
// the host's (guestfs-security(1): "You should never mount an untrusted
// guest filesystem directly on your host kernel").
//
// The host side (Run) finds a kernel (FindKernel, as supermin does),
// builds an initramfs in Go (the static sealprep binary as /init and the
// modules the image's filesystems need, cached by content), passes the
// vetted image layers, the kernel and the initramfs to QEMU as
// descriptors, starts it through vmm's jail, and reads the appliance's
// messages from a virtio-serial port as hostile input: bounded, every
// string cleaned of control characters, and a report that is missing,
// cut short or contradicted by how the appliance ended is an error.
//
// The guest side (Boot, LoadModules, OpenPort, PowerOff) is what
// sealprep does as the appliance's PID 1.
package appliance

// Package agent is qemu-guest-agent's presence on the guest, which the
// qemu-guest-agent and fs-freeze checks both judge: the installed binary,
// the running agents, the guest-agent virtio port and the platform (a
// QEMU/KVM guest, another hypervisor or none). It reads through fs.Root
// and writes nothing.
package agent

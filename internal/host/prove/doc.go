// Package prove boots throwaway clones of a template image under QEMU and
// proves that they come up healthy and distinct: each clone boots from a
// qcow2 overlay (the template is never written) with its own NoCloud seed,
// MAC and user network; its boot verdict comes from guestcheck's report
// through the guest agent, or from the serial console's summary line; its
// identity items (machine-id by hash, host keys, DHCP client identity,
// hostname, instance-id, MACs, addresses) are compared across clones and
// against the template with guestid.Collisions.
//
// It is host-side code: whatever a guest returns is hostile, read with
// bounded sizes and deadlines, schema-checked, and nothing is ever
// written into a guest.
package prove

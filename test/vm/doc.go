// Package vm is guestcheck's end-to-end harness: it builds a Debian 12
// image with the guestcheck package installed, boots guests under QEMU
// (TCG, user networking with restrict=on) with NoCloud seeds, and asserts on
// the reports guestcheck writes inside them, fetched through the QEMU guest
// agent. Clones of a template are booted by the product itself, sealprep
// prove, on templates the harness builds from the booted image (a GPT disk
// with GRUB for UEFI among them). The tests are behind the vmtest build tag, so that plain
// `go test ./...` never boots a VM; run them with `make vm-test` as root
// (docs/vm-tests.md).
package vm

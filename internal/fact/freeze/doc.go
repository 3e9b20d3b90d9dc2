// Package freeze holds the filesystem-freeze primitives behind the
// fs-freeze check: the order in which qemu-ga's guest-fsfreeze-freeze
// attempts the mounts, and the opt-in freeze-and-thaw test of
// --freeze-test, guarded by a watchdog process that thaws on its own. It
// imports no check code, so that check.Env can carry a Request.
package freeze

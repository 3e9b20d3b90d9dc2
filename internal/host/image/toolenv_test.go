package image

import "testing"

// Every bounded helper runs with one malloc arena: glibc's per-thread
// arenas each reserve 64-128 MiB of address space, and on a loaded host
// they took qemu-img past its 1 GiB limit (it aborted in
// qemu_thread_create).
func TestLimitedCommandOneArena(t *testing.T) {
	c, err := limitedCommand(QemuImgLimits, "qemu-img", []string{"info"}, nil)
	if err != nil {
		t.Skip(err)
	}
	// exec.Cmd keeps the last of a variable given twice.
	if len(c.Env) == 0 || c.Env[len(c.Env)-1] != "MALLOC_ARENA_MAX=1" {
		t.Errorf("the helper's environment does not end with MALLOC_ARENA_MAX=1: %q", c.Env)
	}
}

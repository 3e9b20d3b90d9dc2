// Package fstabcheck judges the fstab check: RunFstab reads /etc/fstab
// (parsed in internal/parse/fstab), the mount table and the block devices
// (internal/fact/blockdev, shared with disk-size) through runner.Env, and
// JudgeFstab decides from those facts alone. Guest files are read through
// fs.Root; nothing here writes to a guest file.
package fstabcheck

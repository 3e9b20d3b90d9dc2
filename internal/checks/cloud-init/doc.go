// Package cloudinit re-implements `cloud-init status` without running it:
// parsers for status.json, result.json and boot-finished (the /proc files
// involved are read by internal/parse/procfs, instance-data.json by
// internal/fact/instancedata), the boot status code logic, and a State computed the way cloud-init's cmd/status.py computes
// it, so that guestcheck agrees with cloud-init's own verdict while also
// catching what cloud-init misses (results left from an earlier boot, the
// two timestamp encodings, being run from inside cloud-init itself).
//
// The check gathers Facts (Read's Snapshot, systemd's answer for the
// units, who started this process) through runner.Env, then Judge, a pure
// function, turns them into findings. Reading goes through an fs.Root so
// that tests and --root images work the same way as the live system;
// nothing here starts a process.
package cloudinit

// Package fsfreeze judges the fs-freeze check: which filesystems qemu-ga
// would freeze (internal/parse/mountinfo, internal/fact/freeze) and
// whether an agent and its channel exist to do it, from the agent's
// presence the qemu-guest-agent check also judges (internal/fact/agent,
// read once per run). GatherFreeze reads the facts, JudgeFreeze decides
// from them alone; with --freeze-test it freezes and thaws for real.
package fsfreeze

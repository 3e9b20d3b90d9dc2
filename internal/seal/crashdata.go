package seal

import "context"

var opCrashData = Operation{
	ID:      "crash-data",
	Default: true,
	Summary: "remove crash dumps: /var/crash, /var/log/dump, /var/spool/abrt, /var/lib/systemd/coredump",
	Kept:    keptMany("crash dumps"),
	Doc: Doc{
		What: "removes the contents of `/var/crash`, `/var/log/dump`, `/var/spool/abrt`, " +
			"`/var/lib/systemd/coredump`",
		Why: "process memory images: keys and passwords",
	},
	Plan: planCrashData,
}

func planCrashData(ctx context.Context, p *Planner) ([]Action, error) {
	var out []Action
	for _, d := range []string{"/var/crash", "/var/log/dump", "/var/spool/abrt", "/var/lib/systemd/coredump"} {
		acts, err := p.removeChildren(d, nil, stateTree, "memory images of the template's processes: keys and passwords included")
		if err != nil {
			return nil, err
		}
		out = append(out, acts...)
	}
	return out, nil
}

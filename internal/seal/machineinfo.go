package seal

import "context"

var opMachineInfo = Operation{
	ID:      "machine-info",
	Summary: "remove /etc/machine-info (pretty hostname, location, deployment) (opt-in)",
	Doc: Doc{
		What: "removes `/etc/machine-info`",
		Why:  "may be intended admin metadata",
	},
	Plan: planMachineInfo,
}

func planMachineInfo(ctx context.Context, p *Planner) ([]Action, error) {
	return p.removePath("/etc/machine-info", regular, "describes the template machine (pretty name, location); systemd suggests removing it from images")
}

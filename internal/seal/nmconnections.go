package seal

import (
	"context"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

var opNMConnections = Operation{
	ID:      "nm-connections",
	Summary: "remove NetworkManager keyfiles (*.nmconnection); static configurations go too (opt-in)",
	Doc: Doc{
		What: "removes every `/etc/NetworkManager/system-connections/*.nmconnection`",
		Why:  "static configurations go too",
	},
	Plan: planNMConnections,
}

func planNMConnections(ctx context.Context, p *Planner) ([]Action, error) {
	return p.removeChildren(etcNMDir, func(e fs.Entry) bool {
		return strings.HasSuffix(e.Name, ".nmconnection")
	}, regular, "connection profiles made on the template: the clone's NICs get fresh automatic profiles")
}

package seal

import "context"

var opCloudInitInstallerPins = Operation{
	ID:      "cloud-init-installer-pins",
	Summary: "remove the installer's cloud-init pins (subiquity 99-installer.cfg, ds-identify.cfg, ...) (opt-in)",
	Doc: Doc{
		What: "removes subiquity/curtin pins: " +
			"`/etc/cloud/cloud.cfg.d/{99-installer.cfg,90-installer-network.cfg,subiquity-disable-cloudinit-networking.cfg,curtin-preserve-sources.cfg}`, " +
			"`/etc/cloud/ds-identify.cfg`",
		Why: "changes which datasource cloud-init uses",
	},
	Plan: planCloudInitInstallerPins,
}

func planCloudInitInstallerPins(ctx context.Context, p *Planner) ([]Action, error) {
	return p.removePaths([]string{
		"/etc/cloud/cloud.cfg.d/99-installer.cfg",
		"/etc/cloud/cloud.cfg.d/90-installer-network.cfg",
		"/etc/cloud/cloud.cfg.d/subiquity-disable-cloudinit-networking.cfg",
		"/etc/cloud/cloud.cfg.d/curtin-preserve-sources.cfg",
		"/etc/cloud/ds-identify.cfg",
	}, regular, "the installer pins cloud-init to datasource None and its own network: clones would ignore their cloud's metadata")
}

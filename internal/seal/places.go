package seal

import "github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"

// The catalogue's places the operations edit by name: the directories the
// template's own network configuration is in (where cloud-init renders
// too), the hostname files and udev's persistent-net rules.
var (
	macPins = catalogue.Lookup(catalogue.MACPins)
	// etcNetworkdDir and etcNMDir are the administrator's directories of
	// systemd-networkd units and NetworkManager keyfiles (the /run ones
	// are gone at reboot).
	etcNetworkdDir = macPins.DirPaths(catalogue.StackNetworkd)[1]
	etcNMDir       = macPins.DirPaths(catalogue.StackNM)[1]
	// nmDirs are NetworkManager's keyfile directories, /run and /etc.
	nmDirs = macPins.DirPaths(catalogue.StackNM)
	// ifcfgDirs are /etc/sysconfig/network-scripts (Red Hat) and
	// /etc/sysconfig/network (SUSE's ifcfg directory; on Red Hat the
	// file that holds HOSTNAME=).
	ifcfgDirs     = macPins.DirPaths(catalogue.StackIfcfg)
	hostnameFiles = catalogue.Lookup(catalogue.Hostname).Files()
	persistentNet = catalogue.Lookup(catalogue.UdevPersistentNet).Files()[0]
)

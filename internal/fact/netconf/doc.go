// Package netconf is the one reader of a guest's network configuration
// files: cloud-init's network-config.json, netplan, systemd-networkd
// (units, drop-ins and networkd.conf), NetworkManager keyfiles, ifupdown's
// interfaces(5) with its includes, ifcfg and udev's persistent-net rules.
//
// ReadFacts walks the directories once, through fs.Reader so that
// guestcheck and sealprep can share it, and parses each file with its
// parser under internal/parse. network-config (internal/checks/network-config)
// and network-identity (internal/checks/network-identity) each take what they judge from
// the Facts in their own order of precedence.
package netconf

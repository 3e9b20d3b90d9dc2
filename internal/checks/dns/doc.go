// Package dns judges the dns check: the resolver stack
// (resolv.conf, systemd-resolved, from internal/fact/netstate) and
// parallel probes of every nameserver for the names ProbeNames picks.
// RunDNS gathers through runner.Env; the judges are functions tested on
// values.
package dns

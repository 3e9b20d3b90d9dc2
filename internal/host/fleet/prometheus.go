package fleet

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/shared/report"
)

// WritePrometheus writes r in the Prometheus text exposition format, for
// node_exporter's textfile collector or --listen's /metrics. Everything
// is a gauge of the last survey; no sample has a timestamp (the textfile
// collector refuses them), the survey's time is a value instead. VMs are
// labelled domain, the name their source gives them, and in a merge of
// many hosts' surveys host too.
func WritePrometheus(w io.Writer, r Result) error {
	r = cleanResult(r)
	p := &promWriter{bw: bufio.NewWriter(w)}
	p.family("guestcheck_fleet_vm_status", "Whether the VM's verdict in the last survey is the one in the status label (1) or not (0); unknown means it could not be surveyed.")
	for _, vm := range r.VMs {
		for _, st := range Statuses {
			p.sample("guestcheck_fleet_vm_status", bit(vm.Status == st), "domain", vm.Name, "host", vm.Host, "status", string(st))
		}
	}
	p.family("guestcheck_fleet_vm_info", "The VM's source, guest agent version and, for a cluster, the host it runs on; the value is always 1.")
	for _, vm := range r.VMs {
		labels := []string{"domain", vm.Name, "source", vm.Source, "agent_version", vm.AgentVersion}
		if vm.Host != "" {
			labels = append(labels, "host", vm.Host)
		}
		p.sample("guestcheck_fleet_vm_info", "1", labels...)
	}
	p.family("guestcheck_fleet_vm_checks", "Number of the VM's checks per status in its guestcheck report.")
	for _, vm := range r.VMs {
		if vm.Report == nil {
			continue
		}
		s := vm.Report.Summary
		for _, c := range []struct {
			st string
			n  int
		}{{"pass", s.Pass}, {"skip", s.Skip}, {"warn", s.Warn}, {"error", s.Error}, {"fail", s.Fail}} {
			p.sample("guestcheck_fleet_vm_checks", strconv.Itoa(c.n), "domain", vm.Name, "host", vm.Host, "status", c.st)
		}
	}
	p.family("guestcheck_fleet_vm_shared_identity", "Whether the VM shares the identity item with another VM (1); only VMs that do are listed.")
	for _, vm := range r.VMs {
		for _, it := range vm.Shares {
			p.sample("guestcheck_fleet_vm_shared_identity", "1", "domain", vm.Name, "host", vm.Host, "item", string(it))
		}
	}
	p.family(IdentityMetric, "One of the VM's identity items as its guestcheck reports it (the labels of guestcheck_identity_info, and domain), for comparing VMs across hosts; the value is always 1.")
	for _, vm := range r.VMs {
		if vm.Report == nil || vm.Report.Identity == nil {
			continue
		}
		for _, l := range report.IdentityLabels(vm.Report.Identity, vm.Report.Host.BootID, vm.Networks) {
			p.sample(IdentityMetric, "1", append([]string{"domain", vm.Name}, l...)...)
		}
	}
	p.family("guestcheck_fleet_collisions", "Number of identity values (a machine-id, a host key, an address on one network, ...) that two or more VMs share, per item.")
	n := map[guestid.Item]int{}
	for _, c := range r.Collisions {
		n[c.Item]++
	}
	for _, it := range guestid.Items {
		p.sample("guestcheck_fleet_collisions", strconv.Itoa(n[it]), "item", string(it))
	}
	p.family("guestcheck_fleet_vms", "Number of VMs per verdict in the last survey.")
	s := r.Summary
	for _, c := range []struct {
		st Status
		n  int
	}{{Pass, s.Pass}, {Skip, s.Skip}, {Warn, s.Warn}, {Error, s.Error}, {Unknown, s.Unknown}, {Fail, s.Fail}} {
		p.sample("guestcheck_fleet_vms", strconv.Itoa(c.n), "status", string(c.st))
	}
	p.family("guestcheck_fleet_source_errors", "Number of VM sources (libvirt, Proxmox) that could not be listed in the last survey.")
	p.sample("guestcheck_fleet_source_errors", strconv.Itoa(len(r.SourceErrors)))
	p.family("guestcheck_fleet_vm_survey_duration_seconds", "How long surveying the VM took.")
	for _, vm := range r.VMs {
		p.sample("guestcheck_fleet_vm_survey_duration_seconds", seconds(vm.DurationMS), "domain", vm.Name, "host", vm.Host)
	}
	p.family("guestcheck_fleet_survey_duration_seconds", "How long the last survey took.")
	p.sample("guestcheck_fleet_survey_duration_seconds", seconds(r.DurationMS))
	p.family("guestcheck_fleet_last_survey_timestamp_seconds", "Unix time at which the last survey started.")
	p.sample("guestcheck_fleet_last_survey_timestamp_seconds", seconds(r.StartedAt.UnixMilli()))
	p.family("guestcheck_fleet_build_info", "The version of the guestcheck that surveyed; the value is always 1.")
	p.sample("guestcheck_fleet_build_info", "1", "version", r.Version)
	return p.bw.Flush()
}

// IdentityMetric is the name of the VMs' identity series.
const IdentityMetric = "guestcheck_fleet_vm_identity_info"

type promWriter struct{ bw *bufio.Writer }

func (p *promWriter) family(name, help string) {
	fmt.Fprintf(p.bw, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
}

func (p *promWriter) sample(name, value string, labels ...string) {
	p.bw.WriteString(name)
	if len(labels) > 0 {
		p.bw.WriteByte('{')
		sep := false
		for i := 0; i+1 < len(labels); i += 2 {
			if labels[i] == "host" && labels[i+1] == "" {
				continue // one host's survey: the scrape's instance is the host
			}
			if sep {
				p.bw.WriteByte(',')
			}
			sep = true
			fmt.Fprintf(p.bw, "%s=\"%s\"", labels[i], report.PromEscape(labels[i+1]))
		}
		p.bw.WriteByte('}')
	}
	fmt.Fprintf(p.bw, " %s\n", value)
}

func bit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func seconds(ms int64) string { return strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) }

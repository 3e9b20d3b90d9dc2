package main

import (
	"fmt"
	"strings"

	"github.com/guestcheck/guestcheck/internal/shared/cli"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// The --color choices.
var colorChoices = []string{"auto", "always", "never"}

// formatNames lists the report formats, for completion and messages.
func formatNames() []string {
	out := make([]string, len(report.Formats))
	for i, f := range report.Formats {
		out[i] = string(f)
	}
	return out
}

// checkIDs lists the registry's check IDs.
func checkIDs(all []runner.Check) []string {
	out := make([]string, len(all))
	for i, c := range all {
		out[i] = c.ID
	}
	return out
}

// command is guestcheck's whole command line, written once: the parser,
// --help, guestcheck(8) and the completions come from it.
func command(all []runner.Check) *cli.Command {
	ids := func() []string { return checkIDs(all) }
	c := (&cli.Command{
		Name:        "guestcheck",
		Summary:     "verify that a Linux VM was delivered as declared",
		ManSection:  8,
		Synopsis:    []string{"[OPTIONS]"},
		Description: `Verify that this VM was delivered correctly: cloud-init, hostname, routes, DNS, the guest agent, fstab, disk growth, clone identity, SSH, systemd and time sync (--list names every check). guestcheck only reads; each finding says what is wrong, why it matters and how to fix it.`,
		Options: []cli.Option{
			{Long: "only", Arg: "IDS", Help: "Run only these checks: comma-separated check IDs (see --list).", Complete: cli.CompleteWords, Words: ids, ListWords: true},
			{Long: "skip", Arg: "IDS", Help: "Do not run these checks.", Complete: cli.CompleteWords, Words: ids, ListWords: true},
			{Long: "list", Help: "List the checks (ID, title, what each verifies) and exit; with --format json, as JSON."},
			{Long: "root", Arg: "DIR", Help: "Read guest files under DIR (a mounted image); checks that need the running kernel, netlink or systemd report skip.", Complete: cli.CompleteDir},
			{Long: "format", Arg: "FMT", Help: "Report format: " + strings.Join(formatNames(), ", ") + " (default text). prometheus is a node_exporter textfile, nagios plugin output, junit XML for CI, tap TAP 13, jsonl one JSON object per finding.", Complete: cli.CompleteWords, Words: formatNames},
			{Long: "output", Arg: "[FMT:]FILE", Help: "Also write the report to FILE, atomically (a temporary file in the same directory, then rename), making missing directories. In FMT; without FMT:, in the format FILE's extension names (.txt text, .json json, .jsonl jsonl, .prom prometheus, .xml junit, .tap tap), else in --format's. FILE - is standard output, which then gets the report in FMT. Repeatable, one file each, so one run can leave a JSON, a text and a .prom report.", Repeat: true, Complete: cli.CompleteFormatFile, Words: formatNames},
			{Long: "exit-codes", Arg: "SCHEME", Help: "guestcheck (default): the exit codes below; nagios: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN, as monitoring plugins return them (independent of --format).", Complete: cli.CompleteWords, Words: func() []string { return []string{exitCodesGuestcheck, exitCodesNagios} }},
			{Long: "service-name", Arg: "NAME", Help: "nagios format: the status line's first word (default " + report.DefaultServiceName + ")."},
			{Long: "summary", Help: "Print only the one-line summary on stdout (for units and consoles; the full reports go to --output files). The line is always text: --format then only sets the format of --output files that name none, and is refused when there is no such file."},
			{Long: "config", Arg: "FILE", Help: "Configuration file; default " + config.DefaultPath + ", which may be absent.", Complete: cli.CompleteFile},
			{Long: "timeout", Arg: "DUR", Help: "Bound the whole run, such as 90s or 2m (default from the configuration, else 60s)."},
			{Long: "wait", Arg: "DUR", Help: "First wait up to DUR for cloud-init to finish; never waits when guestcheck itself runs inside cloud-init."},
			{Long: "exit-zero", Help: "Exit 0 even on warnings or failures (for cloud-init runcmd); a report --output could not write still exits 1."},
			{Long: "freeze-test", Arg: "MNT", Help: "Also freeze and thaw the filesystem mounted at MNT for real (root only; never /, guestcheck's own filesystem or --output's); a watchdog process always thaws it.", Complete: cli.CompleteDir},
			{Long: "color", Arg: "WHEN", Help: "Colour in the text report: auto (default: only on a terminal, never with NO_COLOR set or TERM=dumb), always or never.", Complete: cli.CompleteWords, Words: func() []string { return colorChoices }},
			{Long: "verbose", Short: 'v', Help: "text and nagios formats: also show passing findings (text: with their evidence)."},
			{Long: "version", Help: "Print the version, commit, build date, Go version and architecture, and exit; with --format json, as JSON."},
			{Long: "help", Short: 'h', Help: "Show this help."},
		},
		Commands: []*cli.Command{
			{Name: "probe", Summary: "answer an exec readiness probe in one line (KubeVirt readinessProbe.exec)",
				Synopsis: []string{"[--config FILE] [--timeout DUR]"},
				Description: `Run the checks listed under probe.checks in the configuration (default ` + strings.Join(config.DefaultProbeChecks, ",") + `) on the running system, with no network probe, no D-Bus call and no wait, and print one line on stdout. Exit 0 when ready and 1 when not, also on a usage or configuration error (any non-zero exit fails a probe; the line says why). A fail or an error is not ready, and so is cloud-init still running or not started yet; a warning is ready unless probe.warn_not_ready is set. The probe ends within probe.timeout (default ` + config.DefaultProbeTimeout.String() + `), counted from its start.

  guestcheck probe: READY 4 checks (cloud-init,hostname,fstab,disk-size) in 9 ms
  guestcheck probe: NOT READY failing: fstab (fstab: fail: ...)`,
				Options: []cli.Option{
					{Long: "config", Arg: "FILE", Help: "Configuration file; default " + config.DefaultPath + ".", Complete: cli.CompleteFile},
					{Long: "timeout", Arg: "DUR", Help: "Bound the probe (overrides probe.timeout)."},
					{Long: "help", Short: 'h', Help: "Show this help."},
				},
				Examples: []cli.Example{{Command: `readinessProbe: {exec: {command: ["/usr/bin/guestcheck", "probe"]}}`, Comment: "In a KubeVirt VirtualMachine (/usr/share/doc/guestcheck/probe.md)."}},
			},
			{Name: "explain", Summary: "say what a finding code means, why it matters and how to fix it",
				Synopsis: []string{"CODE"}, Args: "CODE", Options: []cli.Option{helpOption},
				Description: "Print the reference entry of one finding code: its check, status, meaning and fix, from guestcheck itself, and where its check's page is (installed under /usr/share/doc/guestcheck/checks/ by the packages; for a guestcheck built from source, the page in its source tree). A check ID prints the list of its codes."},
			checkConfigCommand(),
			fleetCommand(ids),
			drillCommand(),
			{Name: "help", Summary: "show the help of guestcheck or of one of its commands",
				Synopsis: []string{"[COMMAND]"}, Args: "COMMAND", Options: []cli.Option{helpOption}},
			{Name: "completion", Summary: "print the shell completion script for bash, zsh or fish",
				Synopsis: []string{"SHELL"}, Args: "SHELL", Options: []cli.Option{helpOption},
				Description: "The packages install these already; this is for a guestcheck installed by hand, e.g. guestcheck completion bash > /etc/bash_completion.d/guestcheck."},
		},
		Sections: []cli.Section{
			{Title: "Checks", Body: checksSection(all)},
			{Title: "Exit codes", Body: `0 nothing worse than pass or skip; 2 warnings and no failure; 1 any fail or error, or a report that --output could not write; 3 usage or configuration error. --exit-zero turns 1 and 2 from findings into 0, never a lost report.

With --exit-codes nagios instead: 2 any fail; 3 any error, or nothing but skips, or a usage error or unwritable --output; 1 warnings; 0 OK (help, --version and --list exit 3 too, as the plugin guidelines ask).`},
			{Title: "Files", Body: config.DefaultPath + ` is the configuration (guestcheck.yaml(5)). The boot unit guestcheck.service writes /run/guestcheck/report.json, report.txt and, when nothing failed, the probe sentinel /run/guestcheck/ready.`},
			{Title: "Environment", Body: `NO_COLOR turns colour off, as --color never does.`},
		},
		Examples: []cli.Example{
			{Command: "guestcheck", Comment: "Console check, text report."},
			{Command: "guestcheck --only cloud-init,hostname --format json"},
			{Command: "guestcheck --exit-zero --format json --output /run/guestcheck/report.json", Comment: "From cloud-init runcmd."},
			{Command: "guestcheck --summary --output json:/run/r.json --output text:/run/r.txt"},
			{Command: "guestcheck --root /mnt/image --skip cloud-init", Comment: "A mounted image."},
			{Command: "guestcheck --exit-zero --summary --output prometheus:/var/lib/prometheus/node-exporter/guestcheck.prom", Comment: "For node_exporter's textfile collector."},
			{Command: "guestcheck --format nagios --exit-codes nagios", Comment: "From NRPE or Icinga."},
			{Command: "guestcheck --format junit > guestcheck.xml", Comment: "CI, Packer."},
			{Command: "guestcheck explain hostname-etc-missing", Comment: "What a finding code means and how to fix it."},
		},
	}).Link()
	c.Sub("help").ArgWords = c.SubNames
	c.Sub("completion").ArgWords = func() []string { return cli.Shells }
	c.Sub("explain").ArgWords = func() []string { return append(ids(), codeNames(all)...) }
	return c
}

// checksSection is the man page's list of the checks, a paragraph each.
func checksSection(all []runner.Check) string {
	var b strings.Builder
	for _, c := range all {
		fmt.Fprintf(&b, "%s (%s): %s. guestcheck explain %s lists its codes", c.ID, c.Title, c.Description, c.ID)
		for i, sec := range c.Sections() {
			if i == 0 {
				b.WriteString("; its settings: ")
			} else {
				b.WriteString(", ")
			}
			b.WriteString(sec + ".* in guestcheck.yaml(5)")
		}
		b.WriteString(".\n\n")
	}
	return strings.TrimSuffix(b.String(), "\n\n")
}

// codeNames lists every finding code of the checks, and the runner's own
// codes, for completion.
func codeNames(all []runner.Check) []string {
	var out []string
	for _, c := range all {
		out = append(out, runner.IDs(c.Codes)...)
	}
	return append(out, runner.IDs(runner.Codes)...)
}

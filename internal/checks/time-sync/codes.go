package timesync

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// why is what every clock fix ends on: what depends on the clock.
const why = "TLS certificate checks, Kerberos (5 minutes of skew), log correlation and snapshot schedules depend on the clock."

// driftWhy ends the fixes for a guest without a time daemon.
const driftWhy = " Without one the clock drifts from the moment the VM starts, and " + why

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (
	// Where the check applies
	CodeNotLive = runner.Code{ID: "time-sync-not-live", Group: "Where the check applies", Status: "skip",
		Meaning: "Under `--root IMAGE` the kernel clock and the units are not checked."}

	// The clock
	CodeSynced = runner.Code{ID: "time-sync-clock-synced", Group: "The clock", Status: "pass",
		Meaning: "The kernel clock is synchronised and within `max_offset`. Detail `kernel_state`, `max_error`, `estimated_error`, `offset`, `sta_unsync`, `max_offset`."}
	CodeUnsynced = runner.Code{ID: "time-sync-clock-unsynced", Group: "The clock", Status: "warn",
		Meaning: "Maximum error 16 s or more: `NTPSynchronized=no`.",
		Fix:     "Make the time daemon reach its servers: see what it reaches with `chronyc sources`, `timedatectl timesync-status` or `ntpq -p`. " + why}
	CodeClockOff = runner.Code{ID: "time-sync-clock-off", Group: "The clock", Status: "fail",
		Meaning: "Offset plus estimated error exceed `time_sync.max_offset`.",
		Fix: "Let the time daemon step the clock (`chronyc makestep`, or `systemctl restart systemd-timesyncd`) and find why it drifted: a paused or restored VM, an unreachable server. " +
			why}
	CodeClockUnreadable = runner.Code{ID: "time-sync-clock-unreadable", Group: "The clock", Status: "error",
		Meaning: "`adjtimex` failed. Detail `error`.",
		Fix:     "Run guestcheck on the guest itself, not in a container or a sandbox that filters system calls: adjtimex(2) with modes 0 needs no privilege."}

	// The time daemon
	CodeDaemonActive = runner.Code{ID: "time-sync-daemon-active", Group: "The time daemon", Status: "pass",
		Meaning: "A time daemon runs (or, under `--root`, is enabled). Detail: each daemon's unit state."}
	CodeDaemonDisabled = runner.Code{ID: "time-sync-daemon-disabled", Group: "The time daemon", Status: "warn",
		Meaning: "The daemon runs but is not enabled: it will not start at the next boot.",
		Fix:     "Enable {unit} so that it starts at every boot: `systemctl enable {unit}` (or `timedatectl set-ntp true`)."}
	CodeNoDaemon = runner.Code{ID: "time-sync-no-daemon", Group: "The time daemon", Status: "fail",
		Meaning: "No time daemon runs (or is enabled in the image); the message names masked ones.",
		Fix: "Install and enable one time daemon (`apt install systemd-timesyncd` or `apt install chrony`, `dnf install chrony`), then run `timedatectl set-ntp true`." +
			driftWhy,
		RootFix: "Install a time daemon in the image's build (the systemd-timesyncd or chrony package enables its unit), " +
			"or enable an installed one with its link in /etc/systemd/system/*.wants/ of the image." + driftWhy,
		Cases: []runner.Case{
			{When: "when one is masked", Fix: "Unmask {unit} with `systemctl unmask {unit}`, then start it with `systemctl enable --now {unit}`." + driftWhy},
			{When: "when one is masked in the image", Fix: "Remove {unit}'s link to /dev/null in /etc/systemd/system/ of the image, " +
				"then enable it with its link in /etc/systemd/system/*.wants/ of the image." + driftWhy},
		}}
	CodeMultiple = runner.Code{ID: "time-sync-multiple-daemons", Group: "The time daemon", Status: "warn",
		Meaning: "More than one time daemon runs.",
		Fix: "Keep {keep} and stop the others with `systemctl disable --now {others}`: " +
			"time daemons fight over the clock (chrony and timesyncd conflict in their units, ntpd does not).",
		RootFix: "Keep {keep} and remove the links of {others} in /etc/systemd/system/*.wants/ of the image, or their packages from its build: " +
			"time daemons fight over the clock (chrony and timesyncd conflict in their units, ntpd does not)."}
	CodeNoSystemd = runner.Code{ID: "time-sync-no-systemd", Group: "The time daemon", Status: "skip",
		Meaning: "systemd is not running, so the daemons' state is unknown."}
	CodeUnitsUnreadable = runner.Code{ID: "time-sync-units-unreadable", Group: "The time daemon", Status: "error",
		Meaning: "The units could not be read over D-Bus. Detail `error`.",
		Fix:     "Check that systemd answers on D-Bus (`systemctl status chrony systemd-timesyncd ntp` must show the units), then run guestcheck again."}

	// Its time sources
	CodeServersOK = runner.Code{ID: "time-sync-servers-ok", Group: "Its time sources", Status: "pass",
		Meaning: "The running daemon has time sources, or timesyncd uses its compiled-in fallback. Detail `daemon`, `servers` (kind, host, file:line), `files`."}
	CodeNoServers = runner.Code{ID: "time-sync-no-servers", Group: "Its time sources", Status: "warn",
		Meaning: "The running daemon has no time source configured.",
		Fix: "Add `pool 2.pool.ntp.org iburst` (or your site's servers) to /etc/chrony/chrony.conf (/etc/chrony.conf on RHEL), " +
			"or `refclock PHC /dev/ptp0` with the ptp_kvm module on KVM, and restart chrony (`systemctl restart {unit}`).",
		RootFix: "Add `pool 2.pool.ntp.org iburst` (or your site's servers) to /etc/chrony/chrony.conf (/etc/chrony.conf on RHEL) in the image, " +
			"or `refclock PHC /dev/ptp0` with the ptp_kvm module on KVM.",
		Cases: []runner.Case{
			{When: "for systemd-timesyncd", Fix: "Set `NTP=` under [Time] in a file /etc/systemd/timesyncd.conf.d/*.conf (an empty `FallbackNTP=` removed the built-in servers), " +
				"and restart it (`systemctl restart systemd-timesyncd`)."},
			{When: "for systemd-timesyncd in an image", Fix: "Set `NTP=` under [Time] in a file /etc/systemd/timesyncd.conf.d/*.conf in the image " +
				"(an empty `FallbackNTP=` removed the built-in servers)."},
			{When: "for ntpd", Fix: "Add `pool 2.pool.ntp.org iburst` (or your site's servers) to /etc/ntp.conf (/etc/ntpsec/ntp.conf for ntpsec), " +
				"and restart ntpd (`systemctl restart {unit}`)."},
			{When: "for ntpd in an image", Fix: "Add `pool 2.pool.ntp.org iburst` (or your site's servers) to /etc/ntp.conf (/etc/ntpsec/ntp.conf for ntpsec) in the image."},
		}}
	CodeConfigInvalid = runner.Code{ID: "time-sync-config-invalid", Group: "Its time sources", Status: "warn",
		Meaning: "A configuration line cannot be read (a `server` without a host, binary content, a timesyncd line that is not key=value); the message names `FILE:LINE`. Detail `problems`.",
		Fix:     "Correct or remove the lines of {daemon}'s configuration that it cannot read, starting with {problem}: {daemon} ignores or rejects them (the detail named `problems` lists them all)."}
)

// Codes lists every code Run can emit, in the order of the check's
// reference page.
var Codes = []runner.Code{
	CodeNotLive,
	CodeSynced, CodeUnsynced, CodeClockOff, CodeClockUnreadable,
	CodeDaemonActive, CodeDaemonDisabled, CodeNoDaemon, CodeMultiple, CodeNoSystemd, CodeUnitsUnreadable,
	CodeServersOK, CodeNoServers, CodeConfigInvalid,
}

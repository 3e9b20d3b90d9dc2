package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/qga"
	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// step is where a VM's survey is, so that a failure says where.
type step struct {
	parent, ctx context.Context
	name        string
	vmTimeout   time.Duration
	path        string
}

// reason words err at this step as one line for the operator.
func (s *step) reason(err error) string {
	var qe *qga.Error
	var de *libvirtDialError
	var ns *notSocketError
	switch {
	case s.parent.Err() != nil:
		return surveyEnded(s.parent) + " during " + s.name
	case errors.Is(err, context.DeadlineExceeded) || s.ctx.Err() != nil:
		return s.timeout()
	case errors.As(err, &qe):
		return s.agentError(qe)
	case errors.As(err, &de):
		return OneLine(de.Error(), 300)
	case errors.As(err, &ns):
		return ns.Error()
	case errors.Is(err, ErrAgentNotConnected):
		return reasonNotConnected + " (libvirt: no agent has opened the channel; qemu-ga is not running in the guest, or the guest is still booting)"
	case errors.Is(err, qga.ErrTooLarge):
		return fmt.Sprintf("guestcheck's output is larger than the bound (%s): not read", OneLine(err.Error(), 120))
	case isDisconnect(err):
		if s.name == "connect" {
			return "the guest agent socket closed the connection (no agent on it, or QEMU is stopping)"
		}
		return "the guest agent connection dropped during " + s.name + " (the VM stopped or qemu-ga restarted)"
	case s.name == "connect":
		return "guest agent not connected: " + dialError(err)
	}
	return OneLine(s.name+": "+strings.TrimPrefix(err.Error(), "qga: "), 300)
}

// surveyEnded says why the whole survey stopped: its deadline, or an
// interrupt (SIGINT, SIGTERM).
func surveyEnded(ctx context.Context) string {
	if errors.Is(ctx.Err(), context.Canceled) {
		return "the survey was interrupted"
	}
	return "the survey's deadline (--timeout) came"
}

// timeout words a deadline by step: at connect and guest-ping the agent
// is not answering at all.
func (s *step) timeout() string {
	switch s.name {
	case "connect", "guest-ping":
		return fmt.Sprintf("guest agent not responding within %s (qemu-ga not running in the guest, or the guest is hung)", min(connectTimeout, s.vmTimeout))
	case "guest-exec":
		return fmt.Sprintf("timed out after %s (--vm-timeout) waiting for guestcheck to finish in the guest", s.vmTimeout)
	}
	return fmt.Sprintf("timed out after %s (--vm-timeout) at %s", s.vmTimeout, s.name)
}

// agentError words the agent's own error reply.
func (s *step) agentError(qe *qga.Error) string {
	desc := OneLine(qe.Desc, 200)
	low := strings.ToLower(qe.Desc)
	switch {
	case qe.Class == "CommandDisabled" || strings.Contains(low, "has been disabled"):
		return s.name + " is disabled in the guest agent (its RPC filter, --allow-rpcs or --block-rpcs; RHEL 9.4 and later block it by default): allow guest-exec and guest-exec-status in qemu-ga's configuration"
	case qe.Class == "CommandNotFound":
		return "the guest agent has no " + s.name + ": " + desc
	case s.name == "guest-exec" && strings.Contains(low, "no such file"):
		return notInstalled(s.path)
	case s.name == "guest-exec" && (strings.Contains(low, "permission denied") || strings.Contains(low, "operation not permitted")):
		return permissionDenied(s.path)
	}
	return s.name + ": the guest agent says: " + desc
}

func notInstalled(path string) string {
	return "guestcheck is not installed in the guest (" + path + ": no such file): install the guestcheck package, or name its path with --guestcheck-path"
}

func permissionDenied(path string) string {
	return "permission denied running " + path + " in the guest: its mode, or an SELinux policy confining qemu-ga (virt_qemu_ga_t; see ausearch -m AVC in the guest, and the boolean virt_qemu_ga_run_unconfined)"
}

// dialError words a failed connection without Go's wrapping.
func dialError(err error) string {
	var oe *net.OpError
	switch {
	case errors.Is(err, syscall.ENOENT):
		return "no such socket (the VM is not running, or has no guest agent channel)"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused (the VM is not running)"
	case errors.Is(err, syscall.EACCES):
		return "permission denied on the socket (run as root, or in the libvirt group)"
	case errors.As(err, &oe) && oe.Err != nil:
		return OneLine(oe.Err.Error(), 200)
	}
	return OneLine(strings.TrimPrefix(err.Error(), "qga: "), 200)
}

// isDisconnect reports whether err is the connection going away.
func isDisconnect(err error) bool {
	for _, e := range []error{io.EOF, io.ErrUnexpectedEOF, syscall.ECONNRESET, syscall.EPIPE, net.ErrClosed} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// interpret turns guestcheck's finished run into its decoded report, or
// says why there is none.
func interpret(out qga.ExecResult, o Options) (*GuestReport, string) {
	switch {
	case out.Truncated:
		return nil, "the guest agent cut guestcheck's output at its own limit: not read"
	case out.Signal != 0:
		return nil, fmt.Sprintf("guestcheck was killed by signal %d in the guest", out.Signal)
	case out.Exit == 127:
		return nil, notInstalled(o.GuestcheckPath)
	case out.Exit == 126 || denied(out.Stderr):
		return nil, permissionDenied(o.GuestcheckPath)
	case out.Exit != 0:
		// --exit-zero makes findings exit 0: this is guestcheck refusing
		// its command line or failing itself.
		return nil, fmt.Sprintf("guestcheck exited %d in the guest: %s", out.Exit, firstLine(out.Stderr))
	}
	return decodeReport(out.Stdout)
}

// denied spots an exec or SELinux denial in stderr.
func denied(stderr []byte) bool {
	low := bytes.ToLower(stderr)
	return bytes.Contains(low, []byte("avc:")) || bytes.Contains(low, []byte("permission denied")) && len(bytes.TrimSpace(stderr)) < 400
}

func firstLine(b []byte) string {
	b = bytes.TrimSpace(b)
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	if len(b) == 0 {
		return "nothing on stderr"
	}
	return OneLine(string(b[:min(len(b), 1000)]), 200)
}

// decodeReport decodes and schema-checks a guestcheck JSON report
// (reportv1.Decode, the one reader of reports).
func decodeReport(b []byte) (*GuestReport, string) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, "guestcheck wrote nothing on stdout"
	}
	r, err := reportv1.Decode(b)
	var ve *reportv1.VersionError
	switch {
	case errors.As(err, &ve):
		return nil, fmt.Sprintf("guestcheck in the guest writes report schema_version %d and this one reads %d: install the same guestcheck on the host and in the guests", ve.Got, reportv1.SchemaVersion)
	case err != nil:
		return nil, "guestcheck's output: " + err.Error()
	}
	if r.Identity != nil {
		// A guestcheck from before instance_id_hash reports a UUID
		// instance-id as it is: the survey keeps only its hash.
		guestid.HideUUIDInstanceID(r.Identity)
	}
	return &r, ""
}

// worstCheck names the report's worst check and its summary, when it is
// worse than a pass.
func worstCheck(r *GuestReport) string {
	w := report.WorstFirst(*r)
	if len(w) == 0 || w[0].Status == runner.Pass || w[0].Status == runner.Skip {
		return ""
	}
	return OneLine(w[0].ID+": "+w[0].Summary, 200)
}

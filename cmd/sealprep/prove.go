package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/guestcheck/guestcheck/internal/host/prove"
	"github.com/guestcheck/guestcheck/internal/shared/buildinfo"
	"github.com/guestcheck/guestcheck/internal/shared/cli"
)

// maxSeedFile bounds --user-data and --network-config.
const maxSeedFile = 1 << 20

// proveConfig reads prove's options into a prove.Config.
func proveConfig(v *cli.Values) (prove.Config, string, map[string]string, error) {
	c := prove.Config{
		Image: v.String("image", ""), Firmware: v.String("firmware", prove.FirmwareAuto),
		Kernel: v.String("kernel", ""), Initrd: v.String("initrd", ""), Append: v.String("append", ""),
		Accel: v.String("accel", prove.AccelAuto), FirmwareUUID: v.String("firmware-uuid", prove.UUIDPerClone), Keep: v.String("keep", ""), Version: buildinfo.Version,
		AllowBacking: v.All("allow-backing"), Reboot: v.Has("reboot"), Copies: v.All("copy"),
	}
	// With --copy, one clone is the copies' source unless --clones says.
	clones := 2
	if len(c.Copies) > 0 {
		clones = 1
	}
	if err := absPaths("--allow-backing", c.AllowBacking); err != nil {
		return c, "", nil, err
	}
	format := v.String("format", "text")
	extra := map[string]string{"junit": v.String("junit", ""), "json": v.String("json", "")}
	if err := cli.OneOf("--format", "format", format, []string{"text", "json", "junit"}); err != nil {
		return c, "", nil, err
	}
	for _, n := range []struct {
		flag string
		dst  *int
		def  int
	}{{"clones", &c.Clones, clones}, {"memory", &c.MemoryMiB, 1024}, {"cpus", &c.CPUs, 2}} {
		s := v.String(n.flag, strconv.Itoa(n.def))
		x, err := strconv.Atoi(s)
		if err != nil {
			return c, "", nil, cli.Usagef("--%s %q: not a whole number", n.flag, s)
		}
		*n.dst = x
	}
	c.Timeout = prove.DefaultTimeout
	if v.Has("timeout") {
		d, err := v.Duration("timeout")
		if err != nil {
			return c, "", nil, err
		}
		c.Timeout = d
	}
	if v.Has("boot-budget") {
		d, err := v.Duration("boot-budget")
		if err != nil {
			return c, "", nil, err
		}
		c.BootBudget = d
	}
	for _, f := range []struct {
		flag string
		dst  *[]byte
	}{{"user-data", &c.UserData}, {"network-config", &c.NetworkConfig}} {
		if p := v.String(f.flag, ""); p != "" {
			b, err := readBounded(p, maxSeedFile)
			if err != nil {
				return c, "", nil, cli.Usagef("--%s %s: %v", f.flag, p, err)
			}
			*f.dst = b
		}
	}
	if err := c.Validate(); err != nil {
		return c, "", nil, cli.Usagef("%v", err)
	}
	return c, format, extra, nil
}

func readBounded(p string, limit int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errors.New("no such file")
		}
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = fmt.Errorf("larger than %d bytes", limit)
	}
	return b, err
}

// runProve is `sealprep prove`: SIGINT and SIGTERM cancel the run, and
// every QEMU is stopped before the report is written.
func runProve(v *cli.Values, stdout, stderr io.Writer, e env) int {
	cfg, format, extra, err := proveConfig(v)
	if err != nil {
		fmt.Fprintf(stderr, "sealprep prove: %v\n", err)
		return prove.ExitRefused
	}
	base := e.ctx
	if base == nil {
		base = context.Background()
	}
	ctx, stop := signal.NotifyContext(base, os.Interrupt, syscall.SIGTERM)
	defer stop()
	var tmpl prove.TemplateReader
	if os.Geteuid() == 0 {
		tmpl = prove.OfflineTemplate(e.imageStateDir)
	}
	if e.proveSetup != nil {
		tmpl = e.proveSetup(&cfg)
	}
	cfg.Progress = proveProgress(stderr, e)
	rep, err := prove.Run(ctx, cfg, tmpl)
	if err != nil {
		fmt.Fprintf(stderr, "sealprep prove: %v\n", err)
		return prove.ExitRefused
	}
	for _, f := range []struct {
		flag  string
		write func(io.Writer, prove.Report) error
	}{{"junit", prove.WriteJUnit}, {"json", prove.WriteJSON}} {
		if p := extra[f.flag]; p != "" {
			var b bytes.Buffer
			f.write(&b, rep)
			if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
				fmt.Fprintf(stderr, "sealprep prove: --%s %s: %v\n", f.flag, p, err)
				return prove.ExitFailed
			}
		}
	}
	switch format {
	case "json":
		err = prove.WriteJSON(stdout, rep)
	case "junit":
		err = prove.WriteJUnit(stdout, rep)
	default:
		err = prove.WriteText(stdout, rep)
	}
	if err != nil {
		fmt.Fprintf(stderr, "sealprep prove: write report: %v\n", err)
		return prove.ExitFailed
	}
	return prove.ExitCode(rep)
}

// proveProgress rewrites one status line on a terminal and writes a line
// per phase anywhere else.
func proveProgress(stderr io.Writer, e env) prove.Progress {
	if e.termWidth != nil {
		if w := e.termWidth(stderr); w > 0 {
			return &termProgress{w: stderr, width: w, phase: map[string]string{}}
		}
	}
	return prove.LineProgress{W: stderr}
}

// termProgress is the terminal's status line: every clone's phase.
type termProgress struct {
	mu    sync.Mutex
	w     io.Writer
	width int
	names []string
	phase map[string]string
}

func (p *termProgress) Phase(clone, phase string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.phase[clone]; !ok {
		p.names = append(p.names, clone)
	}
	p.phase[clone] = phase
	var parts []string
	for _, n := range p.names {
		parts = append(parts, n+": "+p.phase[n])
	}
	line := "prove: " + strings.Join(parts, " | ")
	if r := []rune(line); len(r) > p.width-1 {
		line = string(r[:p.width-1])
	}
	fmt.Fprintf(p.w, "\r%s\x1b[K", line)
}

func (p *termProgress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.names) > 0 {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

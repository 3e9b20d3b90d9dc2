package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/host/image"
	"github.com/guestcheck/guestcheck/internal/seal"
	"github.com/guestcheck/guestcheck/internal/shared/buildinfo"
)

// runImage is run for --image: through the sealing appliance
// (runAppliance), or, with --trust-image-filesystems, on this host's
// kernel (runImageHost).
func runImage(o *options, ops []seal.Operation, stdin io.Reader, stdout, stderr io.Writer, e env) int {
	ctx, signalled, stop := imageSignals(e)
	defer stop()
	if !o.trustFS {
		return runAppliance(ctx, signalled, o, ops, stdin, stdout, stderr, e)
	}
	return runImageHost(ctx, signalled, o, ops, stdin, stdout, stderr, e)
}

// imageSignals makes SIGINT, SIGTERM and SIGHUP only cancel the context,
// so that the teardown always runs; signalled says which one came.
func imageSignals(e env) (context.Context, func() os.Signal, func()) {
	base := e.ctx
	if base == nil {
		base = context.Background()
	}
	ctx, cancel := context.WithCancel(base)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	var caught os.Signal
	done := make(chan struct{})
	caughtCh := make(chan os.Signal, 1)
	go func() {
		select {
		case s := <-sigs:
			caughtCh <- s
			cancel()
		case <-done:
		}
	}()
	signalled := func() os.Signal {
		if caught == nil {
			select {
			case caught = <-caughtCh:
			default:
			}
		}
		return caught
	}
	return ctx, signalled, func() { signal.Stop(sigs); close(done); cancel() }
}

// imageOpenFailed reports why the image could not be opened: a refusal
// (its header, its use, the appliance it needs) as a report with the
// run's other refusals, anything else as one line.
func imageOpenFailed(o *options, ops []seal.Operation, stdin io.Reader, stdout, stderr io.Writer, e env, start time.Time, signalled func() os.Signal, err error) int {
	if s := signalled(); s != nil {
		fmt.Fprintf(stderr, "sealprep: --image: interrupted by %v while attaching; nothing is left attached\n", s)
		return seal.ExitProblem
	}
	var ref *image.Refusal
	if errors.As(err, &ref) {
		// The header names the image; the refusal says what is wrong
		// with it, without naming it a second time.
		file, _ := filepath.Abs(o.image)
		meta := seal.Meta{Tool: "sealprep", Version: buildinfo.Version, Command: o.cmd, Root: o.image,
			MachineIDMode: seal.MachineIDMode(o.mode), Operations: ops, StartedAt: start, Duration: time.Since(start),
			Image: &seal.ImageInfo{File: file, Mounts: []seal.ImageMount{}}}
		refs := append([]seal.Refusal{{Op: seal.OpImage, Message: ref.Reason}}, unconfirmable(o, e, stdin)...)
		rep := seal.RefusedReport(meta, seal.Plan{}, refs, nil)
		return finish(o, e, rep, stdout, stderr)
	}
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stderr, "sealprep: --image %s: no such file\n", o.image)
		return seal.ExitUsage
	}
	fmt.Fprintf(stderr, "sealprep: --image %s: %v\n", o.image, err)
	return seal.ExitProblem
}

// runImageHost attaches and mounts the image on this host's kernel, seals
// its root as --root would, then unmounts and detaches. A SIGKILL's
// leftovers are taken down by the next --trust-image-filesystems run.
func runImageHost(ctx context.Context, signalled func() os.Signal, o *options, ops []seal.Operation, stdin io.Reader, stdout, stderr io.Writer, e env) int {
	start := time.Now()
	sess, err := image.Open(ctx, o.image, image.Options{ReadOnly: o.cmd != "apply", StateDir: e.imageStateDir, Policy: image.Policy{AllowBacking: o.allowBacking}})
	if err != nil {
		return imageOpenFailed(o, ops, stdin, stdout, stderr, e, start, signalled, err)
	}
	info := imageInfo(sess)
	rep, code := func() (seal.Report, int) {
		root, err := fs.OpenConfined(sess.Root)
		if err != nil {
			fmt.Fprintf(stderr, "sealprep: --image: cannot open the image's mounted root: %v\n", err)
			return seal.Report{}, seal.ExitProblem
		}
		defer root.Close()
		e.ctx = ctx
		return sealRoot(o, ops, root, info, stdin, stderr, e)
	}()
	if cerr := sess.Close(); cerr != nil {
		info.DetachError = cerr.Error()
		fmt.Fprintf(stderr, "sealprep: --image: unmount and detach: %v\n", cerr)
	} else {
		info.Detached = true
	}
	if code >= 0 {
		return code
	}
	rep.DurationMS = time.Since(start).Milliseconds()
	code = finish(o, e, rep, stdout, stderr)
	if s := signalled(); s != nil {
		fmt.Fprintf(stderr, "sealprep: interrupted by %v; the image is unmounted and detached, run again to finish\n", s)
		if code == seal.ExitOK {
			code = seal.ExitProblem
		}
	}
	if info.DetachError != "" && code == seal.ExitOK {
		code = seal.ExitProblem
	}
	return code
}

func imageInfo(s *image.Session) *seal.ImageInfo {
	in := &seal.ImageInfo{File: s.File, Format: s.Format, Method: s.Method, Backing: s.Chain.Backing(),
		Notes: s.Notes, Recovered: s.Recovered, Mounts: []seal.ImageMount{}}
	for _, m := range s.Mounts {
		in.Mounts = append(in.Mounts, seal.ImageMount{Path: m.Path, Dir: m.Dir, Device: m.Device, Source: m.Source,
			How: m.How, ReadOnly: m.ReadOnly, Partition: m.Partition, Volume: m.Volume, FSType: m.FSType, Label: m.Label, UUID: m.UUID})
	}
	return in
}

// trim runs FITRIM on every filesystem of the root: an image's mounts, or
// the block-device filesystems mounted at or below the root.
func trim(root *fs.Confined, img *seal.ImageInfo) []seal.TrimResult {
	var ts []image.TrimTarget
	if img != nil {
		for _, m := range img.Mounts {
			ts = append(ts, image.TrimTarget{Guest: m.Path, Dir: m.Dir})
		}
	} else {
		ts = image.RootTrimTargets(root.Dir())
	}
	var out []seal.TrimResult
	for _, r := range image.Trim(ts) {
		out = append(out, seal.TrimResult{Path: r.Guest, Bytes: r.Bytes, Error: r.Err})
	}
	return out
}

// inodesInUse is what a full relabel of dir's filesystem walks; 0 when
// the filesystem does not say (btrfs reports no inode counts).
func inodesInUse(dir string) uint64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || st.Files < st.Ffree {
		return 0
	}
	return st.Files - st.Ffree
}

package main

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"slices"
	"time"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
	"github.com/guestcheck/guestcheck/internal/shared/cli"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// checkConfigCommand is `guestcheck check-config`'s description.
func checkConfigCommand() *cli.Command {
	return &cli.Command{Name: "check-config", Summary: "validate a configuration file without running any check",
		Synopsis: []string{"[FILE]"}, Args: "FILE", Options: []cli.Option{helpOption},
		Description: "Read FILE (default " + config.DefaultPath + ") as guestcheck and guestcheck probe would and judge it against the checks this guestcheck has. Every mistake is found in one pass: the keys and their values, and the check IDs and finding codes the file names. Prints \"FILE: OK\" and exits 0 when it is valid; otherwise prints each problem on its own line (FILE:LINE: key.path: what is wrong) on stderr and exits 3. A valid file that wants an edit (a waiver past its expiry date) gets a note on stderr (FILE:LINE: note: ...), \"FILE: OK, with 1 note on stderr\" on stdout, and exit 2, as a run with warnings. The default file being absent is fine: the built-in defaults apply. The packages run it after an upgrade, to warn about an edited file the new version refuses.",
		Examples:    []cli.Example{{Command: "guestcheck check-config", Comment: "After editing " + config.DefaultPath + "."}}}
}

// runCheckConfig is `guestcheck check-config [FILE]`.
func runCheckConfig(cmd *cli.Command, args []string, stdout, stderr io.Writer, all []runner.Check) int {
	path, code := onlyArg(cmd, args, stdout, stderr, true)
	if code >= 0 {
		return code
	}
	explicit := path != ""
	if !explicit {
		path = config.DefaultPath
	}
	if _, err := os.Stat(path); !explicit && errors.Is(err, iofs.ErrNotExist) {
		fmt.Fprintf(stdout, "%s: OK (absent: the built-in defaults apply)\n", path)
		return report.ExitOK
	}
	cfg, probs := runner.InspectConfig(all, path, true)
	var notes []problem.Problem
	if cfg != nil {
		notes = cfg.Notes(time.Now())
	}
	// Mistakes and notes in one list, in line order: the file read once.
	said := slices.Concat([]problem.Problem(probs), notes)
	slices.SortStableFunc(said, func(a, b problem.Problem) int { return a.Line - b.Line })
	for _, p := range said {
		fmt.Fprintln(stderr, p)
	}
	switch {
	case len(probs) > 0:
		return report.ExitUsage
	case len(notes) > 0:
		// Valid, but not silent: 2 is the run's "warnings and no failure".
		fmt.Fprintf(stdout, "%s: OK, with %s on stderr\n", path, plural(len(notes), "note"))
		return report.ExitWarn
	}
	fmt.Fprintf(stdout, "%s: OK\n", path)
	return report.ExitOK
}

// plural is "1 note" or "2 notes".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

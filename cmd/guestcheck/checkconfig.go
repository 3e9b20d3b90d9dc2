package main

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"

	"github.com/guestcheck/guestcheck/internal/check"
	"github.com/guestcheck/guestcheck/internal/cli"
	"github.com/guestcheck/guestcheck/internal/config"
	"github.com/guestcheck/guestcheck/internal/report"
)

// checkConfigCommand is `guestcheck check-config`'s description.
func checkConfigCommand() *cli.Command {
	return &cli.Command{Name: "check-config", Summary: "validate a configuration file without running any check",
		Synopsis: []string{"[FILE]"}, Args: "FILE", Options: []cli.Option{helpOption},
		Description: "Read FILE (default " + config.DefaultPath + ") as guestcheck and guestcheck probe would and judge it against the checks this guestcheck has. Prints \"FILE: OK\" and exits 0 when it is valid; otherwise prints each problem on its own line (FILE:LINE: key.path: what is wrong) on stderr and exits 3. The default file being absent is fine: the built-in defaults apply. The packages run it after an upgrade, to warn about an edited file the new version refuses.",
		Examples:    []cli.Example{{Command: "guestcheck check-config", Comment: "After editing " + config.DefaultPath + "."}}}
}

// runCheckConfig is `guestcheck check-config [FILE]`.
func runCheckConfig(cmd *cli.Command, args []string, stdout, stderr io.Writer, all []check.Check) int {
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
	cfg, err := config.Load(path, true)
	if err == nil {
		err = check.Validate(all, cfg)
	}
	if err != nil {
		var probs config.Errors
		if !errors.As(err, &probs) {
			fmt.Fprintln(stderr, err)
			return report.ExitUsage
		}
		for _, p := range probs {
			fmt.Fprintln(stderr, p)
		}
		return report.ExitUsage
	}
	fmt.Fprintf(stdout, "%s: OK\n", path)
	return report.ExitOK
}

//go:build race

package main

// raceEnabled: the race detector multiplies memory and CPU, so the
// fleet's resource figures are only held to their bounds without it.
const raceEnabled = true

package envfile

import (
	"strings"
	"testing"
)

// TestShellIfcfg came from netcheck's TestParseIfcfg.
func TestShellIfcfg(t *testing.T) {
	in := "# Created by cloud-init\nBOOTPROTO=dhcp\nDEVICE=\"eth0\"\nHWADDR='52:54:00:12:34:56'\nNAME=\"System \\\"eth0\\\"\"\nONBOOT=yes # comment\nexport TYPE=Ethernet\nrm -rf /\nBROKEN=\"unterminated\n"
	vars, probs := Parse("/etc/sysconfig/network-scripts/ifcfg-eth0", []byte(in), Shell)
	for k, want := range map[string]string{"BOOTPROTO": "dhcp", "DEVICE": "eth0", "HWADDR": "52:54:00:12:34:56", "NAME": `System "eth0"`, "ONBOOT": "yes", "TYPE": "Ethernet"} {
		if vars[k].Value != want {
			t.Errorf("%s = %q, want %q", k, vars[k].Value, want)
		}
	}
	if vars["HWADDR"].Line != 4 {
		t.Errorf("HWADDR line %d", vars["HWADDR"].Line)
	}
	if len(probs) != 2 || probs[0].Line != 8 || probs[1].Line != 9 || !strings.Contains(probs[1].Msg, "unterminated quote") {
		t.Errorf("problems = %v", probs)
	}
}

// TestShellEnvFile came from guestagent's TestParseEnvFile: a file an
// init script sources.
func TestShellEnvFile(t *testing.T) {
	vars, probs := Parse("f", []byte("# c\nA=plain # comment\nexport B='x y'\nC=\"q \\\"d\\\" ${X}\"\nD=a\\\nb\nnot an assignment\nE=\n"), Shell)
	if len(probs) != 1 || probs[0].Line != 7 {
		t.Errorf("problems = %v", probs)
	}
	want := map[string]string{"A": "plain", "B": "x y", "C": `q "d" ${X}`, "D": "ab", "E": ""}
	for k, v := range want {
		if vars[k].Value != v {
			t.Errorf("%s = %q, want %q", k, vars[k].Value, v)
		}
	}
}

// TestSystemdEnvFile reads the same file as EnvironmentFile= does: no
// inline comments, no "export".
func TestSystemdEnvFile(t *testing.T) {
	vars, probs := Parse("f", []byte("# c\nA=plain # comment\nexport B='x y'\nC=\"q \\\"d\\\" ${X}\"\nD=a\\\nb\nnot an assignment\nE=\n"), Systemd)
	if len(probs) != 2 || probs[0].Line != 3 || !strings.Contains(probs[0].Msg, `"export B" is not a valid variable name`) || probs[1].Line != 7 {
		t.Errorf("problems = %v", probs)
	}
	want := map[string]string{"A": "plain # comment", "C": `q "d" ${X}`, "D": "ab", "E": ""}
	for k, v := range want {
		if vars[k].Value != v {
			t.Errorf("%s = %q, want %q", k, vars[k].Value, v)
		}
	}
	if _, ok := vars["B"]; ok || len(vars) != len(want) {
		t.Errorf("vars = %v", vars)
	}
	if vars["E"].Line != 8 || vars["D"].Line != 5 {
		t.Errorf("lines: %+v", vars)
	}
}

func TestDialects(t *testing.T) {
	for _, c := range []struct {
		name, in    string
		shell, sd   map[string]string
		shellP, sdP int // number of problems
	}{
		{name: "quotes join", in: `A="x"'y'z` + "\n",
			shell: map[string]string{"A": "xyz"}, sd: map[string]string{"A": "xyz"}},
		{name: "quote inside an unquoted value", in: "A=x'y z'\n",
			shell: map[string]string{"A": "xy z"}, sd: map[string]string{"A": "x'y z'"}},
		{name: "double-quote escapes", in: `A="\a\$\\"` + "\n",
			shell: map[string]string{"A": `\a$\`}, sd: map[string]string{"A": `\a$\`}},
		{name: "multi-line double quote", in: "A=\"1\n2\"\nB=3\n",
			shell: map[string]string{"A": "1\n2", "B": "3"}, sd: map[string]string{"A": "1\n2", "B": "3"}},
		{name: "two on a line", in: "A=1 B=2\n",
			shell: map[string]string{"A": "1", "B": "2"}, sd: map[string]string{"A": "1 B=2"}},
		{name: "prefix of a command", in: "A=1 true\n",
			shell: map[string]string{}, shellP: 1, sd: map[string]string{"A": "1 true"}},
		{name: "semicolons", in: "A=1; B=2\n",
			shell: map[string]string{"A": "1", "B": "2"}, sd: map[string]string{"A": "1; B=2"}},
		{name: "double semicolon", in: "A=1;;\nB=2\n",
			shell: map[string]string{}, shellP: 1, sd: map[string]string{"A": "1;;", "B": "2"}},
		{name: "semicolon comment", in: "; A=1\nB=2\n",
			shell: map[string]string{}, shellP: 1, sd: map[string]string{"B": "2"}},
		{name: "blanks around =", in: "A = 1\n  B=  2  \n",
			shell: map[string]string{}, shellP: 2, sd: map[string]string{"A": "1", "B": "2"}},
		{name: "comment continued by a backslash (systemd 254 and later)", in: "# x \\\nA=1\n",
			shell: map[string]string{"A": "1"}, sd: map[string]string{"A": "1"}},
		{name: "command substitution", in: "A=$(id)\n",
			shell: map[string]string{}, shellP: 1, sd: map[string]string{"A": "$(id)"}},
		{name: "unterminated single quote", in: "A='x\n",
			shell: map[string]string{}, shellP: 1, sd: map[string]string{"A": "x\n"}},
		{name: "NUL byte", in: "A=1\nB=\x00\n",
			shell: map[string]string{"A": "1"}, shellP: 1, sd: map[string]string{}, sdP: 1},
		{name: "invalid UTF-8 value", in: "A=1\nB=\xff\n",
			shell: map[string]string{"A": "1"}, shellP: 1, sd: map[string]string{}, sdP: 1},
		{name: "invalid UTF-8 in a comment", in: "#\xff\nA=1\n",
			shell: map[string]string{"A": "1"}, sd: map[string]string{"A": "1"}},
		{name: "digit first", in: "1A=x\n",
			shell: map[string]string{}, shellP: 1, sd: map[string]string{}, sdP: 1},
		{name: "no newline at the end", in: "A=1",
			shell: map[string]string{"A": "1"}, sd: map[string]string{"A": "1"}},
		{name: "key without =", in: "A\n",
			shell: map[string]string{}, shellP: 1, sd: map[string]string{}, sdP: 1},
		{name: "last wins", in: "A=1\nA=2\n",
			shell: map[string]string{"A": "2"}, sd: map[string]string{"A": "2"}},
	} {
		for _, d := range []struct {
			d     Dialect
			want  map[string]string
			probs int
		}{{Shell, c.shell, c.shellP}, {Systemd, c.sd, c.sdP}} {
			vars, probs := Parse("f", []byte(c.in), d.d)
			if len(probs) != d.probs {
				t.Errorf("%s (dialect %d): problems = %v", c.name, d.d, probs)
			}
			if len(vars) != len(d.want) {
				t.Errorf("%s (dialect %d): vars = %+v, want %v", c.name, d.d, vars, d.want)
				continue
			}
			for k, v := range d.want {
				if vars[k].Value != v {
					t.Errorf("%s (dialect %d): %s = %q, want %q", c.name, d.d, k, vars[k].Value, v)
				}
			}
		}
	}
}

// TestAssignments checks where each assignment is written, which is what
// sealprep cuts when it removes one.
func TestAssignments(t *testing.T) {
	in := "A=1 B='x y'; export C=\"2\n3\" # c\nD=4 true\nexport E F=5\n"
	as, probs := Assignments("f", []byte(in))
	if len(probs) != 1 || probs[0].Line != 3 {
		t.Errorf("problems = %v", probs)
	}
	type got struct{ name, word, cmd string }
	var gs []got
	for _, a := range as {
		gs = append(gs, got{a.Name, in[a.Start:a.End], in[a.CmdStart:a.CmdEnd]})
	}
	want := []got{
		{"A", "A=1", "A=1 B='x y';"},
		{"B", "B='x y'", "A=1 B='x y';"},
		{"C", "C=\"2\n3\"", "export C=\"2\n3\" "},
		{"F", "F=5", "export E F=5"},
	}
	if len(gs) != len(want) {
		t.Fatalf("assignments %q, want %q", gs, want)
	}
	for i := range want {
		if gs[i] != want[i] {
			t.Errorf("assignment %d = %q, want %q", i, gs[i], want[i])
		}
	}
	if as[2].Line != 1 || as[3].Line != 4 {
		t.Errorf("lines: %+v", as)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("DEVICE=eth0\nHWADDR=\"52:54:00:12:34:56\"\nNAME='x'\n"), true)
	f.Add([]byte("X=\"a\\\"\nY='\n"), false)
	f.Add([]byte("A=\"x\" # c\nexport B='y'\nC=a\\\nb\n"), true)
	f.Add([]byte("# c \\\n;x\nA = b\\\n c \n"), false)
	f.Add([]byte("A=1 B=2 C=3; export D=4 E\n"), true)
	f.Fuzz(func(t *testing.T, b []byte, shell bool) {
		d := Systemd
		if shell {
			d = Shell
		}
		vars, probs := Parse("f", b, d)
		n := strings.Count(string(b), "\n") + 1
		for _, p := range probs {
			if p.Line < 1 || p.Line > n || p.File != "f" {
				t.Fatalf("problem %q outside the %d-line input", p, n)
			}
		}
		for k, v := range vars {
			if !ValidName(k) || v.Line < 1 || v.Line > n {
				t.Fatalf("bad variable %q %+v", k, v)
			}
		}
		if !shell {
			return
		}
		as, _ := Assignments("f", b)
		var prev Assignment
		for _, a := range as {
			sameCmd := a.CmdStart == prev.CmdStart && prev.End > 0
			if a.Start < prev.End || !sameCmd && a.CmdStart < prev.CmdEnd || a.CmdStart > a.Start || a.Start >= a.End || a.End > a.CmdEnd || a.CmdEnd > len(b) {
				t.Fatalf("assignment %+v out of order or outside the input (after %+v)", a, prev)
			}
			if vars[a.Name].Line < a.Line {
				t.Fatalf("assignment %+v comes after the winning one %+v", a, vars[a.Name])
			}
			prev = a
		}
	})
}

//go:build unix

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDocumentedReplayCounts checks the session counts docs/CONFORMANCE.md
// gives for TestSubprocessReplaysVectors against the recorded sessions it
// replays: all of them, those of testdata/v2 and those of
// testdata/v2-more. A recorder run that adds sessions without the prose
// following fails here.
func TestDocumentedReplayCounts(t *testing.T) {
	count := func(dir string) int {
		files, err := filepath.Glob(filepath.Join("../../testdata", dir, "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %d sessions (%v)", dir, len(files), err)
		}
		return len(files)
	}
	v2, more := count("v2"), count("v2-more")
	b, err := os.ReadFile("../../docs/CONFORMANCE.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, c := range []struct {
		pattern string
		want    int
	}{
		{`each\s+of the ([\d,]+) sessions recorded from the released worker`, v2 + more},
		{"([\\d,]+) in\\s+`testdata/v2`", v2},
		{"([\\d,]+) more in `testdata/v2-more`", more},
	} {
		m := regexp.MustCompile(c.pattern).FindStringSubmatch(doc)
		if m == nil {
			t.Errorf("docs/CONFORMANCE.md: nothing matches %q (the count there should be %d)", c.pattern, c.want)
			continue
		}
		if n, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", "")); n != c.want {
			t.Errorf("docs/CONFORMANCE.md says %q; the count is %d", m[0], c.want)
		}
	}
}

// TestDocumentedFlagsExist checks that every flag the docs name for a
// command is one of that command's flags (as its -h lists them): the
// README's synopsis of each command, the flag table of docs/DEPLOY.md
// (montygo serve) and the worker-mode flags of docs/CONFORMANCE.md.
func TestDocumentedFlagsExist(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	flagRE := regexp.MustCompile("--([a-z][a-z0-9-]*)")
	named := map[string][]string{} // command -> flags the docs name
	for _, line := range strings.Split(string(readme), "\n") {
		rest, ok := strings.CutPrefix(line, "bin/montygo ")
		if !ok {
			continue
		}
		rest, _, _ = strings.Cut(rest, "#") // a comment is prose
		words := strings.Fields(rest)
		cmd := words[0]
		if cmd == "conform" {
			cmd += " " + words[1]
		}
		for _, m := range flagRE.FindAllStringSubmatch(rest, -1) {
			named[cmd] = append(named[cmd], m[1])
		}
	}
	deploy, err := os.ReadFile("../../docs/DEPLOY.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(deploy), "\n") {
		if first, ok := strings.CutPrefix(line, "| `--"); ok {
			cell, _, _ := strings.Cut("--"+first, " |")
			for _, m := range flagRE.FindAllStringSubmatch(cell, -1) {
				named["serve"] = append(named["serve"], m[1])
			}
		}
	}
	conf, err := os.ReadFile("../../docs/CONFORMANCE.md")
	if err != nil {
		t.Fatal(err)
	}
	if _, after, ok := strings.Cut(string(conf), "Worker mode flags:"); ok {
		para, _, _ := strings.Cut(after, "\n\n")
		for _, m := range flagRE.FindAllStringSubmatch(para, -1) {
			named["conform worker"] = append(named["conform worker"], m[1])
		}
	}
	for _, cmd := range []string{"run", "repl", "decode", "subprocess", "serve", "conform worker", "conform parent"} {
		if len(named[cmd]) == 0 && cmd != "repl" {
			t.Errorf("the docs name no flag of %s: is the synopsis or the table gone?", cmd)
		}
	}
	for cmd, flags := range named {
		out, errs, code := runCLI(t, "", append(strings.Fields(cmd), "-h")...)
		if code != 0 {
			t.Fatalf("montygo %s -h: exit %d, %s", cmd, code, errs)
		}
		for _, f := range flags {
			if cmd == "version" && f == "version" {
				continue // montygo --version, not a flag of version
			}
			if !regexp.MustCompile(`(?m)^  -` + regexp.QuoteMeta(f) + `( |$)`).MatchString(out) {
				t.Errorf("the docs name --%s for montygo %s, which has no such flag", f, cmd)
			}
		}
	}
}

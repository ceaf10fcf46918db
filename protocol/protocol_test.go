package protocol

import (
	"errors"
	"testing"
	"time"
)

func TestConstants(t *testing.T) {
	if Version != 4 || MinVersion != 4 || Version2 != 2 {
		t.Fatalf("versions: %d %d %d", Version, MinVersion, Version2)
	}
	if MaxFrameLen != 256<<20 {
		t.Fatalf("MaxFrameLen = %d", MaxFrameLen)
	}
	if DefaultMaxDecodeBytes != 4*MaxFrameLen {
		t.Fatalf("DefaultMaxDecodeBytes = %d", DefaultMaxDecodeBytes)
	}
	if DefaultPrintFlushInterval != 5*time.Millisecond || PrintFlushThreshold != 8192 {
		t.Fatal("print buffering constants")
	}
	if DefaultMaxRecursionDepth != 1000 || DefaultMaxSuspensions != 1000 {
		t.Fatal("default limits")
	}
	if FatalExitGrace != 100*time.Millisecond {
		t.Fatal("FatalExitGrace")
	}
}

func TestExitCode(t *testing.T) {
	cases := []struct {
		c    ExitCode
		n    int
		name string
	}{
		{ExitOK, 0, "ok"},
		{ExitStdoutBroken, 3, "stdout broken"},
		{ExitFatal, 4, "fatal"},
		{ExitOOM, 65, "out of memory"},
		{ExitProtocol, 76, "protocol error"},
		{ExitCode(2), 2, "exit status 2"},
		{ExitCode(-1), -1, "exit status -1"},
	}
	for _, c := range cases {
		if int(c.c) != c.n {
			t.Errorf("%v = %d, want %d", c.c, int(c.c), c.n)
		}
		if got := c.c.String(); got != c.name {
			t.Errorf("ExitCode(%d).String() = %q, want %q", c.n, got, c.name)
		}
	}
}

func TestVersionRange(t *testing.T) {
	r := VersionRange{2, 4}
	for v, want := range map[uint32]bool{0: false, 1: false, 2: true, 3: true, 4: true, 5: false} {
		if got := r.Contains(v); got != want {
			t.Errorf("Contains(%d) = %v", v, got)
		}
	}
	if s := r.String(); s != "2 to 4" {
		t.Errorf("String = %q", s)
	}
	if s := (VersionRange{4, 4}).String(); s != "4" {
		t.Errorf("String = %q", s)
	}
	if Supported() != (VersionRange{4, 4}) {
		t.Errorf("Supported = %v", Supported())
	}
	if !(VersionRange{5, 4}).Empty() || (VersionRange{4, 4}).Empty() {
		t.Error("Empty")
	}
}

func TestIntersect(t *testing.T) {
	cases := []struct {
		a, b, want VersionRange
		ok         bool
	}{
		{VersionRange{2, 4}, VersionRange{4, 4}, VersionRange{4, 4}, true},
		{VersionRange{2, 4}, VersionRange{3, 9}, VersionRange{3, 4}, true},
		{VersionRange{3, 9}, VersionRange{2, 4}, VersionRange{3, 4}, true},
		{VersionRange{2, 2}, VersionRange{4, 4}, VersionRange{4, 2}, false},
		{VersionRange{1, 10}, VersionRange{5, 3}, VersionRange{5, 3}, false},
		{VersionRange{0, 0}, VersionRange{0, 0}, VersionRange{0, 0}, true},
	}
	for _, c := range cases {
		got, ok := c.a.Intersect(c.b)
		if got != c.want || ok != c.ok {
			t.Errorf("%v ∩ %v = %v,%v; want %v,%v", c.a, c.b, got, ok, c.want, c.ok)
		}
	}
}

func TestCheckVersion(t *testing.T) {
	cases := []struct {
		v    uint32
		r    VersionRange
		want string // "" means accepted
	}{
		{4, VersionRange{4, 4}, ""},
		{3, VersionRange{2, 4}, ""},
		{0, VersionRange{4, 4}, "unsupported protocol version 0 (server supports protocol version 4, try updating to a newer client version)"},
		{3, VersionRange{4, 4}, "unsupported protocol version 3 (server supports protocol version 4, try updating to a newer client version)"},
		{5, VersionRange{4, 4}, "unsupported protocol version 5 (server supports protocol version 4, make sure you are using the correct client version)"},
		{1, VersionRange{2, 4}, "unsupported protocol version 1 (server supports protocol versions 2 to 4, try updating to a newer client version)"},
		{9, VersionRange{2, 4}, "unsupported protocol version 9 (server supports protocol versions 2 to 4, make sure you are using the correct client version)"},
		{0, VersionRange{2, 2}, "unsupported protocol version 0 (server supports protocol version 2, try updating to a newer client version)"},
		// Zero is refused even by a range that includes it.
		{0, VersionRange{0, 4}, "unsupported protocol version 0 (server supports protocol versions 0 to 4, try updating to a newer client version)"},
		{4294967295, VersionRange{4, 4}, "unsupported protocol version 4294967295 (server supports protocol version 4, make sure you are using the correct client version)"},
	}
	for _, c := range cases {
		err := CheckVersion(c.v, c.r)
		if c.want == "" {
			if err != nil {
				t.Errorf("CheckVersion(%d, %v) = %v, want nil", c.v, c.r, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("CheckVersion(%d, %v) = nil, want error", c.v, c.r)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("CheckVersion(%d, %v):\n got %q\nwant %q", c.v, c.r, err, c.want)
		}
		var uv *UnsupportedVersionError
		if !errors.As(err, &uv) || uv.Requested != c.v || uv.Supported != c.r {
			t.Errorf("CheckVersion(%d, %v) = %#v", c.v, c.r, err)
		}
		// Round trip through the parser, except for ranges the parser
		// deliberately refuses (starting at 0).
		if c.r.Min == 0 {
			continue
		}
		back, ok := ParseUnsupportedVersion(err.Error())
		if !ok || *back != *uv {
			t.Errorf("Parse(%q) = %v, %v", err.Error(), back, ok)
		}
	}
}

func TestParseUnsupportedVersion(t *testing.T) {
	good := []struct {
		msg string
		v   uint32
		r   VersionRange
	}{
		{"unsupported protocol version 0 (server supports protocol version 2, try updating to a newer client version)", 0, VersionRange{2, 2}},
		{"unsupported protocol version 5 (server supports protocol version 4, make sure you are using the correct client version)", 5, VersionRange{4, 4}},
		{"unsupported protocol version 1 (server supports protocol versions 2 to 4, try updating to a newer client version)", 1, VersionRange{2, 4}},
		{"unsupported protocol version 7 (server supports protocol versions 2 to 4, make sure you are using the correct client version)", 7, VersionRange{2, 4}},
	}
	for _, g := range good {
		e, ok := ParseUnsupportedVersion(g.msg)
		if !ok {
			t.Errorf("Parse(%q) failed", g.msg)
			continue
		}
		if e.Requested != g.v || e.Supported != g.r {
			t.Errorf("Parse(%q) = %+v", g.msg, *e)
		}
		if e.Error() != g.msg {
			t.Errorf("re-render %q != %q", e.Error(), g.msg)
		}
	}

	bad := []string{
		"",
		"unsupported protocol version",
		"unsupported protocol version 0",
		"protocol violation: request has no kind",
		// surrounding text / whitespace
		" unsupported protocol version 0 (server supports protocol version 2, try updating to a newer client version)",
		"unsupported protocol version 0 (server supports protocol version 2, try updating to a newer client version)\n",
		"fatal: unsupported protocol version 0 (server supports protocol version 2, try updating to a newer client version)",
		// non-canonical numbers
		"unsupported protocol version 00 (server supports protocol version 2, try updating to a newer client version)",
		"unsupported protocol version +1 (server supports protocol version 2, try updating to a newer client version)",
		"unsupported protocol version 1 (server supports protocol version 02, try updating to a newer client version)",
		"unsupported protocol version 4294967296 (server supports protocol version 2, make sure you are using the correct client version)",
		// nonsense ranges
		"unsupported protocol version 1 (server supports protocol versions 4 to 2, try updating to a newer client version)",
		"unsupported protocol version 5 (server supports protocol versions 4 to 4, make sure you are using the correct client version)",
		"unsupported protocol version 0 (server supports protocol version 0, try updating to a newer client version)",
		"unsupported protocol version 0 (server supports protocol versions 0 to 4, try updating to a newer client version)",
		// wrong tip for the version
		"unsupported protocol version 5 (server supports protocol version 4, try updating to a newer client version)",
		"unsupported protocol version 0 (server supports protocol version 4, make sure you are using the correct client version)",
		// version actually supported
		"unsupported protocol version 4 (server supports protocol version 4, make sure you are using the correct client version)",
		"unsupported protocol version 3 (server supports protocol versions 2 to 4, make sure you are using the correct client version)",
		// mangled punctuation
		"unsupported protocol version 0 (server supports protocol version 2 try updating to a newer client version)",
		"unsupported protocol version 0 (server supports protocol version 2, try updating to a newer client version",
		"unsupported protocol version 0 server supports protocol version 2, try updating to a newer client version)",
		"unsupported protocol version 1 (server supports protocol versions 2-4, try updating to a newer client version)",
	}
	for _, m := range bad {
		if e, ok := ParseUnsupportedVersion(m); ok {
			t.Errorf("Parse(%q) = %+v, want failure", m, *e)
		}
	}
}

func FuzzParseUnsupportedVersion(f *testing.F) {
	f.Add("unsupported protocol version 0 (server supports protocol version 2, try updating to a newer client version)")
	f.Add("unsupported protocol version 9 (server supports protocol versions 2 to 4, make sure you are using the correct client version)")
	f.Add("unsupported protocol version 4 (server supports protocol version 4, make sure you are using the correct client version)")
	f.Add("")
	f.Add("unsupported protocol version 4 (server supports protocol versions 9 to 3, make sure you are using the correct client version)")
	f.Fuzz(func(t *testing.T, msg string) {
		if u, ok := ParseUnusableRange(msg); ok {
			if u.Range.Usable() || u.Message != msg {
				t.Fatalf("usable range reported unusable: %+v", *u)
			}
			if _, ok := ParseUnsupportedVersion(msg); ok {
				t.Fatalf("%q parses both as usable and as unusable", msg)
			}
		}
		e, ok := ParseUnsupportedVersion(msg)
		if !ok {
			if e != nil {
				t.Fatalf("non-nil error on failure: %+v", e)
			}
			return
		}
		if e.Supported.Min == 0 || e.Supported.Empty() {
			t.Fatalf("nonsense range accepted: %+v", *e)
		}
		if CheckVersion(e.Requested, e.Supported) == nil {
			t.Fatalf("parsed a version the range accepts: %+v", *e)
		}
		text := e.Error()
		if text != msg {
			t.Fatalf("re-render %q != input %q", text, msg)
		}
		again, ok := ParseUnsupportedVersion(text)
		if !ok || *again != *e {
			t.Fatalf("re-parse of %q = %v, %v; want %+v", text, again, ok, *e)
		}
	})
}

func TestParseUnusableRange(t *testing.T) {
	for _, c := range []struct {
		msg  string
		v    uint32
		r    VersionRange
		text string
	}{
		{"unsupported protocol version 4 (server supports protocol versions 9 to 3, make sure you are using the correct client version)",
			4, VersionRange{9, 3}, "protocol: refusal of version 4 advertises the unusable version range 9 to 3 (it is empty)"},
		{"unsupported protocol version 2 (server supports protocol versions 0 to 0, make sure you are using the correct client version)",
			2, VersionRange{0, 0}, "protocol: refusal of version 2 advertises the unusable version range 0 to 0 (version 0 means undeclared)"},
		{"unsupported protocol version 0 (server supports protocol version 0, try updating to a newer client version)",
			0, VersionRange{0, 0}, "protocol: refusal of version 0 advertises the unusable version range 0 to 0 (version 0 means undeclared)"},
		{"unsupported protocol version 1 (server supports protocol versions 4 to 2, try updating to a newer client version)",
			1, VersionRange{4, 2}, "protocol: refusal of version 1 advertises the unusable version range 4 to 2 (it is empty)"},
	} {
		u, ok := ParseUnusableRange(c.msg)
		if !ok || u.Requested != c.v || u.Range != c.r || u.Message != c.msg || u.Error() != c.text {
			t.Errorf("ParseUnusableRange(%q) = %+v, %v", c.msg, u, ok)
		}
		if _, ok := ParseUnsupportedVersion(c.msg); ok {
			t.Errorf("ParseUnsupportedVersion(%q) accepted an unusable range", c.msg)
		}
	}
	for _, m := range []string{
		"",
		// usable ranges, including the valid refusals
		"unsupported protocol version 5 (server supports protocol version 4, make sure you are using the correct client version)",
		"unsupported protocol version 1 (server supports protocol versions 2 to 4, try updating to a newer client version)",
		"unsupported protocol version 5 (server supports protocol versions 4 to 4, make sure you are using the correct client version)",
		"unsupported protocol version 5 (server supports protocol versions 0 to 4, make sure you are using the correct client version)",
		// not the refusal's form
		"unsupported protocol version 4 (server supports protocol versions 9 to 3)",
		"unsupported protocol version 4 (server supports protocol versions 9 to 3, make sure you are using the correct client version) ",
		"unsupported protocol version 4 (server supports protocol versions 09 to 3, make sure you are using the correct client version)",
		"unsupported protocol version 4 (server supports protocol versions 9-3, make sure you are using the correct client version)",
	} {
		if u, ok := ParseUnusableRange(m); ok {
			t.Errorf("ParseUnusableRange(%q) = %+v, want failure", m, *u)
		}
	}
	if !(VersionRange{1, 1}).Usable() || !(VersionRange{0, 3}).Usable() ||
		(VersionRange{3, 1}).Usable() || (VersionRange{}).Usable() {
		t.Error("Usable")
	}
}

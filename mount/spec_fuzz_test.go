package mount

import "testing"

// FuzzParseSpec: a mount flag that parses renders (Mount.String) to a
// flag that parses to the same mount.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"/srv/data::/data", "h::/x::/v", "h::ro::/v::RW", "a::b::/c/../d/::overlay", "h::::/v", "::/v", "h::v", "h::/v::xx"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseSpec(s)
		if err != nil {
			return
		}
		again, err := ParseSpec(m.String())
		if err != nil || again != m {
			t.Fatalf("%q parses to %+v, whose spelling %q parses to %+v, %v", s, m, m.String(), again, err)
		}
	})
}

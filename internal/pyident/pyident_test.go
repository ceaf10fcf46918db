package pyident

import "testing"

func TestName(t *testing.T) {
	for s, want := range map[string]bool{
		"x": true, "_": true, "match": true, "case": true, "type": true, "café": true,
		"": false, "1x": false, "if": false, "None": false, "await": false, "a b": false, "price€": false,
	} {
		if got := Name(s); got != want {
			t.Errorf("Name(%q) = %v, want %v", s, got, want)
		}
	}
}

package registry

import (
	"slices"
	"testing"
)

func TestAddGetDuplicate(t *testing.T) {
	saved := codecs
	defer func() { codecs = saved }()
	codecs = map[uint32]any{}
	Add(7, "seven")
	if c, ok := Get(7); !ok || c != "seven" {
		t.Fatalf("Get(7) = %v, %v", c, ok)
	}
	if _, ok := Get(8); ok {
		t.Fatal("Get(8) found a codec that was never added")
	}
	if got := Versions(); !slices.Equal(got, []uint32{7}) {
		t.Fatalf("Versions() = %v", got)
	}
	defer func() {
		if r := recover(); r != "codec: version 7 registered twice" {
			t.Fatalf("second Add: recovered %v", r)
		}
	}()
	Add(7, "again")
}

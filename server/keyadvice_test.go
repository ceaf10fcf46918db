package server

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestShortDumpKeySaysWhatItIsAndHowToMakeOne: New refused a missing or
// short DumpKey with "0 bytes, want at least 16", which left a first user
// to find out what the key is for and where one comes from. The error
// (still a *ConfigError for the field) now says it signs the dumps, that
// it is random bytes from crypto/rand, and how montygo serve takes it.
func TestShortDumpKeySaysWhatItIsAndHowToMakeOne(t *testing.T) {
	key := []byte("0123456789abcdef")
	for _, c := range []struct {
		field string
		err   func() error
	}{
		{"DumpKey", func() error { _, err := New(context.Background(), Config{}); return err }},
		{"DumpKey", func() error { _, err := New(context.Background(), Config{DumpKey: []byte("short")}); return err }},
		{"DumpKeyPrevious", func() error { _, err := NewSigner(key, []byte("old")); return err }},
	} {
		err := c.err()
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != c.field {
			t.Fatalf("%v, want a *ConfigError for %s", err, c.field)
		}
		for _, want := range []string{"at least 16", "sign", "crypto/rand", "--dump-key", "MONTY_SERVER_DUMP_KEY"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %q does not say %q", c.field, err, want)
			}
		}
		if strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("%q is more than one line", err)
		}
	}
}

package codec

import (
	"errors"
	"testing"
)

// A caller's zero error values describe themselves instead of panicking in
// Error (a zero DecodeError dereferenced its nil cause), and still match
// their sentinels.
func TestZeroErrorsDescribeThemselves(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&DecodeError{}, "failed to decode Protobuf message"},
		{&DecodeError{Structural: true}, "failed to decode Protobuf message"},
		{&DecodeError{Path: []string{"ChildEvent.kind"}}, "failed to decode Protobuf message: ChildEvent.kind"},
		{&InputError{}, `input "" has no value`},
		{&EncodeError{}, "codec: the message cannot be encoded"},
		{&UnsupportedError{}, " cannot be expressed in protocol 0"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("%T zero: %q, want %q", c.err, got, c.want)
		}
	}
	if !errors.Is(&DecodeError{}, ErrMalformed) {
		t.Error("a zero DecodeError does not match ErrMalformed")
	}
}

//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// FuzzDecode runs montygo decode on arbitrary standard input, at each
// protocol, from either side, framed or as hex lines. It renders every
// message it decodes as one JSON line, and ends with status 0 at the end
// of the stream or 1 with the message's error on standard error; nothing
// else (no panic, no failure to render a decoded message).
//
// Input: a byte choosing the protocol (5, 4, 2), the side and the hex
// mode, then the stream.
func FuzzDecode(f *testing.F) {
	for i, name := range []string{"print_before_suspension", "extcall_empty_result", "error_chained", "oscall_datetime_now_tz_not_handled", "cycle_instance", "input_bigint_small_value"} {
		v := loadVector(f, name)
		f.Add(append([]byte{byte(2 << 2)}, framed(f, v.Requests)...))
		f.Add(append([]byte{byte(2<<2 | 1)}, framed(f, v.Responses)...))
		f.Add(append([]byte{byte(2<<2 | 2 | i&1)}, strings.Join(v.Responses, "\n")...))
	}
	f.Add([]byte{4<<2 | 1, 3, 0, 0, 0, 0x52, 0x01, 0x00})
	f.Add([]byte{5<<2 | 3, '#', '\n', '0', 'a', '0', '0'})
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		proto := []string{"5", "4", "2"}[int(in[0]>>2)%3]
		args := []string{"--protocol", proto, "--max-decode-bytes", fmt.Sprint(1 << 20)}
		if in[0]&1 == 0 {
			args = append(args, "--from", "parent")
		}
		if in[0]&2 != 0 {
			args = append(args, "--hex")
		}
		var out, errb bytes.Buffer
		err := decodeCmd(context.Background(), args, bytes.NewReader(in[1:]), &out, &errb)
		var ee exitError
		switch {
		case err == nil:
			if errb.Len() != 0 {
				t.Fatalf("status 0 with %q on standard error", errb.String())
			}
		case errors.As(err, &ee) && ee.code == 1 && ee.err == nil:
			if !strings.HasPrefix(errb.String(), "montygo decode: message ") {
				t.Fatalf("status 1 with %q on standard error", errb.String())
			}
		default:
			t.Fatalf("%v (%q)", err, errb.String())
		}
		for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if line != "" && !json.Valid([]byte(line)) {
				t.Fatalf("output line is not JSON: %q", line)
			}
		}
	})
}

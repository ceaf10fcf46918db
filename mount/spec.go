package mount

import (
	"fmt"
	"strings"
)

// ParseMode parses a mode's spec spelling: "ro", "rw" or "overlay"
// (case-insensitive).
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(s) {
	case "ro":
		return ReadOnly, nil
	case "rw":
		return ReadWrite, nil
	case "overlay":
		return Overlay, nil
	}
	return 0, fmt.Errorf("unknown mount mode %q (want ro, rw or overlay)", s)
}

// ParseSpec parses the CLI mount flag HOST::VIRTUAL[::MODE], where MODE is
// ro (the default), rw or overlay. VIRTUAL must be absolute. The flag is
// cut from the right, at the last "::": that field is the mode unless it
// is absolute (VIRTUAL starts with "/" and MODE never does), and the field
// before the last "::" that remains is VIRTUAL. So a HOST that itself
// contains "::" is still parsed, and so is a HOST or a VIRTUAL that ends
// in ':' (cut from the left, "/v:::ro" would read as "/v" and ":ro").
// The limits are left 0 (the defaults); the host directory is not checked
// here ([New] checks it).
func ParseSpec(s string) (Mount, error) {
	rest, last, ok := cutLast(s)
	if !ok {
		return Mount{}, fmt.Errorf("mount spec %q: want HOST::VIRTUAL[::ro|rw|overlay]", s)
	}
	mode := ReadOnly
	host, virtual := rest, last
	if !strings.HasPrefix(last, "/") {
		if host, virtual, ok = cutLast(rest); !ok {
			return Mount{}, fmt.Errorf("mount spec %q: virtual path %q is not absolute", s, last)
		}
		var err error
		if mode, err = ParseMode(last); err != nil {
			return Mount{}, fmt.Errorf("mount spec %q: %w", s, err)
		}
	}
	if host == "" {
		return Mount{}, fmt.Errorf("mount spec %q: empty host directory", s)
	}
	vp, err := checkVirtualMountPath(virtual)
	if err != nil {
		return Mount{}, fmt.Errorf("mount spec %q: %w", s, err)
	}
	return Mount{HostDir: host, VirtualPath: vp, Mode: mode}, nil
}

// cutLast cuts s around its last "::", reporting false (and s as after)
// when there is none.
func cutLast(s string) (before, after string, found bool) {
	i := strings.LastIndex(s, "::")
	if i < 0 {
		return "", s, false
	}
	return s[:i], s[i+2:], true
}

// String renders m in ParseSpec's syntax.
func (m Mount) String() string {
	return m.HostDir + "::" + m.VirtualPath + "::" + m.Mode.String()
}

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
// ro (the default), rw or overlay. VIRTUAL must be absolute. Because
// VIRTUAL starts with "/" and MODE never does, a HOST that itself contains
// "::" is still parsed: the last "::"-separated field is the mode unless it
// is absolute, and the field before the mode (or the last one) is VIRTUAL.
// The limits are left 0 (the defaults); the host directory is not checked
// here ([New] checks it).
func ParseSpec(s string) (Mount, error) {
	parts := strings.Split(s, "::")
	if len(parts) < 2 {
		return Mount{}, fmt.Errorf("mount spec %q: want HOST::VIRTUAL[::ro|rw|overlay]", s)
	}
	mode := ReadOnly
	if last := parts[len(parts)-1]; !strings.HasPrefix(last, "/") {
		if len(parts) < 3 {
			return Mount{}, fmt.Errorf("mount spec %q: virtual path %q is not absolute", s, last)
		}
		var err error
		if mode, err = ParseMode(last); err != nil {
			return Mount{}, fmt.Errorf("mount spec %q: %w", s, err)
		}
		parts = parts[:len(parts)-1]
	}
	virtual := parts[len(parts)-1]
	host := strings.Join(parts[:len(parts)-1], "::")
	if host == "" {
		return Mount{}, fmt.Errorf("mount spec %q: empty host directory", s)
	}
	vp, err := checkVirtualMountPath(virtual)
	if err != nil {
		return Mount{}, fmt.Errorf("mount spec %q: %w", s, err)
	}
	return Mount{HostDir: host, VirtualPath: vp, Mode: mode}, nil
}

// String renders m in ParseSpec's syntax.
func (m Mount) String() string {
	return m.HostDir + "::" + m.VirtualPath + "::" + m.Mode.String()
}

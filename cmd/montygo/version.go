package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"runtime/debug"
	"strings"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/worker"
)

func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

func versionCmd(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	fmt.Fprintf(stdout, "montygo %s (github.com/gomonty/monty)\n", moduleVersion())
	fmt.Fprintf(stdout, "protocol versions: %v (current %d)\n", codec.Versions(), protocol.Version)
	bin, err := worker.ResolveBinary("")
	if err != nil {
		fmt.Fprintf(stdout, "worker: not found (%v)\n", err)
		return nil
	}
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	v := strings.TrimSpace(string(out))
	if err != nil || v == "" {
		v = "unknown version"
	}
	fmt.Fprintf(stdout, "worker: %s (%s)\n", v, bin)
	return nil
}

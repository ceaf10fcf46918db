package worker

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// EnvBinary names the environment variable that selects the worker binary
// when Config.Binary is empty.
const EnvBinary = "MONTY_BIN"

// EnvInstallDir names the environment variable the install script honours
// for its destination; ResolveBinary looks for bin/monty below it.
const EnvInstallDir = "MONTY_INSTALL_DIR"

// installSuffix is where scripts/install-worker.sh puts the worker,
// relative to the project root.
var installSuffix = filepath.Join(".monty", "bin", "monty")

// ErrBinaryNotFound is matched (errors.Is) by every [*BinaryNotFoundError].
var ErrBinaryNotFound = errors.New("monty worker binary not found")

// BinaryNotFoundError reports that no worker binary could be found.
//
// It is not modified after it is returned; it is safe to read concurrently.
type BinaryNotFoundError struct {
	// Tried lists every candidate looked at, in order, with the reason it
	// was rejected. A binary the caller named is listed as "PATH: reason",
	// one $MONTY_BIN named as "$MONTY_BIN PATH: reason".
	Tried []string
	// Named is the binary that was named rather than searched for, when
	// it could not be used: ResolveBinary's explicit argument (which
	// [Start] passes from Config.Binary), or else $MONTY_BIN's value.
	// ResolveBinary never searches past a named binary, so Tried then
	// holds that one candidate alone. Empty after a search.
	Named string
	// FromEnv reports that Named is $MONTY_BIN's value.
	FromEnv bool
	// Err is why Named could not be used (from the file system or the
	// PATH lookup); nil after a search.
	Err error
}

// Error lists the candidates that were tried and says how to name a
// worker, or install one where the search looks.
func (e *BinaryNotFoundError) Error() string {
	return ErrBinaryNotFound.Error() + " (tried: " + strings.Join(e.Tried, "; ") +
		"); name a monty worker with worker.Config.Binary (the Worker field of pool.Config, server.Config, relay.Config and " +
		"session.ProcessLauncher) or $" + EnvBinary + ", or install the released one with gomonty's " +
		"scripts/install-worker.sh (into .monty/bin/monty, or $" + EnvInstallDir + "/bin/monty)"
}

// Is reports whether target is ErrBinaryNotFound.
func (e *BinaryNotFoundError) Is(target error) bool { return target == ErrBinaryNotFound }

// Unwrap returns Err, so that errors.Is sees why a named binary could not
// be used (fs.ErrNotExist, fs.ErrPermission, exec.ErrNotFound).
func (e *BinaryNotFoundError) Unwrap() error { return e.Err }

// ResolveBinary finds the worker binary. The candidates, first match wins:
//
//  1. explicit, when non-empty (a bare name is looked up in PATH);
//  2. $MONTY_BIN;
//  3. $MONTY_INSTALL_DIR/bin/monty;
//  4. .monty/bin/monty in the working directory or any parent of it;
//  5. .monty/bin/monty next to the running executable or in any parent of
//     its directory;
//  6. monty in PATH.
//
// When explicit or $MONTY_BIN is set but unusable, ResolveBinary fails
// instead of falling back, so a misconfiguration is not silently papered
// over. The result is an absolute path. The error is a
// [*BinaryNotFoundError].
func ResolveBinary(explicit string) (string, error) {
	var tried []string
	if explicit != "" {
		p, err := usable(explicit)
		if err == nil {
			return p, nil
		}
		return "", &BinaryNotFoundError{Tried: []string{explicit + ": " + err.Error()}, Named: explicit, Err: err}
	}
	if env := os.Getenv(EnvBinary); env != "" {
		p, err := usable(env)
		if err == nil {
			return p, nil
		}
		return "", &BinaryNotFoundError{Tried: []string{"$" + EnvBinary + " " + env + ": " + err.Error()}, Named: env, FromEnv: true, Err: err}
	}
	if dir := os.Getenv(EnvInstallDir); dir != "" {
		c := filepath.Join(dir, "bin", "monty")
		if p, err := usable(c); err == nil {
			return p, nil
		}
		tried = append(tried, c)
	}
	// The executable's directory is only worked out if the working
	// directory has no install: resolving it costs a readlink and an lstat
	// per path element, on every start.
	searched := ""
	for _, dir := range [...]func() (string, bool){workDir, exeDir} {
		start, ok := dir()
		if !ok || start == searched {
			// The executable in the working directory: searched already.
			continue
		}
		searched = start
		if p, ok := walkUp(start); ok {
			return p, nil
		}
		tried = append(tried, filepath.Join(start, installSuffix)+" and its parents")
	}
	if p, err := exec.LookPath("monty"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs, nil
		}
		return p, nil
	}
	tried = append(tried, "monty in $PATH")
	return "", &BinaryNotFoundError{Tried: tried}
}

func workDir() (string, bool) {
	wd, err := os.Getwd()
	return wd, err == nil
}

func exeDir() (string, bool) {
	exe, err := os.Executable()
	if err != nil {
		return "", false
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return filepath.Dir(exe), true
}

// walkUp looks for .monty/bin/monty in dir and each of its parents.
func walkUp(dir string) (string, bool) {
	for {
		if p, err := usable(filepath.Join(dir, installSuffix)); err == nil {
			return p, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// usable returns the absolute path of an executable regular file. A name
// without a separator is looked up in PATH.
func usable(p string) (string, error) {
	named := p
	if !strings.ContainsRune(p, filepath.Separator) {
		lp, err := exec.LookPath(p)
		if err != nil {
			return "", err
		}
		p = lp
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == named {
			return "", pathCause{pe}
		}
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", errors.New("not a regular file")
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return "", fs.ErrPermission
	}
	return abs, nil
}

// pathCause is an *fs.PathError about the path the error message names
// already ("tried: PATH: ..."): its text is only the cause, so that the
// path is not said twice; it unwraps to the *fs.PathError.
type pathCause struct{ pe *fs.PathError }

func (c pathCause) Error() string { return c.pe.Err.Error() }
func (c pathCause) Unwrap() error { return c.pe }

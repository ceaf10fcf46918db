//go:build unix

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gomonty/monty/protocol"
	"github.com/peterh/liner"
)

// lineReader reads the REPL's input lines. readLine is called from one
// goroutine at a time.
type lineReader interface {
	// readLine shows prompt (with suggestion as editable text, where the
	// reader can edit) and returns one line without its newline. It
	// returns errPromptAborted for Ctrl-C at the prompt and io.EOF at the
	// end of the input.
	readLine(prompt, suggestion string) (string, error)
	// remember records a complete input (its lines) in the history.
	remember(lines []string)
	// close restores the terminal and saves the history.
	close()
}

var errPromptAborted = errors.New("prompt aborted")

// plainReader reads lines from a pipe or file: no editing, no history.
type plainReader struct {
	br  *bufio.Reader
	out io.Writer
}

// maxInputLen bounds a line, and the lines of one input, that the REPL
// reads: what one Feed frame can carry, as for run's program. A variable
// for the tests.
var maxInputLen = protocol.MaxFrameLen

// errInputTooLong reports a line or a block over maxInputLen; the REPL
// drops it and carries on.
var errInputTooLong = errors.New("input too long")

func (p *plainReader) readLine(prompt, _ string) (string, error) {
	fmt.Fprint(p.out, prompt)
	var line []byte
	for {
		chunk, err := p.br.ReadSlice('\n')
		if len(line)+len(chunk) > maxInputLen {
			// Skip the rest of the line without keeping it (an endless
			// one, /dev/zero, is read on in bounded memory).
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = p.br.ReadSlice('\n')
			}
			if err != nil && err != io.EOF {
				return "", err
			}
			return "", errInputTooLong
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(line) > 0 && err == io.EOF {
			err = nil
		}
		return strings.TrimRight(string(line), "\r\n"), err
	}
}

func (p *plainReader) remember([]string) {}
func (p *plainReader) close()            {}

// maxBlocks bounds the multi-line blocks kept for recall in a session.
const maxBlocks = 200

// editReader edits lines in a terminal with github.com/peterh/liner:
// arrows, Home/End, Ctrl-A/E/K/U/W/Y, Ctrl-R reverse search, Up/Down
// through the history (prefix-matching what is already typed). The
// history is the session's plus the file at historyPath, saved after
// every input. A multi-line block is recalled whole, line by line: once
// the lines typed so far begin an earlier block, each continuation prompt
// offers that block's next line, to accept with Enter or edit.
type editReader struct {
	st     *liner.State
	path   string // history file; empty when there is none
	blocks [][]string
	// cands are the blocks (oldest first) whose first typedLen lines
	// are the lines typed so far in the current input (see suggest).
	cands    [][]string
	typedLen int
	// compared counts the line comparisons suggest made (for tests).
	compared int
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// newLineReader returns an editing reader when stdin and stdout are the
// process's own terminal, and otherwise a plain one that writes its
// prompts to prompts.
func newLineReader(stdin io.Reader, stdout, prompts io.Writer) lineReader {
	if stdin != io.Reader(os.Stdin) || stdout != io.Writer(os.Stdout) ||
		!isTerminal(os.Stdin) || !isTerminal(os.Stdout) || !liner.TerminalSupported() {
		return &plainReader{br: bufio.NewReader(stdin), out: prompts}
	}
	e := &editReader{st: liner.NewLiner()}
	e.st.SetCtrlCAborts(true)
	if p, err := historyPath(); err == nil {
		e.path = p
		if f, err := os.Open(p); err == nil {
			// A damaged file (an over-long line) keeps what was read.
			_, _ = e.st.ReadHistory(f)
			f.Close()
		}
	}
	return e
}

// historyPath is $XDG_STATE_HOME/montygo/history, or
// ~/.local/state/montygo/history when XDG_STATE_HOME is unset or not an
// absolute path (as the XDG base directory specification asks).
func historyPath() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "montygo", "history"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state", "montygo", "history"), nil
}

func (e *editReader) readLine(prompt, suggestion string) (string, error) {
	line, err := e.st.PromptWithSuggestion(prompt, suggestion, -1)
	if errors.Is(err, liner.ErrPromptAborted) {
		return "", errPromptAborted
	}
	return line, err
}

func (e *editReader) remember(lines []string) {
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			e.st.AppendHistory(l)
		}
	}
	if body := trimBlankTail(lines); len(body) > 1 {
		e.blocks = append(e.blocks, slices.Clone(body))
		if len(e.blocks) > maxBlocks {
			e.blocks = e.blocks[1:]
		}
	}
	e.typedLen = 0 // the next input's suggestions start afresh
	e.save()
}

// suggest returns the line that followed typed in the most recent block
// that typed begins, or "". The REPL calls it at each continuation
// prompt, typed one line longer each time (or a new block, which is not
// longer than the last): the blocks that still begin the input are kept
// between calls, so each typed line is compared once per block, and
// re-pasting a block of n lines costs O(n) comparisons, not O(n²).
func (e *editReader) suggest(typed []string) string {
	if e.typedLen == 0 || len(typed) <= e.typedLen {
		// A new block (or the first): every block is a candidate.
		e.cands = append(e.cands[:0], e.blocks...)
		e.typedLen = 0
	}
	for ; e.typedLen < len(typed); e.typedLen++ {
		k := e.typedLen
		keep := e.cands[:0]
		for _, b := range e.cands {
			e.compared++
			// A block with no line after typed's next can never offer one.
			if len(b) > k+1 && b[k] == typed[k] {
				keep = append(keep, b)
			}
		}
		clear(e.cands[len(keep):])
		e.cands = keep
	}
	if len(e.cands) == 0 {
		return ""
	}
	return e.cands[len(e.cands)-1][len(typed)]
}

// save writes the history file through a temporary file, so that a
// crash never leaves it half written. Failures are ignored: history is a
// convenience.
func (e *editReader) save() {
	if e.path == "" {
		return
	}
	dir := filepath.Dir(e.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	f, err := os.CreateTemp(dir, ".history-*")
	if err != nil {
		return
	}
	_, werr := e.st.WriteHistory(f)
	if cerr := f.Close(); werr != nil || cerr != nil {
		os.Remove(f.Name())
		return
	}
	if err := os.Rename(f.Name(), e.path); err != nil {
		os.Remove(f.Name())
	}
}

func (e *editReader) close() {
	e.save()
	e.st.Close()
}

func trimBlankTail(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

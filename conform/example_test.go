//go:build unix

package conform_test

import (
	"context"
	"fmt"
	"regexp"

	"github.com/gomonty/monty/conform"
)

// ExampleRun checks two rules of the contract against the released worker
// (found through $MONTY_BIN or .monty/bin/monty) at protocol 2. The report
// lists the rules in catalog order.
func ExampleRun() {
	rep, err := conform.Run(context.Background(), conform.Target{}, conform.Options{
		Protocol: 2,
		Match:    regexp.MustCompile(`^(resume\.call-id-mismatch|print\.flushed-before-suspension)$`),
	})
	if err != nil {
		panic(err)
	}
	for _, r := range rep.Rules {
		fmt.Println(r.Status, r.ID)
	}
	fmt.Printf("%d pass, %d fail\n", rep.Summary.Pass, rep.Summary.Fail)
	// Output:
	// pass resume.call-id-mismatch
	// pass print.flushed-before-suspension
	// 2 pass, 0 fail
}

// Command panicgen is a kumo generator that panics, for tests: its stack trace
// must reach the run log.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "panicgen: reading the request")
	var sizes map[string]int
	sizes["cache"] = 1 // assignment to entry in nil map
}

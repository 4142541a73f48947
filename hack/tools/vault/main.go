// Command vault is HashiCorp Vault's CLI and server, built from the Go module
// proxy for kumo's secret-store tests (internal/vaulttest runs it in dev mode on
// loopback). Its main is Vault's own: the command package's Run.
package main

import (
	"os"

	"github.com/hashicorp/vault/command"
)

func main() {
	os.Exit(command.Run(os.Args[1:]))
}
